//! Where one request's time goes, stage by stage: a development aid the gateway switches on with
//! `--stage-timings`. A cold, sparse admission request spends its time in cache misses spread
//! over every step, which a profiler of the whole process does not attribute to the request;
//! these marks time the steps of each request where it runs.
//!
//! The admission path calls [`begin`] when a body arrives, [`mark`] as each stage ends (naming
//! it), and [`take`] when it answers. Marks are kept per thread, and only between a `begin` and
//! a `take` on that thread: a request answered on the thread that read it (the gateway's inline
//! lane) has all its stages; one that moved to another thread while it waited (the evaluation
//! pool) has none, rather than another request's. Anywhere else a mark costs a look at one
//! thread-local flag.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Which timing a [`take`] ends: the one its [`begin`] started.
#[derive(Debug, PartialEq, Eq)]
#[must_use]
pub struct Timing(u64);

/// The last timing's number, over every thread.
static TIMINGS: AtomicU64 = AtomicU64::new(0);

/// The most marks one timing keeps: a timing that is never taken (a request answered early)
/// holds a bounded list until the thread's next [`begin`].
const MOST_MARKS: usize = 256;

/// One thread's timing.
struct Marks {
    /// The timing between a [`begin`] and its [`take`], if any.
    active: Option<u64>,
    /// The start, then each stage's end.
    list: Vec<(&'static str, Instant)>,
}

thread_local! {
    static MARKS: RefCell<Marks> = const {
        RefCell::new(Marks {
            active: None,
            list: Vec::new(),
        })
    };
}

/// Starts timing a request on this thread (forgetting any marks left from another).
pub fn begin() -> Timing {
    let number = TIMINGS.fetch_add(1, Ordering::Relaxed) + 1;
    MARKS.with_borrow_mut(|marks| {
        marks.active = Some(number);
        marks.list.clear();
        marks.list.push(("", Instant::now()));
    });
    Timing(number)
}

/// Ends the stage named `stage` here, when this thread is timing a request: its time is from the
/// previous mark (or [`begin`]).
pub fn mark(stage: &'static str) {
    MARKS.with_borrow_mut(|marks| {
        if marks.active.is_some() && marks.list.len() < MOST_MARKS {
            marks.list.push((stage, Instant::now()));
        }
    });
}

/// Ends `timing`: its stages since [`begin`], in order, each with its time. Empty, and this
/// thread's own timing left running, when `timing` is not the one running here (its request
/// moved to this thread from the one it began on).
pub fn take(timing: Timing) -> Vec<(&'static str, Duration)> {
    MARKS.with_borrow_mut(|marks| {
        if marks.active != Some(timing.0) {
            return Vec::new();
        }
        let stages = marks
            .list
            .windows(2)
            .map(|pair| (pair[1].0, pair[1].1.duration_since(pair[0].1)))
            .collect();
        marks.active = None;
        marks.list.clear();
        stages
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn stages_are_timed_from_mark_to_mark_between_begin_and_take() {
        // A mark outside a timing (a thread that only evaluates) is not kept.
        mark("stray");
        let timing = begin();
        std::thread::sleep(Duration::from_millis(2));
        mark("read");
        mark("judge");
        let stages = take(timing);
        let names: Vec<&str> = stages.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["read", "judge"]);
        assert!(stages[0].1 >= Duration::from_millis(2), "read took the sleep");
        assert!(stages[1].1 < stages[0].1);
    }

    #[test]
    fn a_request_that_moved_threads_takes_nothing_and_leaves_the_timing_there_running() {
        let moved = std::thread::spawn(begin).join().unwrap();
        let here = begin();
        mark("read");
        assert!(take(moved).is_empty(), "another thread's timing");
        mark("judge");
        let names: Vec<&str> = take(here).iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["read", "judge"], "this thread's timing ran on");
    }

    #[test]
    fn a_timing_never_taken_keeps_a_bounded_list_until_the_next_begin() {
        let _abandoned = begin();
        for _ in 0..10 * MOST_MARKS {
            mark("policy");
        }
        let timing = begin();
        mark("read");
        assert_eq!(take(timing).len(), 1, "begin() forgot the untaken marks");
        let timing = begin();
        for _ in 0..10 * MOST_MARKS {
            mark("policy");
        }
        assert_eq!(take(timing).len(), MOST_MARKS - 1);
    }
}
