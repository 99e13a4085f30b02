//! `replay`: Kubernetes audit events (audit.k8s.io/v1, JSON lines) rebuilt into the admission
//! requests they were, judged with a policy set, and totalled — how a team proves a policy set
//! against last month's real operator traffic before enforcing it.

pub mod event;
pub mod rebuild;
pub mod tally;

use std::io::BufRead;

use policies_cel::{ClusterView, PolicySet, Request, evaluate};

use crate::replay::event::Event;
use crate::replay::rebuild::{Skip, rebuild};
use crate::replay::tally::Tally;
use crate::review::build_review;

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

/// Replays every event of `log` (named `name` in messages). Lines that are not audit events are
/// reported in the tally; a log in which no line is one is an error naming the first bad line.
pub fn replay(
    name: &str,
    log: impl BufRead,
    set: &PolicySet,
    cluster: &dyn ClusterView,
) -> Result<Tally, ReplayError> {
    let mut tally = Tally::default();
    for (index, line) in log.lines().enumerate() {
        let line = line.map_err(|source| ReplayError::Read {
            name: name.to_owned(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        match parse(&line) {
            Ok(event) => judge(&event, set, cluster, &mut tally),
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
    Ok(tally)
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

fn judge(event: &Event, set: &PolicySet, cluster: &dyn ClusterView, tally: &mut Tally) {
    tally.events += 1;
    let spec = match rebuild(event, cluster) {
        Ok(spec) => spec,
        Err(skip) => return tally.skip(skip),
    };
    let request = build_review(&spec)
        .map_err(|e| e.to_string())
        .and_then(|review| Request::from_review(review).map_err(|e| e.to_string()));
    match request {
        Ok(request) => {
            let decision = evaluate(set, &request, cluster);
            tally.record(event, &request, &decision);
        }
        Err(_) => tally.skip(Skip::UnknownKind),
    }
}
