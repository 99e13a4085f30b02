//! Reading request bodies under limits that hold whatever clients do: one body is at most
//! `--max-body-bytes` (a body over it is still drained, up to a bound, so that the client reads a
//! well-formed 413 instead of a reset connection), it must arrive whole within `--body-timeout`
//! (a client trickling its body holds a connection no longer), and the bytes buffered by all
//! requests at once stay within `--max-buffered-bytes` (a flood of maximum-size bodies waits for
//! room, within the same deadline, instead of growing memory without bound).

use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use futures::{Stream, StreamExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Bodies beyond this are answered before being drained (the connection then closes).
const DRAIN_CAP: u64 = 64 << 20;

/// A body's buffer is allocated up to this size from its `Content-Length`, and grows with what
/// arrives beyond.
const INITIAL_CAPACITY: u64 = 256 << 10;

/// The buffered-bytes budget is counted in KiB.
const UNIT: u64 = 1024;

/// What came in.
#[derive(Debug)]
pub enum Body {
    Complete(Bytes),
    TooLarge,
    Failed(String),
    /// The body did not arrive whole within the deadline.
    TimedOut(Duration),
    /// The body could not be buffered within the deadline: others held the whole budget.
    NoRoom(Duration),
}

/// A body and its share of the buffered-bytes budget, given back when this is dropped.
#[derive(Debug)]
pub struct Received {
    pub body: Body,
    room: Option<OwnedSemaphorePermit>,
}

impl Received {
    fn new(body: Body, room: Option<OwnedSemaphorePermit>) -> Self {
        Self { body, room }
    }

    /// The body, and what keeps its bytes counted until the request is answered.
    pub fn into_parts(self) -> (Body, Option<OwnedSemaphorePermit>) {
        (self.body, self.room)
    }
}

/// The limits every body is read under, and the budget all bodies share.
#[derive(Debug, Clone)]
pub struct Intake {
    limit: u64,
    timeout: Duration,
    room: Arc<Semaphore>,
}

impl Intake {
    /// Bodies of at most `limit` bytes, each read within `timeout`, all of them buffering at most
    /// `buffered` bytes at once (never less than one body of `limit`).
    pub fn new(limit: u64, timeout: Duration, buffered: u64) -> Self {
        let units = units(buffered.max(limit)).min(Semaphore::MAX_PERMITS);
        Self {
            limit,
            timeout,
            room: Arc::new(Semaphore::new(units)),
        }
    }

    /// The body size limit.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Reads one body from `stream`, whose `Content-Length` (if sent) was `content_length`.
    pub async fn read<S, B>(&self, stream: S, content_length: Option<u64>) -> Received
    where
        S: Stream<Item = Result<B, warp::Error>>,
        B: Buf,
    {
        let deadline = Instant::now() + self.timeout;
        let mut reading = Reading {
            intake: self,
            deadline,
            room: None,
            reserved: 0,
        };
        let body = reading.read(stream, content_length).await;
        // A body that is not kept gives its room back at once.
        let room = matches!(body, Body::Complete(_))
            .then_some(reading.room)
            .flatten();
        Received::new(body, room)
    }
}

/// One body being read: the deadline and the room reserved so far.
struct Reading<'a> {
    intake: &'a Intake,
    deadline: Instant,
    room: Option<OwnedSemaphorePermit>,
    /// Units held in `room`.
    reserved: usize,
}

impl Reading<'_> {
    async fn read<S, B>(&mut self, stream: S, content_length: Option<u64>) -> Body
    where
        S: Stream<Item = Result<B, warp::Error>>,
        B: Buf,
    {
        let limit = self.intake.limit;
        let drain_cap = limit.saturating_mul(4).clamp(limit, DRAIN_CAP.max(limit));
        if content_length.is_some_and(|len| len > drain_cap) {
            return Body::TooLarge;
        }
        // Room is taken as bytes arrive, not as announced: a client that announces a large body
        // and sends nothing holds nothing.
        let capacity = content_length
            .filter(|&len| len <= limit)
            .unwrap_or(0)
            .min(INITIAL_CAPACITY);
        let mut stream = std::pin::pin!(stream);
        let mut body = BytesMut::with_capacity(usize::try_from(capacity).unwrap_or(0));
        let mut received: u64 = 0;
        loop {
            let next = match tokio::time::timeout_at(self.deadline, stream.next()).await {
                Ok(next) => next,
                Err(_) => return Body::TimedOut(self.intake.timeout),
            };
            let Some(chunk) = next else { break };
            let mut chunk = match chunk {
                Ok(chunk) => chunk,
                Err(error) => return Body::Failed(error.to_string()),
            };
            received = received.saturating_add(chunk.remaining() as u64);
            if received > limit {
                if received > drain_cap {
                    return Body::TooLarge;
                }
                chunk.advance(chunk.remaining());
                body = BytesMut::new();
                self.room = None;
                self.reserved = 0;
                continue;
            }
            if let Err(refused) = self.reserve(units(received)).await {
                return refused;
            }
            while chunk.has_remaining() {
                let part = chunk.chunk();
                body.extend_from_slice(part);
                let n = part.len();
                chunk.advance(n);
            }
        }
        if received > limit {
            Body::TooLarge
        } else {
            Body::Complete(body.freeze())
        }
    }

    /// Holds `needed` units of room in all, waiting for them until the deadline.
    async fn reserve(&mut self, needed: usize) -> Result<(), Body> {
        if needed <= self.reserved {
            return Ok(());
        }
        let more = u32::try_from(needed - self.reserved).unwrap_or(u32::MAX);
        let room = Arc::clone(&self.intake.room);
        match tokio::time::timeout_at(self.deadline, room.acquire_many_owned(more)).await {
            Ok(Ok(permit)) => {
                match &mut self.room {
                    Some(held) => held.merge(permit),
                    None => self.room = Some(permit),
                }
                self.reserved = needed;
                Ok(())
            }
            // The semaphore is never closed; a closed one is no room either.
            Ok(Err(_)) | Err(_) => Err(Body::NoRoom(self.intake.timeout)),
        }
    }
}

/// Budget units (KiB, rounded up) for `bytes`.
fn units(bytes: u64) -> usize {
    usize::try_from(bytes.div_ceil(UNIT)).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(sizes: &[usize]) -> impl Stream<Item = Result<Bytes, warp::Error>> + use<> {
        let items: Vec<Result<Bytes, warp::Error>> =
            sizes.iter().map(|&n| Ok(Bytes::from(vec![b'x'; n]))).collect();
        futures::stream::iter(items)
    }

    /// One chunk, then nothing more: a client that stopped sending.
    fn stalled(first: usize) -> impl Stream<Item = Result<Bytes, warp::Error>> {
        chunks(&[first]).chain(futures::stream::pending())
    }

    fn intake(limit: u64, buffered: u64) -> Intake {
        Intake::new(limit, Duration::from_secs(10), buffered)
    }

    #[tokio::test]
    async fn bodies_within_the_limit_are_read_whole() {
        match intake(7, 1 << 20).read(chunks(&[3, 4]), None).await.body {
            Body::Complete(bytes) => assert_eq!(bytes.len(), 7),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn bodies_over_the_limit_are_refused() {
        let intake = intake(7, 1 << 20);
        assert!(matches!(
            intake.read(chunks(&[5, 5]), None).await.body,
            Body::TooLarge
        ));
        assert!(matches!(
            intake.read(chunks(&[1]), Some(1 << 40)).await.body,
            Body::TooLarge
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_stops_arriving_times_out() {
        let started = Instant::now();
        let received = intake(1 << 20, 1 << 20).read(stalled(10), Some(100)).await;
        assert!(matches!(received.body, Body::TimedOut(_)), "{:?}", received.body);
        assert_eq!(started.elapsed(), Duration::from_secs(10));
    }

    #[tokio::test(start_paused = true)]
    async fn buffered_bytes_stay_within_the_budget_and_come_back() {
        // Room for two bodies of 4 KiB.
        let intake = intake(4096, 8192);
        let first = intake.read(chunks(&[4096]), Some(4096)).await;
        let second = intake.read(chunks(&[1024, 3072]), None).await;
        assert!(matches!(first.body, Body::Complete(_)));
        assert!(matches!(second.body, Body::Complete(_)));

        // A third waits for room until its deadline.
        let started = Instant::now();
        let third = intake.read(chunks(&[4096]), Some(4096)).await;
        assert!(matches!(third.body, Body::NoRoom(_)), "{:?}", third.body);
        assert_eq!(started.elapsed(), Duration::from_secs(10));

        // An answered request gives its room back.
        drop(first);
        let fourth = intake.read(chunks(&[4096]), Some(4096)).await;
        assert!(matches!(fourth.body, Body::Complete(_)));
    }

    #[tokio::test(start_paused = true)]
    async fn an_announced_length_holds_no_room_until_bytes_arrive() {
        let intake = intake(4096, 4096);
        // Announces the whole budget, sends a tenth of it, stalls.
        let stalling = intake.read(stalled(400), Some(4096));
        let honest = intake.read(chunks(&[3000]), Some(3000));
        let (stalled, honest) = tokio::join!(stalling, honest);
        assert!(matches!(stalled.body, Body::TimedOut(_)));
        assert!(matches!(honest.body, Body::Complete(_)), "{:?}", honest.body);
    }

    #[tokio::test(start_paused = true)]
    async fn refused_bodies_hold_no_room() {
        let intake = intake(4096, 4096);
        let timed_out = intake.read(stalled(4000), Some(4096)).await;
        assert!(matches!(timed_out.body, Body::TimedOut(_)));
        let too_large = intake.read(chunks(&[4096, 4096]), None).await;
        assert!(matches!(too_large.body, Body::TooLarge));
        let (body, room) = intake.read(chunks(&[4096]), None).await.into_parts();
        assert!(matches!(body, Body::Complete(_)));
        assert!(room.is_some(), "a kept body holds its room");
    }
}
