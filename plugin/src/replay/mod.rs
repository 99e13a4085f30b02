//! `replay`: Kubernetes audit events (audit.k8s.io/v1, JSON lines) rebuilt into the admission
//! requests they were, judged with a policy set, and totalled — how a team proves a policy set
//! against last month's real operator traffic before enforcing it.
//!
//! The log is judged as it happened, in its own timeline: each request the set admits (not a dry
//! run) has its change carried into the model ([`apply`]) and, when it disrupted something and a
//! policy reads `history`, is recorded into the ledger at its audit timestamp — so a hot loop
//! shows up as the first request that broke a budget and the ones after it. A request the set
//! denies is neither applied nor recorded: the replay shows the cluster as enforcement would
//! have kept it.

pub mod apply;
pub mod event;
pub mod rebuild;
pub mod reports;
pub mod tally;

use std::io::BufRead;

use chrono::{DateTime, Utc};
use policies_cel::cluster::ClusterModel;
use policies_cel::history::{Ledger, record_decision};
use policies_cel::reports::ReportBook;
use policies_cel::{Decision, EvalContext, PolicySet, Request, evaluate_in};

use crate::replay::event::Event;
use crate::replay::rebuild::{Skip, rebuild_all};
use crate::replay::tally::Tally;
use crate::review::{RequestSpec, build_review};

/// Why a log could not be replayed at all.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("cannot read {name}")]
    Read {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{name}:{line}: not an audit event (audit.k8s.io/v1 Event, one JSON object per line): {message}")]
    NotAnAuditLog {
        name: String,
        line: usize,
        message: String,
    },
}

/// A line that is not an audit event, in a log that otherwise is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    pub line: usize,
    pub message: String,
}

/// What the replay carries from one event to the next: the model with the admitted changes, the
/// ledger of admitted disruption, and the time of the latest event.
struct Timeline<'a> {
    set: &'a PolicySet,
    model: ClusterModel,
    ledger: Ledger,
    /// Record into the ledger (only when some policy reads `history`).
    records: bool,
    now: Option<DateTime<Utc>>,
    /// The reports the failures go into (`-o policyreport`).
    reports: Option<ReportBook>,
}

/// Replays every event of `log` (named `name` in messages), starting from `model` (the snapshot)
/// and carrying each admitted change into it. Lines that are not audit events are reported in the
/// tally; a log in which no line is one is an error naming the first bad line.
pub fn replay(
    name: &str,
    log: impl BufRead,
    set: &PolicySet,
    model: ClusterModel,
) -> Result<Tally, ReplayError> {
    run(name, log, set, model, None).map(|(tally, _)| tally)
}

/// [`replay`], with the failures also gathered into PolicyReports ([`reports`]).
pub fn replay_with_reports(
    name: &str,
    log: impl BufRead,
    set: &PolicySet,
    model: ClusterModel,
) -> Result<(Tally, ReportBook), ReplayError> {
    run(name, log, set, model, Some(reports::book()))
        .map(|(tally, book)| (tally, book.unwrap_or_else(reports::book)))
}

fn run(
    name: &str,
    log: impl BufRead,
    set: &PolicySet,
    model: ClusterModel,
    reports: Option<ReportBook>,
) -> Result<(Tally, Option<ReportBook>), ReplayError> {
    let mut tally = Tally::default();
    let mut timeline = Timeline {
        set,
        model,
        ledger: Ledger::default(),
        records: set.uses_history(),
        now: None,
        reports,
    };
    for (index, line) in log.lines().enumerate() {
        let line = line.map_err(|source| ReplayError::Read {
            name: name.to_owned(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        match parse(&line) {
            Ok(event) => timeline.judge(&event, &mut tally),
            Err(message) => tally.bad_lines.push(BadLine {
                line: index + 1,
                message,
            }),
        }
    }
    if tally.events == 0
        && let Some(first) = tally.bad_lines.first()
    {
        return Err(ReplayError::NotAnAuditLog {
            name: name.to_owned(),
            line: first.line,
            message: first.message.clone(),
        });
    }
    Ok((tally, timeline.reports))
}

fn parse(line: &str) -> Result<Event, String> {
    let event: Event = serde_json::from_str(line).map_err(|e| e.to_string())?;
    if event.kind != "Event" || !event.api_version.starts_with("audit.k8s.io/") {
        return Err(format!(
            "kind {:?} apiVersion {:?}, expected kind Event of audit.k8s.io/v1",
            event.kind, event.api_version
        ));
    }
    Ok(event)
}

impl Timeline<'_> {
    /// Judges `event` at its time with the history so far; an admitted request is recorded and
    /// its change applied.
    fn judge(&mut self, event: &Event, tally: &mut Tally) {
        tally.events += 1;
        // An event without a time keeps the latest time seen (logs are in time order).
        if let Some(time) = event.time() {
            self.now = Some(time);
        }
        let specs = match rebuild_all(event, &self.model) {
            Ok(specs) => specs,
            Err(skip) => return tally.skip(skip),
        };
        // A deletecollection's objects are judged one by one, each seeing the ones before it
        // gone (or kept, when denied).
        for spec in specs {
            self.judge_one(event, &spec, tally);
        }
    }

    /// Judges one rebuilt request of `event`.
    fn judge_one(&mut self, event: &Event, spec: &RequestSpec, tally: &mut Tally) {
        let request = build_review(spec)
            .map_err(|e| e.to_string())
            .and_then(|review| Request::from_review(review).map_err(|e| e.to_string()));
        let Ok(request) = request else {
            return tally.skip(Skip::UnknownKind);
        };
        let decision = judge_and_carry(
            self.set,
            &request,
            &mut self.model,
            &mut self.ledger,
            self.now,
            self.records,
        );
        if let Some(book) = &mut self.reports {
            reports::observe(book, self.set, event, &request, &decision);
        }
        tally.record(event, &request, &decision);
    }
}

/// Judges `request` against `model` and the admitted disruption in `ledger` (at `now`, when
/// known); when admitted, its disruption is recorded at `now` (when `records`: some policy reads
/// `history`) and its change carried into the model. The timeline of a replay, and of a what-if collection's deletions. The model
/// is a snapshot carried forward: an object it lacks was left out of it (not `live`).
pub fn judge_and_carry(
    set: &PolicySet,
    request: &Request,
    model: &mut ClusterModel,
    ledger: &mut Ledger,
    now: Option<DateTime<Utc>>,
    records: bool,
) -> Decision {
    let context = EvalContext {
        history: Some(ledger),
        now,
        ..EvalContext::default()
    };
    let decision = evaluate_in(set, request, &*model, &context);
    if decision.allowed {
        if let Some(now) = now.filter(|_| records) {
            record_decision(ledger, request, &decision, model, now);
        }
        apply::apply(model, request);
    }
    decision
}
