//! The gateway's shared view of the cluster: one [`ClusterModel`] behind a read-write lock,
//! with the two facts the webhook needs beside it — whether the initial lists are in (readiness)
//! and how long ago the model was last known to be current (staleness).
//!
//! In live mode both facts come from the watch registry ([`watches`]): readiness waits for
//! every watch, while currency considers only the watches that feed the model, not those that
//! feed the policy set.
//!
//! Watchers (live mode) and the snapshot reloader (offline mode) are the only writers; admission
//! requests take read locks for the duration of one evaluation, arranged ([`gate`]) so that an
//! evaluation running to its budget delays the writers but never the other requests.

mod gate;
mod watches;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use policies_cel::cluster::ClusterModel;

pub use gate::LongRead;
use gate::ModelGate;
use watches::Watches;
pub use watches::{Feeds, WatchState, WatchTotals};

/// The live cluster model shared between writers and the admission path.
#[derive(Debug, Default)]
pub struct LiveModel {
    model: ModelGate<ClusterModel>,
    ready: AtomicBool,
    /// Milliseconds since the Unix epoch when the model was last known current; 0 = never.
    current_at_ms: AtomicU64,
    /// Live mode: every watch, feeding the model or the policy set, with its state.
    watches: Mutex<Watches>,
    /// Fed by watches, the model mirrors kube-apiserver: an object a request changes that it
    /// lacks is one not delivered yet (offline, snapshots may leave objects out).
    mirrors_cluster: bool,
}

impl LiveModel {
    /// An empty model that is not ready yet, to be fed by watches (live mode).
    pub fn new() -> Self {
        Self {
            mirrors_cluster: true,
            ..Self::default()
        }
    }

    /// A model that starts from `model` and is ready at once (offline mode).
    pub fn ready_with(model: ClusterModel) -> Self {
        let live = Self::default();
        live.replace(model);
        live.mark_ready();
        live
    }

    /// True in live mode: the model mirrors kube-apiserver through watches
    /// ([`policies_cel::EvalContext::live`]).
    pub fn mirrors_cluster(&self) -> bool {
        self.mirrors_cluster
    }

    /// A read view for one evaluation on the evaluation threads, which may run to its budget:
    /// it yields to a waiting writer, and a writer waits for it without holding up short
    /// readers ([`gate`]). A writer that panicked leaves the model usable: its insert/remove
    /// either completed or left the model as it was.
    pub fn read(&self) -> LongRead<'_, ClusterModel> {
        self.model.read_long()
    }

    /// A read view for a short look (counts, a lookup, a list's difference).
    pub fn read_briefly(&self) -> RwLockReadGuard<'_, ClusterModel> {
        self.model.read_briefly()
    }

    /// A read view if no writer holds the model or is taking it now (an evaluation on an async
    /// worker must not wait for a re-list).
    pub fn try_read(&self) -> Option<RwLockReadGuard<'_, ClusterModel>> {
        self.model.try_read()
    }

    /// A write view for a watcher applying events; marks the model current.
    pub fn write(&self) -> RwLockWriteGuard<'_, ClusterModel> {
        let guard = self.model.write();
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

/// Live mode: how the watches report their progress. Each watch registers with its role
/// ([`Feeds`]). Readiness flips once every watch registered so far has synced, whatever it feeds
/// (the policy set's scope must be known before the first request). The model counts as current
/// (see [`LiveModel::age`]) only while every watch feeding the model is synced and none of them
/// is failing, so a failing model watch makes the age grow; a failing watch feeding the policy
/// set does not (the last good policy set keeps serving), and shows in the watch states only.
impl LiveModel {
    /// A write view that does not mark the model current: watchers apply events through it and
    /// decide separately whether the model is current (one failing model watch means it is not).
    pub fn write_untouched(&self) -> RwLockWriteGuard<'_, ClusterModel> {
        self.model.write()
    }

    /// Registers a watch feeding `feeds` (not synced yet); registering an existing one keeps
    /// its state.
    pub fn watch_registered(&self, name: &str, feeds: Feeds) {
        self.lock_watches().register(name, feeds);
    }

    /// Readiness waits, beside the registered watches, until `reason` is released: watches
    /// that can only be registered once others have synced (the params of the policies found in
    /// the cluster).
    pub fn readiness_held(&self, reason: &str) {
        self.lock_watches().hold(reason);
    }

    /// Releases [`LiveModel::readiness_held`]; readiness flips if every watch has synced.
    pub fn readiness_released(&self, reason: &str) {
        let mut watches = self.lock_watches();
        watches.release(reason);
        if watches.ready() {
            self.mark_ready();
        }
    }

    /// Every registered watch has completed its latest list.
    pub fn watches_synced(&self) -> bool {
        self.lock_watches().all_synced()
    }

    /// Forgets a watch that was stopped (a CustomResourceDefinition deleted, a param kind no
    /// policy names any more); its errors and restarts stay in its role's totals.
    pub fn watch_forgotten(&self, name: &str) {
        let mut watches = self.lock_watches();
        watches.forget(name);
        self.after_change(&watches);
    }

    /// A watch starts a list (the first, or a re-list): what it feeds is not current until the
    /// list is complete.
    pub fn watch_listing(&self, name: &str) {
        let mut watches = self.lock_watches();
        let state = watches.state(name);
        state.lists += 1;
        state.synced = false;
        self.after_change(&watches);
    }

    /// A watch completed a list: it is synced and healthy; readiness flips when it was the last.
    pub fn watch_synced(&self, name: &str) {
        let mut watches = self.lock_watches();
        let state = watches.state(name);
        state.synced = true;
        state.failing = false;
        state.last_error = None;
        if watches.ready() {
            self.mark_ready();
        }
        self.after_change(&watches);
    }

    /// A watch delivered an event: it is healthy again.
    pub fn watch_event(&self, name: &str) {
        let mut watches = self.lock_watches();
        if let Some(state) = watches.registered(name) {
            state.failing = false;
            state.last_error = None;
        }
        self.after_change(&watches);
    }

    /// A watch failed with `error` (a message without object bodies); it reconnects with backoff.
    /// Returns what the watch feeds, for the caller's log line.
    pub fn watch_failed(&self, name: &str, error: String) -> Feeds {
        let mut watches = self.lock_watches();
        let state = watches.state(name);
        state.failing = true;
        state.errors += 1;
        state.last_error = Some(error);
        state.feeds
    }

    /// Marks the model current when every watch feeding it is synced and none of them is
    /// failing (the heartbeat between events); returns whether it did.
    pub fn touch_if_current(&self) -> bool {
        let watches = self.lock_watches();
        self.after_change(&watches)
    }

    /// Every watch's state, by name.
    pub fn watch_states(&self) -> BTreeMap<String, WatchState> {
        self.lock_watches().states().clone()
    }

    /// Errors, restarts and failing watches since start among the watches feeding `feeds`.
    pub fn watch_totals(&self, feeds: Feeds) -> WatchTotals {
        self.lock_watches().totals(feeds)
    }

    /// Watch errors since start, over all watches.
    pub fn watch_errors(&self) -> u64 {
        Feeds::ALL
            .iter()
            .map(|&feeds| self.watch_totals(feeds).errors)
            .sum()
    }

    /// Watch restarts (re-lists) since start, over all watches.
    pub fn watch_restarts(&self) -> u64 {
        Feeds::ALL
            .iter()
            .map(|&feeds| self.watch_totals(feeds).restarts)
            .sum()
    }

    /// Names of the watches that are failing now, whatever they feed.
    pub fn failing_watches(&self) -> Vec<String> {
        self.lock_watches()
            .states()
            .iter()
            .filter(|(_, w)| w.failing)
            .map(|(name, _)| name.clone())
            .collect()
    }

    fn after_change(&self, watches: &Watches) -> bool {
        let current = watches.model_is_current();
        if current {
            self.touch();
        }
        current
    }

    fn lock_watches(&self) -> MutexGuard<'_, Watches> {
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

    /// A live model whose watches have all synced, last known current `seconds` ago.
    fn synced(watches: &[(&str, Feeds)], seconds: u64) -> LiveModel {
        let live = LiveModel::new();
        for &(name, feeds) in watches {
            live.watch_registered(name, feeds);
        }
        for &(name, _) in watches {
            live.watch_listing(name);
            live.watch_synced(name);
        }
        live.current_at_ms
            .store(now_ms() - seconds * 1000, Ordering::Relaxed);
        live
    }

    const PARAMS: &str = "SafetyPackParams suture.dev/v1alpha1 (params)";

    #[test]
    fn readiness_waits_for_every_registered_watch() {
        let live = LiveModel::new();
        live.watch_registered("pods", Feeds::Model);
        live.watch_registered("nodes", Feeds::Model);
        live.watch_listing("pods");
        live.watch_synced("pods");
        assert!(!live.is_ready());
        assert_eq!(live.age(), None, "not current while a watch has not synced");
        live.watch_listing("nodes");
        live.watch_synced("nodes");
        assert!(live.is_ready());
        assert!(live.age().is_some());
        // A watch added later (a new CRD) does not take readiness back.
        live.watch_registered("widgets.example.com", Feeds::Model);
        assert!(live.is_ready());
        assert!(!live.touch_if_current());
    }

    #[test]
    fn readiness_waits_for_the_watches_feeding_the_policy_set_too() {
        let live = LiveModel::new();
        live.watch_registered("pods", Feeds::Model);
        live.watch_registered("safetypolicies.suture.dev", Feeds::Policies);
        live.watch_listing("pods");
        live.watch_synced("pods");
        assert!(!live.is_ready(), "ready before the policies were listed");
        assert!(
            live.touch_if_current(),
            "the model is current once its own watches are in"
        );
        live.watch_listing("safetypolicies.suture.dev");
        live.watch_synced("safetypolicies.suture.dev");
        assert!(live.is_ready());
    }

    #[test]
    fn a_readiness_hold_keeps_the_model_unready_until_released() {
        let live = LiveModel::new();
        live.readiness_held("params");
        live.watch_registered("pods", Feeds::Model);
        live.watch_listing("pods");
        live.watch_synced("pods");
        assert!(live.watches_synced());
        assert!(!live.is_ready(), "ready while held");
        // Released with a watch registered meanwhile: readiness waits for that one too.
        live.watch_registered(PARAMS, Feeds::Policies);
        live.readiness_released("params");
        assert!(!live.is_ready());
        live.watch_listing(PARAMS);
        live.watch_synced(PARAMS);
        assert!(live.is_ready());
    }

    #[test]
    fn a_failing_watch_stops_the_model_from_being_current() {
        let live = synced(&[("pods", Feeds::Model), ("nodes", Feeds::Model)], 0);
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
        assert_eq!(
            (live.watch_errors(), live.watch_restarts()),
            (1, 1),
            "a forgotten watch's counts stay (the exported counters never go down)"
        );
    }

    #[test]
    fn a_failing_policy_set_watch_leaves_the_model_current() {
        let live = synced(&[("pods", Feeds::Model), (PARAMS, Feeds::Policies)], 30);
        assert_eq!(
            live.watch_failed(PARAMS, "connection refused".into()),
            Feeds::Policies
        );
        // Failing and re-listing (a list that does not come back): the heartbeat still marks
        // the model current, so its age stays small.
        live.watch_listing(PARAMS);
        assert!(live.touch_if_current());
        assert!(live.age().is_some_and(|age| age < Duration::from_secs(5)));
        assert_eq!(live.failing_watches(), vec![PARAMS.to_owned()]);
        let totals = live.watch_totals(Feeds::Policies);
        assert_eq!((totals.errors, totals.restarts, totals.failing), (1, 1, 1));
        assert_eq!(live.watch_totals(Feeds::Model), WatchTotals::default());
    }

    #[test]
    fn a_failing_model_watch_lets_the_age_grow_whatever_the_policy_watches_do() {
        let live = synced(&[("pods", Feeds::Model), (PARAMS, Feeds::Policies)], 30);
        assert_eq!(
            live.watch_failed("pods", "connection refused".into()),
            Feeds::Model
        );
        assert!(!live.touch_if_current());
        live.watch_event(PARAMS);
        assert!(
            live.age().is_some_and(|age| age >= Duration::from_secs(30)),
            "a policy watch's event marked the model current"
        );
        assert_eq!(live.watch_totals(Feeds::Model).failing, 1);
        assert_eq!(live.watch_totals(Feeds::Policies).failing, 0);
    }

    #[test]
    fn a_watch_reporting_before_it_registered_counts_as_feeding_the_model() {
        let live = synced(&[("pods", Feeds::Model)], 30);
        assert_eq!(live.watch_failed("nodes", "refused".into()), Feeds::Model);
        assert!(!live.touch_if_current());
        // Registering it later gives it its role and keeps its state.
        live.watch_registered("nodes", Feeds::Policies);
        assert!(live.watch_states()["nodes"].failing);
        assert!(live.touch_if_current());
    }

    #[test]
    fn untouched_writes_leave_the_age_alone() {
        let live = LiveModel::new();
        drop(live.write_untouched());
        assert_eq!(live.age(), None);
    }
}
