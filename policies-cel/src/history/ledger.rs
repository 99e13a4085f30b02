//! The ledger of admitted disruption: records kept in time order, compacted to the longest
//! window a policy may ask about (`retention`) and bounded in number (`maxRecords`, the oldest
//! dropped first and counted), queried by window. It serialises as YAML or JSON, so a test
//! fixture, a file or a Kubernetes object can carry it.

use std::collections::VecDeque;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::history::duration;
use crate::history::record::{Figures, Record};

/// How far back a ledger keeps records unless told otherwise: the longest window a policy can
/// ask about.
pub const DEFAULT_RETENTION_SECONDS: i64 = 3600;
/// How many records a ledger keeps unless told otherwise.
pub const DEFAULT_MAX_RECORDS: usize = 10_000;

/// Why a window cannot be answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WindowError {
    #[error("a window must be longer than zero, got {0}")]
    NotPositive(String),
    #[error("the window {window} is longer than the history keeps ({retention})")]
    TooLong { window: String, retention: String },
}

/// The totals of the records in a window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// How many admitted requests disrupted something.
    pub requests: u64,
    /// What they disrupted, summed.
    pub figures: Figures,
}

/// Records of admitted disruption, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "LedgerDoc")]
pub struct Ledger {
    /// How far back records are kept: the longest window a query may name.
    #[serde(serialize_with = "duration::serialize")]
    retention: chrono::Duration,
    /// The most records kept; beyond it the oldest go first.
    max_records: usize,
    /// Records dropped for `max_records` while still inside `retention`: a window reaching past
    /// the oldest record kept may undercount.
    #[serde(default, skip_serializing_if = "is_zero")]
    dropped: u64,
    records: VecDeque<Record>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A ledger as written: every field optional, records in any order.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LedgerDoc {
    #[serde(default, with = "optional_duration")]
    retention: Option<chrono::Duration>,
    #[serde(default)]
    max_records: Option<usize>,
    #[serde(default)]
    dropped: u64,
    #[serde(default)]
    records: Vec<Record>,
}

mod optional_duration {
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<chrono::Duration>, D::Error> {
        let text = Option::<String>::deserialize(d)?;
        text.map(|t| crate::history::duration::parse(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}

impl From<LedgerDoc> for Ledger {
    fn from(doc: LedgerDoc) -> Self {
        let mut ledger = Ledger::with_limits(
            doc.retention.unwrap_or_else(default_retention),
            doc.max_records.unwrap_or(DEFAULT_MAX_RECORDS),
        );
        ledger.dropped = doc.dropped;
        let mut records = doc.records;
        records.sort_by_key(|r| r.time);
        for record in records {
            ledger.record(record);
        }
        ledger
    }
}

fn default_retention() -> chrono::Duration {
    chrono::Duration::seconds(DEFAULT_RETENTION_SECONDS)
}

impl Default for Ledger {
    fn default() -> Self {
        Self::with_limits(default_retention(), DEFAULT_MAX_RECORDS)
    }
}

impl Ledger {
    /// An empty ledger keeping `retention` of history, at most `max_records` records (at least
    /// one; a retention below a second is a second).
    pub fn with_limits(retention: chrono::Duration, max_records: usize) -> Self {
        Self {
            retention: retention.max(chrono::Duration::seconds(1)),
            max_records: max_records.max(1),
            dropped: 0,
            records: VecDeque::new(),
        }
    }

    /// How far back records are kept.
    pub fn retention(&self) -> chrono::Duration {
        self.retention
    }

    /// The most records kept.
    pub fn max_records(&self) -> usize {
        self.max_records
    }

    /// Records dropped to stay within `max_records` before they aged out.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The records, oldest first.
    pub fn records(&self) -> impl ExactSizeIterator<Item = &Record> {
        self.records.iter()
    }

    /// How many records are kept.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Adds `record` in time order, then compacts against the newest record's time and the
    /// size bound. A record already older than the retention is not kept.
    pub fn record(&mut self, record: Record) {
        let at = self.records.partition_point(|r| r.time <= record.time);
        self.records.insert(at, record);
        if let Some(newest) = self.records.back().map(|r| r.time) {
            self.compact(newest);
        }
        while self.records.len() > self.max_records {
            self.records.pop_front();
            self.dropped += 1;
        }
    }

    /// Drops the records older than `retention` before `now`.
    pub fn compact(&mut self, now: DateTime<Utc>) {
        let cutoff = now - self.retention;
        let old = self.records.partition_point(|r| r.time < cutoff);
        self.records.drain(..old);
    }

    /// The records admitted in the `window` that ends at `now`: later than `now - window`, not
    /// later than `now`.
    pub fn within(
        &self,
        now: DateTime<Utc>,
        window: chrono::Duration,
    ) -> Result<impl Iterator<Item = &Record>, WindowError> {
        if window <= chrono::Duration::zero() {
            return Err(WindowError::NotPositive(duration::format(&window)));
        }
        if window > self.retention {
            return Err(WindowError::TooLong {
                window: duration::format(&window),
                retention: duration::format(&self.retention),
            });
        }
        let start = now - window;
        let first = self.records.partition_point(|r| r.time <= start);
        let end = self.records.partition_point(|r| r.time <= now);
        Ok(self.records.range(first..end.max(first)))
    }

    /// The totals of the records in the `window` ending at `now` that `keep` selects.
    pub fn totals(
        &self,
        now: DateTime<Utc>,
        window: chrono::Duration,
        keep: impl Fn(&Record) -> bool,
    ) -> Result<Totals, WindowError> {
        Ok(self
            .within(now, window)?
            .filter(|r| keep(r))
            .fold(Totals::default(), |totals, r| Totals {
                requests: totals.requests + 1,
                figures: totals.figures.plus(&r.figures()),
            }))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap()
    }

    fn pod_delete(seconds: i64, user: &str) -> Record {
        let figures = Figures {
            deleted: 1,
            pods_disrupted: 1,
            ..Figures::default()
        };
        Record::new(at(seconds), user, "db", figures)
    }

    fn minutes(m: i64) -> chrono::Duration {
        chrono::Duration::minutes(m)
    }

    #[test]
    fn a_window_holds_what_was_admitted_after_its_start_up_to_now() {
        let mut ledger = Ledger::default();
        for s in [0, 60, 120, 599, 600] {
            ledger.record(pod_delete(s, "op"));
        }
        // (now - 10m, now]: at 600 the record at 0 is exactly 10 minutes old and out.
        let totals = ledger.totals(at(600), minutes(10), |_| true).unwrap();
        assert_eq!(totals.requests, 4);
        assert_eq!(totals.figures.pods_disrupted, 4);
        // A record later than `now` (a replay's future) is not counted.
        assert_eq!(ledger.totals(at(599), minutes(1), |_| true).unwrap().requests, 1);
        assert_eq!(
            ledger.totals(at(10_000), minutes(10), |_| true).unwrap().requests,
            0
        );
    }

    #[test]
    fn totals_keep_only_the_selected_records() {
        let mut ledger = Ledger::default();
        ledger.record(pod_delete(0, "a"));
        ledger.record(pod_delete(10, "b"));
        ledger.record(pod_delete(20, "a"));
        let by_a = ledger.totals(at(30), minutes(5), |r| r.user == "a").unwrap();
        assert_eq!((by_a.requests, by_a.figures.deleted), (2, 2));
    }

    #[test]
    fn records_out_of_order_are_kept_in_time_order() {
        let mut ledger = Ledger::default();
        ledger.record(pod_delete(30, "a"));
        ledger.record(pod_delete(10, "b"));
        ledger.record(pod_delete(20, "c"));
        let users: Vec<&str> = ledger.records().map(|r| r.user.as_str()).collect();
        assert_eq!(users, ["b", "c", "a"]);
    }

    #[test]
    fn compaction_drops_what_is_older_than_the_retention() {
        let mut ledger = Ledger::with_limits(minutes(10), 100);
        ledger.record(pod_delete(0, "a"));
        ledger.record(pod_delete(300, "a"));
        ledger.record(pod_delete(601, "a"));
        assert_eq!(ledger.len(), 2, "the record at 0 is more than 10m before 601");
        // A record already too old is not kept.
        ledger.record(pod_delete(-5, "a"));
        assert_eq!(ledger.len(), 2);
        ledger.compact(at(2000));
        assert!(ledger.is_empty());
        assert_eq!(ledger.dropped(), 0, "ageing out is not dropping");
    }

    #[test]
    fn the_size_bound_drops_the_oldest_and_counts_them() {
        let mut ledger = Ledger::with_limits(minutes(60), 3);
        for s in 0..5 {
            ledger.record(pod_delete(s, "a"));
        }
        assert_eq!(ledger.len(), 3);
        assert_eq!(ledger.dropped(), 2);
        assert_eq!(ledger.records().next().unwrap().time, at(2));
    }

    #[test]
    fn windows_longer_than_the_retention_or_not_positive_are_refused() {
        let ledger = Ledger::with_limits(minutes(10), 10);
        assert!(ledger.totals(at(0), minutes(10), |_| true).is_ok());
        assert_eq!(
            ledger
                .totals(at(0), minutes(11), |_| true)
                .unwrap_err()
                .to_string(),
            "the window 11m is longer than the history keeps (10m)"
        );
        assert!(ledger.totals(at(0), minutes(0), |_| true).is_err());
    }

    #[test]
    fn a_ledger_round_trips_through_yaml_and_json() {
        let mut ledger = Ledger::with_limits(minutes(30), 50);
        let mut record = pod_delete(0, "system:serviceaccount:db:op");
        record.workload = Some(crate::history::WorkloadRef {
            kind: "StatefulSet".into(),
            namespace: "db".into(),
            name: "pg".into(),
        });
        record.action = "delete Pod db/pg-0".into();
        ledger.record(record);
        let yaml = serde_yaml_ng::to_string(&ledger).unwrap();
        assert!(yaml.contains("retention: 30m"), "{yaml}");
        assert!(yaml.contains("podsDisrupted: 1"), "{yaml}");
        let back: Ledger = serde_yaml_ng::from_str(&yaml).unwrap();
        assert_eq!(back, ledger);
        let json = serde_json::to_string(&ledger).unwrap();
        assert_eq!(serde_json::from_str::<Ledger>(&json).unwrap(), ledger);
    }

    #[test]
    fn a_written_ledger_takes_defaults_sorts_and_refuses_unknown_fields() {
        let ledger: Ledger = serde_yaml_ng::from_str(
            "records:\n- {time: '2027-01-15T08:00:10Z', user: b, deleted: 1}\n- {time: '2027-01-15T08:00:00Z', user: a, podsDisrupted: 2}\n",
        )
        .unwrap();
        assert_eq!(ledger.retention(), minutes(60));
        assert_eq!(ledger.max_records(), DEFAULT_MAX_RECORDS);
        assert_eq!(ledger.records().next().unwrap().user, "a");
        let typo = serde_yaml_ng::from_str::<Ledger>(
            "records:\n- {time: '2027-01-15T08:00:00Z', user: a, podDisrupted: 2}\n",
        );
        assert!(typo.unwrap_err().to_string().contains("podDisrupted"));
    }
}
