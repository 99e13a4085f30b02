//! The gateway's shared view of the cluster: one [`ClusterModel`] behind a read-write lock,
//! with the two facts the webhook needs beside it — whether the initial lists are in (readiness)
//! and how long ago the model was last known to be current (staleness).
//!
//! Watchers (live mode) and the snapshot reloader (offline mode) are the only writers; admission
//! requests take short read locks for the duration of one evaluation.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use policies_cel::cluster::ClusterModel;

/// The live cluster model shared between writers and the admission path.
#[derive(Debug, Default)]
pub struct LiveModel {
    model: RwLock<ClusterModel>,
    ready: AtomicBool,
    /// Milliseconds since the Unix epoch when the model was last known current; 0 = never.
    current_at_ms: AtomicU64,
    /// Live mode: the state of each watch feeding the model (or the policy set), by name.
    watches: Mutex<BTreeMap<String, WatchState>>,
}

/// The state of one watch (live mode), for readiness, staleness, metrics and logs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchState {
    /// The latest list (the initial one, or a re-list after an error) is complete.
    pub synced: bool,
    /// The last thing the watch reported was an error: it is reconnecting with backoff.
    pub failing: bool,
    /// Errors since start.
    pub errors: u64,
    /// Lists started since start: the first one, then one per restart.
    pub lists: u64,
    /// The last error's message, cleared when the watch recovers.
    pub last_error: Option<String>,
}

impl WatchState {
    /// Re-lists after the first list (restarts after errors, `410 Gone` included).
    pub fn restarts(&self) -> u64 {
        self.lists.saturating_sub(1)
    }

    /// Synced and not failing: what this watch feeds is current.
    pub fn is_current(&self) -> bool {
        self.synced && !self.failing
    }
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

/// Live mode: how the watches feeding the model report their progress. Readiness flips once every
/// watch registered so far has synced; the model counts as current (see [`LiveModel::age`]) only
/// while every watch is synced and none is failing, so a failing watch makes the age grow.
impl LiveModel {
    /// A write view that does not mark the model current: watchers apply events through it and
    /// decide separately whether the model is current (one failing watch means it is not).
    pub fn write_untouched(&self) -> RwLockWriteGuard<'_, ClusterModel> {
        self.model
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers a watch (not synced yet); registering an existing one changes nothing.
    pub fn watch_registered(&self, name: &str) {
        self.lock_watches().entry(name.to_owned()).or_default();
    }

    /// Forgets a watch that was stopped (a CustomResourceDefinition deleted).
    pub fn watch_forgotten(&self, name: &str) {
        let mut watches = self.lock_watches();
        watches.remove(name);
        self.after_change(&watches);
    }

    /// A watch starts a list (the first, or a re-list): what it feeds is not current until the
    /// list is complete.
    pub fn watch_listing(&self, name: &str) {
        let mut watches = self.lock_watches();
        let state = watches.entry(name.to_owned()).or_default();
        state.lists += 1;
        state.synced = false;
        self.after_change(&watches);
    }

    /// A watch completed a list: it is synced and healthy; readiness flips when it was the last.
    pub fn watch_synced(&self, name: &str) {
        let mut watches = self.lock_watches();
        let state = watches.entry(name.to_owned()).or_default();
        state.synced = true;
        state.failing = false;
        state.last_error = None;
        if watches.values().all(|w| w.synced) {
            self.mark_ready();
        }
        self.after_change(&watches);
    }

    /// A watch delivered an event: it is healthy again.
    pub fn watch_event(&self, name: &str) {
        let mut watches = self.lock_watches();
        if let Some(state) = watches.get_mut(name) {
            state.failing = false;
            state.last_error = None;
        }
        self.after_change(&watches);
    }

    /// A watch failed with `error` (a message without object bodies); it reconnects with backoff.
    pub fn watch_failed(&self, name: &str, error: String) {
        let mut watches = self.lock_watches();
        let state = watches.entry(name.to_owned()).or_default();
        state.failing = true;
        state.errors += 1;
        state.last_error = Some(error);
    }

    /// Marks the model current when every watch is synced and none is failing (the heartbeat
    /// between events); returns whether it did.
    pub fn touch_if_current(&self) -> bool {
        let watches = self.lock_watches();
        self.after_change(&watches)
    }

    /// Every watch's state, by name.
    pub fn watch_states(&self) -> BTreeMap<String, WatchState> {
        self.lock_watches().clone()
    }

    /// Watch errors since start, over all watches.
    pub fn watch_errors(&self) -> u64 {
        self.lock_watches().values().map(|w| w.errors).sum()
    }

    /// Watch restarts (re-lists) since start, over all watches.
    pub fn watch_restarts(&self) -> u64 {
        self.lock_watches().values().map(WatchState::restarts).sum()
    }

    /// Names of the watches that are failing now.
    pub fn failing_watches(&self) -> Vec<String> {
        self.lock_watches()
            .iter()
            .filter(|(_, w)| w.failing)
            .map(|(name, _)| name.clone())
            .collect()
    }

    fn after_change(&self, watches: &BTreeMap<String, WatchState>) -> bool {
        let current = !watches.is_empty() && watches.values().all(WatchState::is_current);
        if current {
            self.touch();
        }
        current
    }

    fn lock_watches(&self) -> MutexGuard<'_, BTreeMap<String, WatchState>> {
        self.watches
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
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

    #[test]
    fn readiness_waits_for_every_registered_watch() {
        let live = LiveModel::new();
        live.watch_registered("pods");
        live.watch_registered("nodes");
        live.watch_listing("pods");
        live.watch_synced("pods");
        assert!(!live.is_ready());
        assert_eq!(live.age(), None, "not current while a watch has not synced");
        live.watch_listing("nodes");
        live.watch_synced("nodes");
        assert!(live.is_ready());
        assert!(live.age().is_some());
        // A watch added later (a new CRD) does not take readiness back.
        live.watch_registered("widgets.example.com");
        assert!(live.is_ready());
        assert!(!live.touch_if_current());
    }

    #[test]
    fn a_failing_watch_stops_the_model_from_being_current() {
        let live = LiveModel::new();
        live.watch_registered("pods");
        live.watch_registered("nodes");
        for name in ["pods", "nodes"] {
            live.watch_listing(name);
            live.watch_synced(name);
        }
        assert!(live.touch_if_current());
        live.watch_failed("pods", "connection refused".into());
        assert!(!live.touch_if_current());
        // Events of another watch do not make the model current either.
        live.watch_event("nodes");
        assert!(!live.touch_if_current());
        assert_eq!(live.failing_watches(), vec!["pods".to_owned()]);
        assert_eq!(live.watch_errors(), 1);
        let pods = &live.watch_states()["pods"];
        assert_eq!(pods.last_error.as_deref(), Some("connection refused"));
        // A re-list after the error counts as a restart and brings it back.
        live.watch_listing("pods");
        assert!(!live.touch_if_current());
        live.watch_synced("pods");
        assert!(live.touch_if_current());
        assert_eq!(live.watch_restarts(), 1);
        assert!(live.failing_watches().is_empty());
        live.watch_forgotten("pods");
        assert!(!live.watch_states().contains_key("pods"));
    }

    #[test]
    fn untouched_writes_leave_the_age_alone() {
        let live = LiveModel::new();
        drop(live.write_untouched());
        assert_eq!(live.age(), None);
    }
}
