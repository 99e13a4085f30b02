//! Reports where platform teams look: the Audit, Warn and Deny failures of judged requests as
//! `wgpolicyk8s.io/v1alpha2` PolicyReports / ClusterPolicyReports ([`writer`]), and denials and
//! warnings as Kubernetes Events on the objects concerned ([`events`]).
//!
//! Neither is on the request's path: the handler hands an owned [`Observation`] to a bounded
//! queue (`try_send`; a full queue is counted and the observation dropped) and answers. The
//! report writer batches for one flush interval and applies only the reports that changed;
//! one replica writes them, the holder of a Lease ([`lease`]), the others keep their results and
//! skip the writes (a replica that takes the Lease first adopts the reports already written).
//! Events are aggregated per object, reason, requester and message as client-go's recorder
//! does ([`events`]). Dry-run requests are left out of both.

pub mod events;
pub mod lease;
pub mod writer;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use policies_cel::eval::Failure;
use policies_cel::impact::Summary;
use policies_cel::reports::Subject;
use tokio::sync::mpsc;

use crate::metrics::Metrics;

/// A judged request with failures, owned, on its way to the report writer and the Events.
#[derive(Debug, Clone)]
pub struct Observation {
    pub subject: Subject,
    pub requester: String,
    pub operation: String,
    pub time: DateTime<Utc>,
    pub failures: Vec<Failure>,
    /// The declared severity of each failure's policy, in the same order.
    pub severities: Vec<Option<String>>,
    pub impact: Option<Summary>,
}

/// The request side of reports and Events: the queues to their writers.
#[derive(Debug, Clone)]
pub struct Reporting {
    reports: Option<mpsc::Sender<Observation>>,
    events: Option<mpsc::Sender<events::Notice>>,
    metrics: Arc<Metrics>,
}

impl Reporting {
    /// Reporting into the given queues (either may be off).
    pub fn new(
        reports: Option<mpsc::Sender<Observation>>,
        events: Option<mpsc::Sender<events::Notice>>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            reports,
            events,
            metrics,
        }
    }

    /// True when reports or Events are on.
    pub fn enabled(&self) -> bool {
        self.reports.is_some() || self.events.is_some()
    }

    /// Hands a judged request's failures to the writers; never waits.
    pub fn observe(&self, observation: Observation) {
        if observation.failures.is_empty() {
            return;
        }
        if let Some(events) = &self.events {
            for notice in events::notices(&observation) {
                if events.try_send(notice).is_err() {
                    self.metrics.count_event("dropped");
                }
            }
        }
        if let Some(reports) = &self.reports
            && reports.try_send(observation).is_err()
        {
            self.metrics.count_report_write("dropped");
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use policies_cel::policy::Action;

    fn observation(actions: &[Action]) -> Observation {
        Observation {
            subject: Subject {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: "db".into(),
                name: "settings".into(),
            },
            requester: "system:serviceaccount:db:op".into(),
            operation: "DELETE".into(),
            time: Utc::now(),
            failures: vec![Failure {
                policy: "keep-settings".into(),
                binding: None,
                validation: Some(0),
                message: "kept".into(),
                actions: actions.to_vec(),
            }],
            severities: vec![None],
            impact: None,
        }
    }

    fn counted(metrics: &Metrics, series: &str) -> String {
        let text = metrics
            .encode(
                &crate::model::LiveModel::new(),
                &crate::policies::PolicyStore::new(Default::default()),
            )
            .unwrap();
        text.lines()
            .find(|l| l.starts_with(series))
            .unwrap_or_default()
            .to_owned()
    }

    #[test]
    fn failures_are_handed_over_without_waiting_and_a_full_queue_is_counted() {
        let metrics = Arc::new(Metrics::new());
        let (reports, mut observations) = mpsc::channel(1);
        let (events, mut notices) = mpsc::channel(1);
        let reporting = Reporting::new(Some(reports), Some(events), Arc::clone(&metrics));
        reporting.observe(observation(&[Action::Deny]));
        // Both queues are full now: the next one is dropped and counted, never awaited.
        reporting.observe(observation(&[Action::Warn]));
        // Audit alone makes no Event; a decision without failures, nothing.
        reporting.observe(Observation {
            failures: Vec::new(),
            ..observation(&[Action::Audit])
        });
        assert_eq!(
            observations.try_recv().unwrap().failures[0].actions,
            [Action::Deny]
        );
        assert!(observations.try_recv().is_err());
        assert_eq!(notices.try_recv().unwrap().reason, events::DENIED);
        assert!(notices.try_recv().is_err());
        assert!(
            counted(
                &metrics,
                "suture_gateway_policy_report_writes_total{result=\"dropped\"}"
            )
            .ends_with(" 1")
        );
        assert!(counted(&metrics, "suture_gateway_events_total{result=\"dropped\"}").ends_with(" 1"));
        let off = Reporting::new(None, None, metrics);
        assert!(!off.enabled());
    }
}
