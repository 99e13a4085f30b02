//! The model's lock, arranged so that one long evaluation cannot stall every other request.
//!
//! A plain read-write lock (std's prefers writers) makes a convoy of it: an evaluation that runs
//! to its budget holds a read lock for seconds, the next watch event waits for the write lock,
//! and from then on every reader waits behind that writer — the inline trials find the model
//! busy and queue on the pool, which waits too. Under a flood of expensive requests the cheap
//! ones were answered after a second or more (the e2e `exhausting` test on a 2-core machine).
//!
//! Readers come in three kinds here:
//! - **long readers** ([`ModelGate::read_long`]): evaluations on the pool and heavy lanes, which
//!   may run to their budget. They are counted, and yield to a writer that is waiting: a new one
//!   does not start while a writer waits, so back-to-back long evaluations cannot starve it;
//! - **short readers** ([`ModelGate::try_read`], [`ModelGate::read_briefly`]): the inline trial
//!   (bounded by its allowance), counts for metrics, a list's difference. They go straight to
//!   the lock;
//! - **writers** ([`ModelGate::write`]): watch events and reloads. While a long reader holds the
//!   model a writer waits *without* queueing on the lock (it polls), so short readers carry on;
//!   once no long reader is left it takes the lock the ordinary way (only short readers are ahead
//!   of it). A writer on an async worker waits in `block_in_place`, so the worker's other tasks
//!   move to another thread instead of stalling behind it.
//!
//! The model is at most one long evaluation late (the evaluation deadline, 2 s by default), well
//! within `--max-model-age`.

use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use tokio::runtime::{Handle, RuntimeFlavor};

/// A value behind a lock whose long readers cannot make a convoy of its writers.
#[derive(Debug, Default)]
pub struct ModelGate<T> {
    lock: RwLock<T>,
    /// Long readers holding the lock, or about to take it.
    long_readers: AtomicUsize,
    /// Writers waiting: while any, long readers do not start.
    writers_waiting: Mutex<usize>,
    /// Signalled when the last waiting writer got the lock.
    no_writer_waiting: Condvar,
}

/// A long reader's view; counted until dropped.
pub struct LongRead<'a, T> {
    guard: RwLockReadGuard<'a, T>,
    long_readers: &'a AtomicUsize,
}

impl<T> Deref for LongRead<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> Drop for LongRead<'_, T> {
    fn drop(&mut self) {
        self.long_readers.fetch_sub(1, Ordering::SeqCst);
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for LongRead<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LongRead").field(&*self.guard).finish()
    }
}

/// How long a writer sleeps between polls while long readers hold the lock (doubling up to
/// [`MAX_POLL`]).
const FIRST_POLL: Duration = Duration::from_micros(20);
const MAX_POLL: Duration = Duration::from_millis(1);

impl<T> ModelGate<T> {
    /// A view for an evaluation that may run long: waits while a writer waits (then for the
    /// writer). A panicked writer leaves the value usable (its change completed or did not
    /// start), so poisoning is ignored here and below.
    pub fn read_long(&self) -> LongRead<'_, T> {
        loop {
            // Counted before looking at the writers: a writer that counts no long reader after
            // announcing itself is sure that none starts before it has the lock (the check
            // below sees it).
            self.long_readers.fetch_add(1, Ordering::SeqCst);
            if *self.lock_writers() == 0 {
                let guard = self.lock.read().unwrap_or_else(|poisoned| poisoned.into_inner());
                return LongRead {
                    guard,
                    long_readers: &self.long_readers,
                };
            }
            self.long_readers.fetch_sub(1, Ordering::SeqCst);
            let waiting = self.lock_writers();
            drop(
                self.no_writer_waiting
                    .wait_while(waiting, |writers| *writers > 0)
                    .unwrap_or_else(|poisoned| poisoned.into_inner()),
            );
        }
    }

    /// A view if no writer holds or is taking the lock now (never waits).
    pub fn try_read(&self) -> Option<RwLockReadGuard<'_, T>> {
        match self.lock.try_read() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// A view for a short look (counts, a lookup): waits only for a writer that has the lock or
    /// is taking it, which no long reader delays.
    pub fn read_briefly(&self) -> RwLockReadGuard<'_, T> {
        self.lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The value to change. Waits for long readers without blocking short ones, then for the
    /// short ones; on an async worker the wait moves the worker's other tasks elsewhere.
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        match self.lock.try_write() {
            Ok(guard) => return guard,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => return poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {}
        }
        let on_async_worker =
            Handle::try_current().is_ok_and(|handle| handle.runtime_flavor() == RuntimeFlavor::MultiThread);
        if on_async_worker {
            tokio::task::block_in_place(|| self.write_waiting())
        } else {
            self.write_waiting()
        }
    }

    fn write_waiting(&self) -> RwLockWriteGuard<'_, T> {
        *self.lock_writers() += 1;
        let mut poll = FIRST_POLL;
        let guard = loop {
            match self.lock.try_write() {
                Ok(guard) => break guard,
                Err(std::sync::TryLockError::Poisoned(poisoned)) => break poisoned.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) => {}
            }
            if self.long_readers.load(Ordering::SeqCst) == 0 {
                // Only short readers are ahead: queue on the lock like any writer.
                break self.lock.write().unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            std::thread::sleep(poll);
            poll = (poll * 2).min(MAX_POLL);
        };
        let mut waiting = self.lock_writers();
        *waiting -= 1;
        if *waiting == 0 {
            self.no_writer_waiting.notify_all();
        }
        guard
    }

    fn lock_writers(&self) -> MutexGuard<'_, usize> {
        self.writers_waiting
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::mpsc;
    use std::thread;
    use std::time::Instant;

    use super::*;

    /// Holds a long read on another thread until the returned sender is dropped or sent to.
    fn hold_long(gate: &Arc<ModelGate<u32>>) -> (mpsc::Sender<()>, thread::JoinHandle<()>) {
        let (release, released) = mpsc::channel::<()>();
        let (held, is_held) = mpsc::channel();
        let gate = Arc::clone(gate);
        let holder = thread::spawn(move || {
            let view = gate.read_long();
            held.send(*view).unwrap();
            let _ = released.recv();
        });
        is_held.recv().unwrap();
        (release, holder)
    }

    /// Starts a writer on another thread that sets the value to `to`; returns when it waits.
    fn writer(gate: &Arc<ModelGate<u32>>, to: u32) -> thread::JoinHandle<()> {
        let writing = {
            let gate = Arc::clone(gate);
            thread::spawn(move || *gate.write() = to)
        };
        let began = Instant::now();
        while *gate.lock_writers() == 0 {
            assert!(
                began.elapsed() < Duration::from_secs(5),
                "the writer never waited"
            );
            thread::yield_now();
        }
        writing
    }

    #[test]
    fn a_writer_waiting_for_a_long_reader_holds_up_no_short_reader() {
        let gate = Arc::new(ModelGate::<u32>::default());
        let (release, holder) = hold_long(&gate);
        let writing = writer(&gate, 7);
        thread::sleep(Duration::from_millis(20));
        assert!(!writing.is_finished(), "the writer waits for the long reader");
        // With a plain RwLock both of these would wait for the writer, which waits for the
        // long reader.
        assert_eq!(
            gate.try_read().as_deref(),
            Some(&0),
            "the inline trial still reads"
        );
        assert_eq!(*gate.read_briefly(), 0, "a short look still reads");

        release.send(()).unwrap();
        holder.join().unwrap();
        writing.join().unwrap();
        assert_eq!(
            *gate.read_briefly(),
            7,
            "the writer got in once the long reader left"
        );
    }

    #[test]
    fn a_new_long_reader_waits_for_the_waiting_writer() {
        let gate = Arc::new(ModelGate::<u32>::default());
        let (release, holder) = hold_long(&gate);
        let writing = writer(&gate, 7);
        // Back-to-back long evaluations would otherwise keep the writer out for ever.
        let second = {
            let gate = Arc::clone(&gate);
            thread::spawn(move || *gate.read_long())
        };
        thread::sleep(Duration::from_millis(20));
        assert!(
            !second.is_finished(),
            "a long reader started while a writer waited"
        );

        release.send(()).unwrap();
        holder.join().unwrap();
        writing.join().unwrap();
        assert_eq!(second.join().unwrap(), 7, "the second long reader saw the write");
        assert_eq!(
            gate.long_readers.load(Ordering::SeqCst),
            0,
            "every long reader uncounted"
        );
    }

    #[test]
    fn a_writer_with_only_short_readers_ahead_takes_the_lock_when_they_leave() {
        let gate = Arc::new(ModelGate::<u32>::default());
        let short = gate.read_briefly();
        let writing = writer(&gate, 3);
        thread::sleep(Duration::from_millis(20));
        assert!(!writing.is_finished());
        assert!(
            gate.try_read().is_none(),
            "queued on the lock, the writer comes next"
        );
        drop(short);
        writing.join().unwrap();
        assert_eq!(*gate.read_briefly(), 3);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_writer_waiting_on_the_async_worker_leaves_its_other_tasks_running() {
        const HELD: Duration = Duration::from_millis(400);
        let gate = Arc::new(ModelGate::<u32>::default());
        let (release, holder) = hold_long(&gate);
        let releasing = thread::spawn(move || {
            thread::sleep(HELD);
            let _ = release.send(());
        });
        let began = Instant::now();
        let writing = tokio::spawn({
            let gate = Arc::clone(&gate);
            async move { *gate.write() = 5 }
        });
        // The runtime's only worker runs the writer, which waits for the long reader: other
        // tasks (the webhook's connections) must still run meanwhile.
        tokio::spawn(async { tokio::time::sleep(Duration::from_millis(10)).await })
            .await
            .unwrap();
        assert!(
            began.elapsed() < HELD / 2,
            "a task stalled behind the waiting writer for {:?}",
            began.elapsed()
        );

        writing.await.unwrap();
        releasing.join().unwrap();
        holder.join().unwrap();
        assert_eq!(*gate.read_briefly(), 5);
    }
}
