//! A history fixture, as tests and `kubectl suture check --history` write it: a ledger whose
//! records may say `ago: 3m` instead of a time, and the `now` the request is judged at (the
//! clock when absent), so a suite's budget cases never depend on the day they run.
//!
//! ```yaml
//! now: "2027-01-15T08:10:00Z"    # optional
//! retention: 1h                  # optional: the longest window a policy may ask about
//! records:
//! - {ago: 4m, user: "system:serviceaccount:db:pg-operator", namespace: db,
//!    workload: {kind: StatefulSet, namespace: db, name: pg}, deleted: 1, podsDisrupted: 1}
//! - {time: "2027-01-15T08:09:00Z", user: alice, namespace: web, deleted: 3}
//! ```

use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::history::duration;
use crate::history::ledger::{DEFAULT_MAX_RECORDS, Ledger};
use crate::history::record::{Record, WorkloadRef};

/// A record of a fixture that cannot be placed in time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("records[{index}]: {message}")]
pub struct FixtureError {
    /// The record's position in `records` (from 0).
    pub index: usize,
    pub message: String,
}

/// A history fixture as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HistoryFixture {
    /// The time the request is judged at; absent, the clock's.
    #[serde(default)]
    pub now: Option<DateTime<Utc>>,
    /// How far back the ledger keeps records (Go duration; default 1h).
    #[serde(default)]
    pub retention: Option<String>,
    /// The most records the ledger keeps.
    #[serde(default)]
    pub max_records: Option<usize>,
    #[serde(default)]
    pub records: Vec<FixtureRecord>,
}

/// A record of a fixture: a ledger record whose time may be given as `ago`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FixtureRecord {
    #[serde(default)]
    pub time: Option<DateTime<Utc>>,
    /// How long before `now` (Go duration: `30s`, `4m`).
    #[serde(default)]
    pub ago: Option<String>,
    pub user: String,
    #[serde(default)]
    pub namespace: String,
    #[serde(default)]
    pub workload: Option<WorkloadRef>,
    #[serde(default)]
    pub action: String,
    #[serde(default)]
    pub deleted: u64,
    #[serde(default)]
    pub pods_disrupted: u64,
    #[serde(default)]
    pub data_loss: u64,
    #[serde(default)]
    pub workloads_down: u64,
}

impl HistoryFixture {
    /// The ledger the fixture describes, and the time to judge at (`now`, else `clock`).
    pub fn resolve(&self, clock: DateTime<Utc>) -> Result<(Ledger, DateTime<Utc>), FixtureError> {
        let now = self.now.unwrap_or(clock);
        let retention = match &self.retention {
            Some(text) => duration::parse(text).map_err(|message| FixtureError {
                index: 0,
                message: format!("retention: {message}"),
            })?,
            None => Ledger::default().retention(),
        };
        let mut ledger = Ledger::with_limits(retention, self.max_records.unwrap_or(DEFAULT_MAX_RECORDS));
        for (index, record) in self.records.iter().enumerate() {
            let fail = |message: String| FixtureError { index, message };
            let time = match (&record.time, &record.ago) {
                (Some(time), None) => *time,
                (None, Some(ago)) => now - duration::parse(ago).map_err(|m| fail(format!("ago: {m}")))?,
                (Some(_), Some(_)) => return Err(fail("give `time` or `ago`, not both".into())),
                (None, None) => return Err(fail("give its `time` (RFC 3339) or `ago` (e.g. 3m)".into())),
            };
            ledger.record(Record {
                time,
                user: record.user.clone(),
                namespace: record.namespace.clone(),
                workload: record.workload.clone(),
                action: record.action.clone(),
                deleted: record.deleted,
                pods_disrupted: record.pods_disrupted,
                data_loss: record.data_loss,
                workloads_down: record.workloads_down,
            });
        }
        Ok((ledger, now))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn clock() -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap()
    }

    #[test]
    fn ago_is_counted_back_from_now_or_the_clock() {
        let fixture: HistoryFixture =
            serde_yaml_ng::from_str("records:\n- {ago: 3m, user: a, deleted: 1}\n").unwrap();
        let (ledger, now) = fixture.resolve(clock()).unwrap();
        assert_eq!(now, clock());
        assert_eq!(
            ledger.records().next().unwrap().time,
            clock() - chrono::Duration::minutes(3)
        );

        let fixture: HistoryFixture = serde_yaml_ng::from_str(
            "now: '2027-01-15T08:10:00Z'\nretention: 2h\nrecords:\n- {ago: 90m, user: a}\n- {time: '2027-01-15T08:09:00Z', user: b}\n",
        )
        .unwrap();
        let (ledger, now) = fixture.resolve(clock()).unwrap();
        assert_eq!(now.to_rfc3339(), "2027-01-15T08:10:00+00:00");
        assert_eq!(ledger.retention(), chrono::Duration::hours(2));
        let users: Vec<&str> = ledger.records().map(|r| r.user.as_str()).collect();
        assert_eq!(users, ["a", "b"]);
    }

    #[test]
    fn a_record_without_a_time_or_with_two_is_an_error_naming_it() {
        let fixture: HistoryFixture =
            serde_yaml_ng::from_str("records:\n- {ago: 1m, user: a}\n- {user: b}\n").unwrap();
        assert_eq!(
            fixture.resolve(clock()).unwrap_err().to_string(),
            "records[1]: give its `time` (RFC 3339) or `ago` (e.g. 3m)"
        );
        let fixture: HistoryFixture = serde_yaml_ng::from_str("records:\n- {ago: soon, user: a}\n").unwrap();
        assert!(
            fixture
                .resolve(clock())
                .unwrap_err()
                .to_string()
                .starts_with("records[0]: ago:")
        );
    }
}
