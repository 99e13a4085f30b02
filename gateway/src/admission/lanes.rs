//! Where a request is judged. First on the async worker that read it, under a small cost
//! allowance ([`DEFAULT_INLINE_COST`], a trial evaluation): an ordinary request is answered
//! without waking an idle thread, which on a small machine costs more than the evaluation (tens
//! to hundreds of microseconds), and without queueing behind expensive requests that occupy the
//! threads. One that needs more than the allowance is judged again on the evaluation threads
//! with the policies' whole budgets, and its shape skips the trial for [`HEAVY_MEMORY`].
//!
//! Heavy requests are kept apart: a request is judged by the set of policies that could match it
//! (its *shape*), and a shape whose evaluation recently took longer than [`HEAVY_EVALUATION`] (a
//! policy whose expressions run to the cost budget, say) is judged on a lane of its own — one
//! thread, a few requests at a time — for [`HEAVY_MEMORY`], with no trial first. Every request is
//! still judged by every policy that applies; what changes is that a flood of expensive requests
//! waits in its own queue (and meets its deadline there, answered by failurePolicy) instead of
//! taking the threads every other request needs.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use policies_cel::policy::Policy;
use tokio::time::Instant;

/// The cost allowance of a trial evaluation on an async worker (`--inline-cost`): the built-in
/// pack judges a request in 125 to 1,900 units (a claim's deletion to a namespace's); a trial
/// that runs out of 20,000 units has held its worker about 0.4 ms on a 2-core machine (measured
/// with a comprehension that needs more: 1.1 ms for 50,000).
pub const DEFAULT_INLINE_COST: u64 = 20_000;

/// Where a request was judged (the decision log's `lane`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// On the async worker that read it, within the trial allowance.
    Inline,
    /// On the evaluation threads.
    Pool,
    /// On the heavy lane's thread.
    Heavy,
}

impl Lane {
    /// The decision log's word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inline => "inline",
            Self::Pool => "pool",
            Self::Heavy => "heavy",
        }
    }
}

/// An evaluation longer than this marks its shape heavy (an ordinary one takes microseconds;
/// a namespace deletion over a large model, a few milliseconds).
pub const HEAVY_EVALUATION: Duration = Duration::from_millis(100);

/// How long a shape stays heavy after its last heavy evaluation.
pub const HEAVY_MEMORY: Duration = Duration::from_secs(30);

/// Requests the heavy lane holds at once (running or waiting for its thread).
pub const HEAVY_CONCURRENCY: usize = 8;

/// A request's shape: which policies could match it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape(u64);

impl Shape {
    /// The shape of a request that `candidates` could match.
    pub fn of(candidates: &[Arc<Policy>]) -> Self {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for policy in candidates {
            policy.name.hash(&mut hasher);
        }
        Self(hasher.finish())
    }
}

/// Shapes marked for [`HEAVY_MEMORY`] after their last mark: the shapes found heavy, or the
/// shapes whose trial ran out (judged on the pool at once, not tried and judged twice).
#[derive(Debug, Default)]
pub struct ShapeMemory {
    marked: Mutex<HashMap<Shape, Instant>>,
}

impl ShapeMemory {
    /// Whether `shape` is marked now.
    pub fn is_marked(&self, shape: Shape) -> bool {
        let Ok(marked) = self.marked.lock() else {
            return false;
        };
        marked.get(&shape).is_some_and(|at| at.elapsed() < HEAVY_MEMORY)
    }

    /// Marks `shape` from now on; true when it was not marked before.
    pub fn mark(&self, shape: Shape) -> bool {
        let Ok(mut marked) = self.marked.lock() else {
            return false;
        };
        let now = Instant::now();
        marked.retain(|_, at| now.duration_since(*at) < HEAVY_MEMORY);
        marked.insert(shape, now).is_none()
    }

    /// Records that an evaluation of `shape` took `took`; true when that made the shape heavy
    /// (it was not before).
    pub fn observe(&self, shape: Shape, took: Duration) -> bool {
        took >= HEAVY_EVALUATION && self.mark(shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_slow_evaluation_marks_its_shape_for_a_while() {
        let shapes = ShapeMemory::default();
        let (slow, other) = (Shape(1), Shape(2));
        assert!(!shapes.observe(slow, Duration::from_millis(5)));
        assert!(!shapes.is_marked(slow), "a fast evaluation marks nothing");

        assert!(shapes.observe(slow, Duration::from_millis(400)));
        assert!(shapes.is_marked(slow));
        assert!(!shapes.is_marked(other), "other shapes stay on the main lane");
        assert!(
            !shapes.observe(slow, HEAVY_EVALUATION),
            "already heavy: marked again, not new"
        );

        tokio::time::advance(HEAVY_MEMORY).await;
        assert!(!shapes.is_marked(slow), "forgotten after {HEAVY_MEMORY:?}");
    }
}
