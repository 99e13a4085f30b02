//! Recording a decision into the ledger: what the gateway calls after answering, and what
//! `replay` calls for each request the log shows was admitted. Only admitted, non-dry-run
//! requests whose impact disrupted something are recorded.

use chrono::{DateTime, Utc};

use crate::cluster::ClusterView;
use crate::eval::{Decision, Request};
use crate::history::ledger::Ledger;
use crate::history::record::{Figures, Record};
use crate::history::workload::workload_of;

/// The ledger record of `request`, judged `decision` against `cluster` (the model as it was
/// before the request), admitted at `at`: `None` when the request was denied, is a dry run, or
/// disrupted nothing. The estimate the decision carries is used; without one (no policy read
/// `impact`) it is computed here, when the model knows anything.
pub fn record_of(
    request: &Request,
    decision: &Decision,
    cluster: &dyn ClusterView,
    at: DateTime<Utc>,
) -> Option<Record> {
    if !decision.allowed || request.admission.dry_run {
        return None;
    }
    let computed;
    let impact = match &decision.impact {
        Some(impact) => impact,
        None if cluster.object_count() > 0 => {
            computed = crate::impact::estimate(request, cluster);
            &computed
        }
        None => return None,
    };
    let figures = Figures::of(&impact.summary);
    if figures.is_empty() {
        return None;
    }
    let admission = &request.admission;
    let mut record = Record::new(
        at,
        admission.user_info.username.as_deref().unwrap_or_default(),
        admission.namespace.as_deref().unwrap_or_default(),
        figures,
    );
    record.workload = workload_of(request, cluster);
    record.action = impact.action.clone();
    Some(record)
}

/// Records `request` into `ledger` when [`record_of`] gives a record; true when it did.
pub fn record_decision(
    ledger: &mut Ledger,
    request: &Request,
    decision: &Decision,
    cluster: &dyn ClusterView,
    at: DateTime<Utc>,
) -> bool {
    match record_of(request, decision, cluster, at) {
        Some(record) => {
            ledger.record(record);
            true
        }
        None => false,
    }
}
