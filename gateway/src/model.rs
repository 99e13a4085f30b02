//! The gateway's shared view of the cluster: one [`ClusterModel`] behind a read-write lock,
//! with the two facts the webhook needs beside it — whether the initial lists are in (readiness)
//! and how long ago the model was last known to be current (staleness).
//!
//! Watchers (live mode) and the snapshot reloader (offline mode) are the only writers; admission
//! requests take short read locks for the duration of one evaluation.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use policies_cel::cluster::ClusterModel;

/// The live cluster model shared between writers and the admission path.
#[derive(Debug, Default)]
pub struct LiveModel {
    model: RwLock<ClusterModel>,
    ready: AtomicBool,
    /// Milliseconds since the Unix epoch when the model was last known current; 0 = never.
    current_at_ms: AtomicU64,
}

impl LiveModel {
    /// An empty model that is not ready yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A model that starts from `model` and is ready at once (offline mode).
    pub fn ready_with(model: ClusterModel) -> Self {
        let live = Self::default();
        live.replace(model);
        live.mark_ready();
        live
    }

    /// A read view for one evaluation. A writer that panicked leaves the model usable: its
    /// insert/remove either completed or left the model as it was.
    pub fn read(&self) -> RwLockReadGuard<'_, ClusterModel> {
        self.model.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A write view for a watcher applying events; marks the model current.
    pub fn write(&self) -> RwLockWriteGuard<'_, ClusterModel> {
        let guard = self
            .model
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.touch();
        guard
    }

    /// Swaps in a whole new model (a re-list or a reloaded snapshot); marks it current.
    pub fn replace(&self, model: ClusterModel) {
        *self.write() = model;
    }

    /// Records that the model is known to be current now (an event, a bookmark, a healthy
    /// re-list) without changing it.
    pub fn touch(&self) {
        self.current_at_ms.store(now_ms(), Ordering::Relaxed);
    }

    /// Marks the initial lists as complete.
    pub fn mark_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    /// Whether the initial lists are in.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// How long ago the model was last known current; `None` before it ever was.
    pub fn age(&self) -> Option<Duration> {
        match self.current_at_ms.load(Ordering::Relaxed) {
            0 => None,
            at => Some(Duration::from_millis(now_ms().saturating_sub(at))),
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_model_is_neither_ready_nor_current() {
        let live = LiveModel::new();
        assert!(!live.is_ready());
        assert_eq!(live.age(), None);
    }

    #[test]
    fn offline_models_are_ready_and_current() {
        let live = LiveModel::ready_with(ClusterModel::new());
        assert!(live.is_ready());
        assert!(live.age().is_some_and(|age| age < Duration::from_secs(5)));
    }
}
