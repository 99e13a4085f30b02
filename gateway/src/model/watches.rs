//! The registry of live mode's watches: each watch's role ([`Feeds`]: the cluster model or the
//! policy set) and state ([`WatchState`]), and the two facts derived from them — whether every
//! watch has synced (readiness) and whether every watch feeding the model is synced and healthy
//! (the model is current). A failing watch that feeds the policy set does not make the model
//! stale: the policy set has its own protection, a missing or broken update keeps the last good
//! set serving.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

/// What a watch feeds, which decides what its failure means.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Feeds {
    /// The cluster model (the kinds the impact estimate reads, custom resource instances): while
    /// it fails the model is not current, and its age grows.
    #[default]
    Model,
    /// The policy set (cluster policy objects, params objects): while it fails the last good set
    /// keeps serving and the model stays current.
    Policies,
    /// The shared ledger of admitted disruption (the other replicas' shards): while it fails
    /// this replica judges `history` with what it last read and its own records.
    History,
}

impl Feeds {
    /// Both roles, for series that exist from the start.
    pub const ALL: [Feeds; 3] = [Feeds::Model, Feeds::Policies, Feeds::History];

    /// The role's label in metrics and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Feeds::Model => "model",
            Feeds::Policies => "policies",
            Feeds::History => "history",
        }
    }

    /// What a failing watch of this role means for admission, for `/readyz` and logs.
    pub fn while_failing(self) -> &'static str {
        match self {
            Feeds::Model => {
                "the cluster model is not current until the watch re-lists; past --max-model-age, \
                 policies that read impact follow their failure policy"
            }
            Feeds::Policies => "the policy set keeps its last good version; the cluster model stays current",
            Feeds::History => {
                "`history` counts what this replica last read of the other replicas' shards, and its own \
                 records; the cluster model stays current"
            }
        }
    }
}

impl fmt::Display for Feeds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The state of one watch (live mode), for readiness, staleness, metrics and logs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchState {
    /// What the watch feeds.
    pub feeds: Feeds,
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

/// Errors and restarts of the watches of one role since start, stopped watches included (so
/// the counters exported from them never go down).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WatchTotals {
    pub errors: u64,
    pub restarts: u64,
    /// Watches failing now.
    pub failing: u64,
}

/// Every watch's state by name, the counts of the watches stopped since start, and what else
/// readiness waits for.
#[derive(Debug, Default)]
pub(super) struct Watches {
    states: BTreeMap<String, WatchState>,
    stopped: BTreeMap<Feeds, WatchTotals>,
    /// Readiness also waits until these are released (watches not registered yet).
    holds: BTreeSet<String>,
}

impl Watches {
    /// Registers `name` as feeding `feeds`; an existing watch keeps its state.
    pub(super) fn register(&mut self, name: &str, feeds: Feeds) {
        self.states.entry(name.to_owned()).or_default().feeds = feeds;
    }

    /// The state of `name`; a watch reporting before it registered counts as feeding the model
    /// (the cautious reading: its failure makes the model stale).
    pub(super) fn state(&mut self, name: &str) -> &mut WatchState {
        self.states.entry(name.to_owned()).or_default()
    }

    /// The state of `name` if it is registered.
    pub(super) fn registered(&mut self, name: &str) -> Option<&mut WatchState> {
        self.states.get_mut(name)
    }

    /// Removes a stopped watch, keeping its errors and restarts in its role's totals.
    pub(super) fn forget(&mut self, name: &str) {
        if let Some(state) = self.states.remove(name) {
            let totals = self.stopped.entry(state.feeds).or_default();
            totals.errors += state.errors;
            totals.restarts += state.restarts();
        }
    }

    /// Every registered watch (of either role) has completed its latest list.
    pub(super) fn all_synced(&self) -> bool {
        self.states.values().all(|w| w.synced)
    }

    /// Readiness may flip: every watch has synced and nothing holds it.
    pub(super) fn ready(&self) -> bool {
        self.holds.is_empty() && self.all_synced()
    }

    pub(super) fn hold(&mut self, reason: &str) {
        self.holds.insert(reason.to_owned());
    }

    pub(super) fn release(&mut self, reason: &str) {
        self.holds.remove(reason);
    }

    /// The model is current: some watch feeds it, and every one that does is synced and
    /// healthy. Watches feeding the policy set do not count.
    pub(super) fn model_is_current(&self) -> bool {
        let mut feeding = self
            .states
            .values()
            .filter(|w| w.feeds == Feeds::Model)
            .peekable();
        feeding.peek().is_some() && feeding.all(WatchState::is_current)
    }

    pub(super) fn states(&self) -> &BTreeMap<String, WatchState> {
        &self.states
    }

    /// Errors, restarts and failing watches of the role `feeds`.
    pub(super) fn totals(&self, feeds: Feeds) -> WatchTotals {
        let stopped = self.stopped.get(&feeds).copied().unwrap_or_default();
        self.states
            .values()
            .filter(|w| w.feeds == feeds)
            .fold(stopped, |totals, w| WatchTotals {
                errors: totals.errors + w.errors,
                restarts: totals.restarts + w.restarts(),
                failing: totals.failing + u64::from(w.failing),
            })
    }
}
