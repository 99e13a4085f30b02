//! The evaluation pool: a fixed set of threads, one per core, that parse and evaluate judged
//! requests off the async workers. Evaluation is CPU-bound, so more threads than cores only add
//! context switches (tokio's blocking pool grew to one thread per request in flight, up to
//! `--max-concurrency`); under load a worker takes the next job without sleeping in between.
//! A job wakes one idle thread, or none when all are busy. A job that panics is reported as
//! such and the thread carries on.

use std::any::Any;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

type Job = Box<dyn FnOnce() + Send>;

/// Why a job gave no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    #[error("the job panicked")]
    Panicked,
    #[error("the evaluation pool is closed")]
    Closed,
}

/// Fixed threads running jobs in arrival order; dropping the pool lets them finish and exit.
#[derive(Debug)]
pub struct EvalPool {
    queue: Arc<Queue>,
    threads: usize,
}

/// The jobs waiting for a thread. Each idle thread waits on the condition variable by itself,
/// so a job wakes exactly one of them, and none when every thread is busy (they take the next
/// job without sleeping). A shared `mpsc::Receiver` behind a mutex woke two threads per job:
/// the one given the job, then the next one in line for the lock.
struct Queue {
    state: Mutex<State>,
    job_ready: Condvar,
}

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    /// Threads waiting for a job.
    idle: usize,
    closed: bool,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("Queue")
            .field("jobs", &state.jobs.len())
            .field("idle", &state.idle)
            .field("closed", &state.closed)
            .finish()
    }
}

impl Queue {
    /// The state; a job never runs under the lock, so a poisoned lock still holds a sound queue.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, job: Job) -> Result<(), PoolError> {
        let mut state = self.lock();
        if state.closed {
            return Err(PoolError::Closed);
        }
        state.jobs.push_back(job);
        let wake = state.idle > 0;
        drop(state);
        if wake {
            self.job_ready.notify_one();
        }
        Ok(())
    }

    /// The next job, or `None` once the pool is closed and drained.
    fn next(&self) -> Option<Job> {
        let mut state = self.lock();
        loop {
            if let Some(job) = state.jobs.pop_front() {
                return Some(job);
            }
            if state.closed {
                return None;
            }
            state.idle += 1;
            state = self.job_ready.wait(state).unwrap_or_else(PoisonError::into_inner);
            state.idle -= 1;
        }
    }

    fn close(&self) {
        self.lock().closed = true;
        self.job_ready.notify_all();
    }
}

impl EvalPool {
    /// A pool of `threads` threads (at least one).
    pub fn new(threads: usize) -> std::io::Result<Self> {
        let threads = threads.max(1);
        let queue = Arc::new(Queue {
            state: Mutex::new(State::default()),
            job_ready: Condvar::new(),
        });
        for index in 0..threads {
            let shared = Arc::clone(&queue);
            let spawned = std::thread::Builder::new()
                .name(format!("suture-eval-{index}"))
                .spawn(move || {
                    while let Some(job) = shared.next() {
                        job();
                    }
                });
            if let Err(error) = spawned {
                queue.close();
                return Err(error);
            }
        }
        Ok(Self { queue, threads })
    }

    /// A pool with one thread per core.
    pub fn per_core() -> std::io::Result<Self> {
        Self::new(std::thread::available_parallelism().map_or(1, usize::from))
    }

    /// How many threads run jobs.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `work` on the pool and waits for its result without blocking the async worker.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, PoolError> {
        let (answer, result) = tokio::sync::oneshot::channel::<Result<T, Box<dyn Any + Send>>>();
        let job: Job = Box::new(move || {
            // A caller that gave up (its time budget ran out while the job queued) is not
            // waiting: skip the work, and drop what it holds (its concurrency permit) now.
            if answer.is_closed() {
                return;
            }
            let _ = answer.send(catch_unwind(AssertUnwindSafe(work)));
        });
        self.queue.push(job)?;
        match result.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_)) => Err(PoolError::Panicked),
            Err(_) => Err(PoolError::Closed),
        }
    }
}

impl Drop for EvalPool {
    /// The threads finish the jobs already queued, then exit.
    fn drop(&mut self) {
        self.queue.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn jobs_run_and_panics_are_reported() {
        let pool = EvalPool::new(2).unwrap();
        assert_eq!(pool.threads(), 2);
        assert_eq!(pool.run(|| 6 * 7).await, Ok(42));
        let panicked = pool.run(|| -> u8 { panic!("injected") }).await;
        assert_eq!(panicked, Err(PoolError::Panicked));
        // Both threads survive a panic.
        let (a, b) = tokio::join!(pool.run(|| 1), pool.run(|| 2));
        assert_eq!((a, b), (Ok(1), Ok(2)));
    }

    #[tokio::test]
    async fn jobs_run_side_by_side_up_to_the_thread_count() {
        let pool = Arc::new(EvalPool::new(2).unwrap());
        let started = std::time::Instant::now();
        let nap = || std::thread::sleep(Duration::from_millis(200));
        let (a, b) = tokio::join!(pool.run(nap), pool.run(nap));
        assert_eq!((a, b), (Ok(()), Ok(())));
        assert!(
            started.elapsed() < Duration::from_millis(390),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn jobs_queued_when_the_pool_is_dropped_still_run() {
        let pool = EvalPool::new(1).unwrap();
        let (started, start) = std::sync::mpsc::channel();
        let (done, finished) = std::sync::mpsc::channel();
        // One job holds the only thread, two more queue behind it, then the pool is dropped.
        let busy: Job = Box::new(move || {
            let _ = started.send(());
            std::thread::sleep(Duration::from_millis(50));
        });
        pool.queue.push(busy).unwrap();
        for n in 0..2 {
            let done = done.clone();
            pool.queue
                .push(Box::new(move || {
                    let _ = done.send(n);
                }))
                .unwrap();
        }
        start.recv().unwrap();
        let queue = Arc::clone(&pool.queue);
        drop(pool);
        assert_eq!(
            queue.push(Box::new(|| {})),
            Err(PoolError::Closed),
            "a closed pool takes no job"
        );
        let wait = Duration::from_secs(5);
        let first = finished.recv_timeout(wait);
        let second = finished.recv_timeout(wait);
        assert_eq!((first, second), (Ok(0), Ok(1)), "in arrival order");
    }

    #[tokio::test]
    async fn a_job_whose_caller_gave_up_is_skipped() {
        let pool = EvalPool::new(1).unwrap();
        let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // The only thread is busy; the second job's caller gives up while it queues.
        let busy = pool.run(|| std::thread::sleep(Duration::from_millis(150)));
        let flag = Arc::clone(&ran);
        let abandoned = tokio::time::timeout(
            Duration::from_millis(20),
            pool.run(move || flag.store(true, std::sync::atomic::Ordering::SeqCst)),
        );
        let (_, gave_up) = tokio::join!(busy, abandoned);
        assert!(gave_up.is_err(), "the caller timed out");
        assert_eq!(pool.run(|| 1).await, Ok(1), "the queue drained");
        assert!(
            !ran.load(std::sync::atomic::Ordering::SeqCst),
            "the abandoned job ran"
        );
    }
}
