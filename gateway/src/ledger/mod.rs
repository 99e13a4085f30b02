//! The ledger of admitted disruption the `history` CEL variable reads, shared by every gateway
//! replica through the Kubernetes API.
//!
//! Each replica owns one ConfigMap, its *shard* ([`shard`]), in the ledger namespace: the
//! records of the requests it admitted, compacted to the ledger's retention and bounded in
//! number, written by one asynchronous [`writer`] at most every flush interval — so the
//! admission answer never waits for the API server (it only wakes the writer through a bounded
//! queue; a full queue is counted, and the record still goes out with the next write). Every replica watches every shard
//! ([`sync`]) and judges against the union: its own records at once, another replica's as soon as
//! that replica's next write reaches it through the watch. A replica that restarts under the
//! same identity takes its shard back; under a new one (a new pod name) the old shard is still
//! read until its records age out, and then deleted. Records hold times, the requester, the
//! namespace, the workload and summary figures, never object bodies.
//!
//! How far a budget can be overshot: a replica does not see what the others admitted during
//! the last flush interval plus the watch's propagation (typically tens of milliseconds). With N
//! replicas, a budget can be exceeded by at most what the other N − 1 replicas admit in that
//! time; one replica alone never overshoots (a request it records is checked against its
//! latest records in [`SharedLedger::turn`]).

pub mod shard;
pub mod sync;
pub mod writer;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use chrono::{DateTime, Utc};
use policies_cel::history::{DEFAULT_MAX_RECORDS, Ledger, Record};
use tokio::sync::mpsc;

/// What a replica knows: its own records, the other shards' as last read, and their union.
#[derive(Debug)]
struct State {
    own: Ledger,
    /// Shard (ConfigMap) name → its records, for every shard but this replica's.
    others: BTreeMap<String, Vec<Record>>,
    /// `own` and every shard in `others`, in time order: what evaluations read.
    merged: Ledger,
}

/// The ledger one gateway replica judges with and records into.
#[derive(Debug)]
pub struct SharedLedger {
    shard: String,
    state: RwLock<State>,
    /// Held while a request to be recorded is checked against the latest records and recorded
    /// ([`Self::turn`]).
    turns: Mutex<()>,
    /// Bumped whenever the union changes (a record, a shard read or gone).
    version: AtomicU64,
    /// Wakes the writer: one entry per record not yet published; `None` when the ledger is this
    /// process's alone (offline mode).
    queue: Option<mpsc::Sender<()>>,
    queued: AtomicU64,
    queue_full: AtomicU64,
    writes: AtomicU64,
    write_failures: AtomicU64,
}

/// How many records a merged view keeps: every replica's bound, for a few replicas.
const MERGED_MAX_RECORDS: usize = DEFAULT_MAX_RECORDS * 4;

impl SharedLedger {
    /// A ledger kept in this process only (offline mode: nothing to share it with).
    pub fn local(identity: &str) -> Self {
        Self::new(identity, None)
    }

    /// A ledger shared through the shard of `identity`; the receiver wakes the [`writer`], with
    /// `capacity` records at most waiting to be published.
    pub fn shared(identity: &str, capacity: usize) -> (Self, mpsc::Receiver<()>) {
        let (sender, receiver) = mpsc::channel(capacity.max(1));
        (Self::new(identity, Some(sender)), receiver)
    }

    fn new(identity: &str, queue: Option<mpsc::Sender<()>>) -> Self {
        let merged = Ledger::with_limits(Ledger::default().retention(), MERGED_MAX_RECORDS);
        Self {
            shard: shard::name_for(identity),
            turns: Mutex::new(()),
            version: AtomicU64::new(0),
            state: RwLock::new(State {
                own: Ledger::default(),
                others: BTreeMap::new(),
                merged,
            }),
            queue,
            queued: AtomicU64::new(0),
            queue_full: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            write_failures: AtomicU64::new(0),
        }
    }

    /// The name of this replica's shard (ConfigMap).
    pub fn shard(&self) -> &str {
        &self.shard
    }

    fn read_state(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write_state(&self) -> RwLockWriteGuard<'_, State> {
        self.state
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// This replica's turn to record: held while a request is checked against the latest
    /// records ([`Self::version`]) and recorded, so that concurrent requests of one replica never
    /// spend the same budget twice.
    pub fn turn(&self) -> MutexGuard<'_, ()> {
        self.turns.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The turn if no one holds it now (a trial on an async worker does not wait for it).
    pub fn try_turn(&self) -> Option<MutexGuard<'_, ()>> {
        match self.turns.try_lock() {
            Ok(turn) => Some(turn),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Changes whenever the union does: equal before and after an evaluation, the evaluation saw
    /// the latest records.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn changed(&self) {
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// Runs `read` over every replica's records (what an evaluation judges with).
    pub fn with_view<R>(&self, read: impl FnOnce(&Ledger) -> R) -> R {
        read(&self.read_state().merged)
    }

    /// Records an admitted request: this replica judges with it at once, and the writer
    /// publishes it with the next write of the shard. Never blocks: when the writer's queue is
    /// full (it is behind: the API server is slow or refuses the writes) the request is counted
    /// ([`Self::queue_full`]); its record is published with the writer's next write all the same.
    pub fn record(&self, record: Record) {
        if let Some(queue) = &self.queue {
            match queue.try_send(()) {
                Ok(()) => {
                    self.queued.fetch_add(1, Ordering::Relaxed);
                }
                Err(_) => {
                    self.queue_full.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        let mut state = self.write_state();
        state.own.record(record.clone());
        state.merged.record(record);
        self.changed();
    }

    /// A shard as the watch read it. This replica's own shard is taken only while it knows
    /// nothing of its own (a restart under the same identity): afterwards its memory is ahead of
    /// what it wrote.
    pub fn shard_read(&self, name: &str, records: Vec<Record>) {
        let mut state = self.write_state();
        if name == self.shard {
            if state.own.is_empty() && !records.is_empty() {
                for record in records {
                    state.own.record(record);
                }
                rebuild(&mut state);
                self.changed();
            }
            return;
        }
        state.others.insert(name.to_owned(), records);
        rebuild(&mut state);
        self.changed();
    }

    /// A shard deleted (its replica's records aged out, or someone removed it).
    pub fn shard_deleted(&self, name: &str) {
        let mut state = self.write_state();
        if state.others.remove(name).is_some() {
            rebuild(&mut state);
            self.changed();
        }
    }

    /// After a complete list: shards not in `names` are gone.
    pub fn shards_listed(&self, names: &[String]) {
        let mut state = self.write_state();
        let before = state.others.len();
        state.others.retain(|name, _| names.contains(name));
        if state.others.len() != before {
            rebuild(&mut state);
            self.changed();
        }
    }

    /// The other replicas' shards whose every record is older than the retention at `now`: a
    /// replica that left; the writer deletes them.
    pub fn expired_shards(&self, now: DateTime<Utc>) -> Vec<String> {
        let state = self.read_state();
        let cutoff = now - state.merged.retention();
        state
            .others
            .iter()
            .filter(|(_, records)| records.iter().all(|r| r.time < cutoff))
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// This replica's own records, compacted to `now`: what its shard should hold.
    pub fn own_records(&self, now: DateTime<Utc>) -> Ledger {
        let mut own = self.read_state().own.clone();
        own.compact(now);
        own
    }

    /// Records in the union now.
    pub fn len(&self) -> usize {
        self.read_state().merged.len()
    }

    /// True when no replica recorded anything still kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records handed to the writer since start.
    pub fn queued(&self) -> u64 {
        self.queued.load(Ordering::Relaxed)
    }

    /// Records that found the writer's queue full since start.
    pub fn queue_full(&self) -> u64 {
        self.queue_full.load(Ordering::Relaxed)
    }

    /// Counts one write of this replica's shard.
    pub fn wrote(&self, ok: bool) {
        let counter = if ok { &self.writes } else { &self.write_failures };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Shard writes since start: (succeeded, failed).
    pub fn writes(&self) -> (u64, u64) {
        (
            self.writes.load(Ordering::Relaxed),
            self.write_failures.load(Ordering::Relaxed),
        )
    }
}

/// Rebuilds the union from this replica's records and every other shard's.
fn rebuild(state: &mut State) {
    let mut records: Vec<Record> = state
        .own
        .records()
        .cloned()
        .chain(state.others.values().flatten().cloned())
        .collect();
    records.sort_by_key(|r| r.time);
    let mut merged = Ledger::with_limits(state.merged.retention(), MERGED_MAX_RECORDS);
    for record in records {
        merged.record(record);
    }
    state.merged = merged;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use policies_cel::history::Figures;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap()
    }

    fn pods(seconds: i64, user: &str, pods: u64) -> Record {
        let figures = Figures {
            pods_disrupted: pods,
            deleted: pods,
            ..Figures::default()
        };
        Record::new(at(seconds), user, "db", figures)
    }

    fn pods_in_window(ledger: &SharedLedger, now: i64) -> u64 {
        ledger.with_view(|l| {
            l.totals(at(now), chrono::Duration::minutes(10), |_| true)
                .unwrap()
                .figures
                .pods_disrupted
        })
    }

    #[test]
    fn a_replica_judges_with_its_own_records_and_every_other_shard() {
        let (ledger, mut queue) = SharedLedger::shared("gateway-a", 8);
        ledger.record(pods(0, "op", 1));
        assert!(queue.try_recv().is_ok(), "the writer is woken");
        ledger.shard_read(
            "suture-ledger-gateway-b",
            vec![pods(10, "op", 2), pods(20, "op", 3)],
        );
        assert_eq!(pods_in_window(&ledger, 30), 6);
        // A newer read of b's shard replaces the older one.
        ledger.shard_read("suture-ledger-gateway-b", vec![pods(20, "op", 3)]);
        assert_eq!(pods_in_window(&ledger, 30), 4);
        ledger.shard_deleted("suture-ledger-gateway-b");
        assert_eq!(pods_in_window(&ledger, 30), 1);
        assert_eq!((ledger.queued(), ledger.queue_full()), (1, 0));
    }

    #[test]
    fn the_own_shard_is_taken_back_only_after_a_restart() {
        let ledger = SharedLedger::local("gateway-a");
        let own = ledger.shard().to_owned();
        ledger.shard_read(&own, vec![pods(0, "op", 5)]);
        assert_eq!(pods_in_window(&ledger, 10), 5, "a restart takes its shard back");
        // Once it knows its own records, its memory is ahead of the shard.
        ledger.shard_read(&own, vec![]);
        assert_eq!(pods_in_window(&ledger, 10), 5);
        assert_eq!(ledger.own_records(at(10)).len(), 1);
    }

    #[test]
    fn the_version_changes_with_every_change_of_the_union() {
        let ledger = SharedLedger::local("gateway-a");
        let mut seen = vec![ledger.version()];
        ledger.record(pods(0, "op", 1));
        seen.push(ledger.version());
        ledger.shard_read("suture-ledger-b", vec![pods(1, "op", 1)]);
        seen.push(ledger.version());
        ledger.shard_deleted("suture-ledger-b");
        seen.push(ledger.version());
        seen.dedup();
        assert_eq!(seen.len(), 4, "{seen:?}");
        ledger.shard_deleted("suture-ledger-b");
        assert_eq!(ledger.version(), seen[3], "nothing changed");
    }

    #[test]
    fn a_full_queue_is_counted_and_loses_nothing() {
        let (ledger, _queue) = SharedLedger::shared("gateway-a", 1);
        ledger.record(pods(0, "op", 1));
        ledger.record(pods(1, "op", 1));
        assert_eq!((ledger.queued(), ledger.queue_full()), (1, 1));
        assert_eq!(
            pods_in_window(&ledger, 5),
            2,
            "both judge this replica's requests"
        );
        assert_eq!(ledger.own_records(at(5)).len(), 2, "both are in the next write");
    }

    #[test]
    fn shards_of_replicas_that_left_expire_and_a_relist_forgets_missing_ones() {
        let ledger = SharedLedger::local("gateway-a");
        ledger.shard_read("suture-ledger-old", vec![pods(0, "op", 1)]);
        ledger.shard_read("suture-ledger-gateway-b", vec![pods(4000, "op", 1)]);
        assert_eq!(ledger.expired_shards(at(4000)), ["suture-ledger-old"]);
        ledger.shards_listed(&["suture-ledger-old".to_owned()]);
        assert_eq!(pods_in_window(&ledger, 4000), 0);
    }
}
