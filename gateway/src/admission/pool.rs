//! The evaluation pool: a fixed set of threads, one per core, that parse and evaluate judged
//! requests off the async workers. Evaluation is CPU-bound, so more threads than cores only add
//! context switches (tokio's blocking pool grew to one thread per request in flight, up to
//! `--max-concurrency`); under load a worker takes the next job without sleeping in between.
//! A job that panics is reported as such and the thread carries on.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

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
    jobs: Sender<Job>,
    threads: usize,
}

impl EvalPool {
    /// A pool of `threads` threads (at least one).
    pub fn new(threads: usize) -> std::io::Result<Self> {
        let threads = threads.max(1);
        let (jobs, queue) = channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        for index in 0..threads {
            let queue = Arc::clone(&queue);
            std::thread::Builder::new()
                .name(format!("suture-eval-{index}"))
                .spawn(move || {
                    while let Some(job) = next_job(&queue) {
                        job();
                    }
                })?;
        }
        Ok(Self { jobs, threads })
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
        self.jobs.send(job).map_err(|_| PoolError::Closed)?;
        match result.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_)) => Err(PoolError::Panicked),
            Err(_) => Err(PoolError::Closed),
        }
    }
}

/// The next job, or `None` once the pool is dropped. The lock is held only while waiting.
fn next_job(queue: &Mutex<Receiver<Job>>) -> Option<Job> {
    let queue = queue.lock().ok()?;
    queue.recv().ok()
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
