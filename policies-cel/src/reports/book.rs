//! The results kept for the reports: keyed by policy, rule, object and requester, grouped by
//! namespace, refreshed by repeats, aged out after a window, bounded per report, and marked
//! dirty when they change so that a writer sends only the reports that did.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};

use crate::eval::Failure;
use crate::impact::Summary;
use crate::policy::Action;
use crate::reports::Subject;

/// A result's `result`: `fail` (the policy's action is Deny or Audit) or `warn` (Warn alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Fail,
    Warn,
}

impl Outcome {
    /// The outcome of a failure that went through `actions`.
    pub fn of(actions: &[Action]) -> Self {
        if actions.iter().any(|a| matches!(a, Action::Deny | Action::Audit)) {
            Outcome::Fail
        } else {
            Outcome::Warn
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Fail => "fail",
            Outcome::Warn => "warn",
        }
    }
}

/// What identifies a result: one per policy × rule × object × requester.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ResultKey {
    pub policy: String,
    /// `validations[i]`, or `policy` when the policy failed as a whole (it could not be
    /// evaluated under failurePolicy Fail).
    pub rule: String,
    pub subject: Subject,
    pub requester: String,
}

/// One result as kept: its latest message and figures, and how often and when it was seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub outcome: Outcome,
    pub message: String,
    pub binding: Option<String>,
    pub actions: Vec<Action>,
    pub operation: String,
    pub severity: Option<String>,
    /// The impact's non-zero headline figures of the latest request (by their names in
    /// `impact.summary`), when a policy read `impact`.
    pub impact: BTreeMap<String, u64>,
    pub first: DateTime<Utc>,
    pub last: DateTime<Utc>,
    pub count: u64,
    /// Of `count`, the occurrences not in a report written yet ([`ReportBook::written`]).
    pub unwritten: u64,
}

/// A judged request whose decision has failures.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    pub subject: &'a Subject,
    pub requester: &'a str,
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: &'a str,
    pub time: DateTime<Utc>,
    pub failures: &'a [Failure],
    pub impact: Option<&'a Summary>,
}

/// The longest message a result keeps (a message expression can build long text).
const MAX_MESSAGE: usize = 1024;

/// The results of every report, by namespace (`""`: the cluster report).
#[derive(Debug, Clone)]
pub struct ReportBook {
    reports: BTreeMap<String, BTreeMap<ResultKey, Entry>>,
    dirty: BTreeSet<String>,
    window: Duration,
    max_per_report: usize,
}

impl ReportBook {
    /// A book whose results age out `window` after they were last seen, at most
    /// `max_per_report` per report (the least recently seen go first).
    pub fn new(window: Duration, max_per_report: usize) -> Self {
        Self {
            reports: BTreeMap::new(),
            dirty: BTreeSet::new(),
            window,
            max_per_report: max_per_report.max(1),
        }
    }

    /// How long results are kept after they were last seen.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// Records every failure of `seen`; `severity` gives a policy's declared severity.
    pub fn observe(&mut self, seen: &Seen<'_>, severity: impl Fn(&str) -> Option<String>) {
        if seen.failures.is_empty() {
            return;
        }
        let scope = seen.subject.namespace.clone();
        let max = self.max_per_report;
        let report = self.reports.entry(scope.clone()).or_default();
        for failure in seen.failures {
            let key = ResultKey {
                policy: failure.policy.clone(),
                rule: failure
                    .validation
                    .map_or_else(|| "policy".to_owned(), |i| format!("validations[{i}]")),
                subject: seen.subject.clone(),
                requester: seen.requester.to_owned(),
            };
            let message = bounded(&failure.message);
            match report.get_mut(&key) {
                Some(entry) => {
                    entry.outcome = Outcome::of(&failure.actions);
                    entry.message = message;
                    entry.binding.clone_from(&failure.binding);
                    entry.actions.clone_from(&failure.actions);
                    seen.operation.clone_into(&mut entry.operation);
                    entry.impact = figures(seen.impact);
                    entry.last = entry.last.max(seen.time);
                    entry.count += 1;
                    entry.unwritten += 1;
                }
                None => {
                    if report.len() >= max {
                        evict_oldest(report);
                    }
                    report.insert(
                        key,
                        Entry {
                            outcome: Outcome::of(&failure.actions),
                            message,
                            binding: failure.binding.clone(),
                            actions: failure.actions.clone(),
                            operation: seen.operation.to_owned(),
                            severity: severity(&failure.policy),
                            impact: figures(seen.impact),
                            first: seen.time,
                            last: seen.time,
                            count: 1,
                            unwritten: 1,
                        },
                    );
                }
            }
        }
        self.dirty.insert(scope);
    }

    /// Removes the results last seen more than the window before `now`; the reports that lost
    /// some are dirty (an emptied one is to be deleted).
    pub fn expire(&mut self, now: DateTime<Utc>) {
        let cutoff = now - self.window;
        for (scope, report) in &mut self.reports {
            let before = report.len();
            report.retain(|_, entry| entry.last >= cutoff);
            if report.len() != before {
                self.dirty.insert(scope.clone());
            }
        }
        self.reports.retain(|_, report| !report.is_empty());
    }

    /// The namespaces whose report changed since the last call (`""`: the cluster report), and
    /// forgets them. A report with no results left is to be deleted.
    pub fn take_dirty(&mut self) -> Vec<String> {
        std::mem::take(&mut self.dirty).into_iter().collect()
    }

    /// Takes in a result read back from a written report (a replica that starts writing adopts
    /// what the previous writer wrote): a result this book has too keeps the written count and
    /// adds what this book saw that was never written, since the earlier of the two first times.
    /// The report is not made dirty by it.
    pub fn adopt(&mut self, scope: &str, key: ResultKey, entry: Entry) {
        let max = self.max_per_report;
        let report = self.reports.entry(scope.to_owned()).or_default();
        let room = report.len() < max;
        match report.get_mut(&key) {
            Some(own) => {
                own.count = entry.count + own.unwritten;
                own.first = own.first.min(entry.first);
            }
            None if room => {
                report.insert(key, entry);
            }
            None => {}
        }
    }

    /// The report of `scope` was written as it is now: its counts are in the API server.
    pub fn written(&mut self, scope: &str) {
        if let Some(report) = self.reports.get_mut(scope) {
            for entry in report.values_mut() {
                entry.unwritten = 0;
            }
        }
    }

    /// Marks a report to be written again (a write that failed).
    pub fn mark_dirty(&mut self, scope: &str) {
        self.dirty.insert(scope.to_owned());
    }

    /// True when some report changed since the last [`Self::take_dirty`].
    pub fn is_dirty(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// The results of the report of `scope`, in key order (none: the report is to be deleted).
    pub fn results(&self, scope: &str) -> Option<&BTreeMap<ResultKey, Entry>> {
        self.reports.get(scope)
    }

    /// Every report's scope, in order.
    pub fn scopes(&self) -> impl Iterator<Item = &str> {
        self.reports.keys().map(String::as_str)
    }

    /// Results kept, over every report.
    pub fn len(&self) -> usize {
        self.reports.values().map(BTreeMap::len).sum()
    }

    /// True when no result is kept.
    pub fn is_empty(&self) -> bool {
        self.reports.is_empty()
    }
}

/// The non-zero figures of `summary`, by name.
fn figures(summary: Option<&Summary>) -> BTreeMap<String, u64> {
    let Some(Ok(serde_json::Value::Object(figures))) = summary.map(serde_json::to_value) else {
        return BTreeMap::new();
    };
    figures
        .into_iter()
        .filter_map(|(name, value)| value.as_u64().filter(|n| *n > 0).map(|n| (name, n)))
        .collect()
}

fn evict_oldest(report: &mut BTreeMap<ResultKey, Entry>) {
    if let Some(oldest) = report
        .iter()
        .min_by_key(|(_, entry)| entry.last)
        .map(|(key, _)| key.clone())
    {
        report.remove(&oldest);
    }
}

fn bounded(message: &str) -> String {
    if message.len() <= MAX_MESSAGE {
        return message.to_owned();
    }
    let mut end = MAX_MESSAGE;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &message[..end])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap()
    }

    fn subject(namespace: &str, name: &str) -> Subject {
        Subject {
            api_version: "apps/v1".into(),
            kind: "StatefulSet".into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    fn failure(policy: &str, actions: &[Action]) -> Failure {
        Failure {
            policy: policy.into(),
            binding: None,
            validation: Some(0),
            message: format!("{policy} says no"),
            actions: actions.to_vec(),
        }
    }

    fn observe(
        book: &mut ReportBook,
        subject: &Subject,
        requester: &str,
        seconds: i64,
        failures: &[Failure],
    ) {
        let seen = Seen {
            subject,
            requester,
            operation: "DELETE",
            time: at(seconds),
            failures,
            impact: None,
        };
        book.observe(&seen, |p| (p == "quorum").then(|| "high".to_owned()));
    }

    #[test]
    fn one_result_per_policy_rule_object_and_requester_counts_repeats() {
        let mut book = ReportBook::new(Duration::hours(1), 100);
        let pg = subject("db", "pg");
        let audit = [
            failure("quorum", &[Action::Audit]),
            failure("pods", &[Action::Warn]),
        ];
        for s in 0..5 {
            observe(&mut book, &pg, "op", s, &audit);
        }
        observe(&mut book, &pg, "alice", 9, &audit[..1]);
        observe(&mut book, &subject("", "node-1"), "op", 9, &audit[..1]);
        assert_eq!(book.take_dirty(), ["", "db"]);
        assert!(book.take_dirty().is_empty());
        let db = book.results("db").unwrap();
        assert_eq!(db.len(), 3);
        let (key, entry) = db
            .iter()
            .find(|(k, _)| k.policy == "quorum" && k.requester == "op")
            .unwrap();
        assert_eq!(
            (key.rule.as_str(), entry.count, entry.first, entry.last),
            ("validations[0]", 5, at(0), at(4))
        );
        assert_eq!(
            (entry.outcome, entry.severity.as_deref()),
            (Outcome::Fail, Some("high"))
        );
        let warned = db.iter().find(|(k, _)| k.policy == "pods").unwrap().1;
        assert_eq!(
            (warned.outcome, warned.severity.as_deref()),
            (Outcome::Warn, None)
        );
    }

    #[test]
    fn an_adopted_result_counts_what_was_written_and_what_never_was() {
        let key = |book: &ReportBook| book.results("db").unwrap().keys().next().unwrap().clone();
        let f = [failure("quorum", &[Action::Audit])];
        let pg = subject("db", "pg");
        // A former writer: 3 written, 2 more since.
        let mut former = ReportBook::new(Duration::hours(1), 10);
        for s in 0..3 {
            observe(&mut former, &pg, "op", s, &f);
        }
        former.written("db");
        for s in 3..5 {
            observe(&mut former, &pg, "op", s, &f);
        }
        let mut in_api = former.results("db").unwrap().values().next().unwrap().clone();
        // Meanwhile another writer wrote 3 + 4 of its own.
        in_api.count = 7;
        in_api.unwritten = 0;
        former.adopt("db", key(&former), in_api.clone());
        assert_eq!(former.results("db").unwrap().values().next().unwrap().count, 9);
        // A replica that never wrote adds all it saw.
        let mut follower = ReportBook::new(Duration::hours(1), 10);
        observe(&mut follower, &pg, "op", 9, &f);
        follower.adopt("db", key(&follower), in_api);
        let entry = follower.results("db").unwrap().values().next().unwrap();
        assert_eq!((entry.count, entry.first), (8, at(0)));
    }

    #[test]
    fn results_age_out_and_an_emptied_report_is_dirty_to_be_deleted() {
        let mut book = ReportBook::new(Duration::minutes(10), 100);
        let f = [failure("quorum", &[Action::Deny])];
        observe(&mut book, &subject("db", "a"), "op", 0, &f);
        observe(&mut book, &subject("web", "b"), "op", 500, &f);
        book.take_dirty();
        book.expire(at(700));
        assert_eq!(book.take_dirty(), ["db"]);
        assert!(book.results("db").is_none(), "deleted");
        assert_eq!(book.len(), 1);
        book.expire(at(700));
        assert!(!book.is_dirty(), "nothing changed");
    }

    #[test]
    fn a_report_keeps_its_most_recently_seen_results_and_long_messages_are_cut() {
        let mut book = ReportBook::new(Duration::hours(1), 3);
        let f = [failure("quorum", &[Action::Audit])];
        for i in 0..5 {
            observe(&mut book, &subject("db", &format!("pg-{i}")), "op", i, &f);
        }
        let names: Vec<&str> = book
            .results("db")
            .unwrap()
            .keys()
            .map(|k| k.subject.name.as_str())
            .collect();
        assert_eq!(names, ["pg-2", "pg-3", "pg-4"]);
        let mut long = failure("quorum", &[Action::Audit]);
        long.message = "é".repeat(2000);
        observe(&mut book, &subject("db", "pg-9"), "op", 9, &[long]);
        let kept = &book.results("db").unwrap().values().last().unwrap().message;
        assert!(
            kept.len() <= MAX_MESSAGE + 3 && kept.ends_with('…'),
            "{}",
            kept.len()
        );
    }
}
