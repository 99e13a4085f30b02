//! Reading a request body under the size limit. A body over the limit is still drained (up to a
//! bound) so that the client reads a well-formed 413 instead of a reset connection.

use bytes::{Buf, Bytes, BytesMut};
use futures::{Stream, StreamExt};

/// Bodies beyond this are answered before being drained (the connection then closes).
const DRAIN_CAP: u64 = 64 << 20;

/// What came in.
#[derive(Debug)]
pub enum Body {
    Complete(Bytes),
    TooLarge,
    Failed(String),
}

/// Reads the body stream up to `limit` bytes.
pub async fn read<S, B>(stream: S, content_length: Option<u64>, limit: u64) -> Body
where
    S: Stream<Item = Result<B, warp::Error>>,
    B: Buf,
{
    let drain_cap = limit.saturating_mul(4).clamp(limit, DRAIN_CAP.max(limit));
    if content_length.is_some_and(|len| len > drain_cap) {
        return Body::TooLarge;
    }
    let mut stream = std::pin::pin!(stream);
    let capacity = content_length.filter(|&len| len <= limit).unwrap_or(0);
    let mut body = BytesMut::with_capacity(usize::try_from(capacity).unwrap_or(0));
    let mut received: u64 = 0;
    while let Some(chunk) = stream.next().await {
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
            body.clear();
            continue;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(sizes: &[usize]) -> impl Stream<Item = Result<Bytes, warp::Error>> {
        let items: Vec<Result<Bytes, warp::Error>> =
            sizes.iter().map(|&n| Ok(Bytes::from(vec![b'x'; n]))).collect();
        futures::stream::iter(items)
    }

    #[tokio::test]
    async fn bodies_within_the_limit_are_read_whole() {
        match read(chunks(&[3, 4]), None, 7).await {
            Body::Complete(bytes) => assert_eq!(bytes.len(), 7),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn bodies_over_the_limit_are_refused() {
        assert!(matches!(read(chunks(&[5, 5]), None, 7).await, Body::TooLarge));
        assert!(matches!(
            read(chunks(&[1]), Some(1 << 40), 7).await,
            Body::TooLarge
        ));
    }
}
