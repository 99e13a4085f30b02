//! `replay -o policyreport`: what the log's requests would have put in the gateway's reports —
//! the same `wgpolicyk8s.io/v1alpha2` PolicyReports (one per namespace) and ClusterPolicyReport,
//! with one result per policy × rule × object × requester, the audit event's time as the
//! result's, and the impact's figures. Named `suture-replay`, so that applying them never
//! overwrites (nor is adopted by) the reports a running gateway writes. Dry runs are left out,
//! as the gateway leaves them out; results do not age out (the log is the window).

use policies_cel::reports::{self, ReportBook, Seen, Subject};
use policies_cel::{Decision, PolicySet, Request};

use crate::replay::event::Event;

/// The name of every report a replay writes.
pub const REPORT_NAME: &str = "suture-replay";
/// Their managed-by label.
pub const MANAGER: &str = "kubectl-suture";

/// A book for a replay: every result kept however old, at most as many per report as the gateway keeps.
pub fn book() -> ReportBook {
    ReportBook::new(chrono::Duration::MAX, reports::MAX_RESULTS)
}

/// Records the failures of `decision` on `request` (rebuilt from `event`).
pub fn observe(
    book: &mut ReportBook,
    set: &PolicySet,
    event: &Event,
    request: &Request,
    decision: &Decision,
) {
    if decision.failures.is_empty() || event.dry_run() {
        return;
    }
    let Some(time) = event.time() else {
        return;
    };
    let subject = Subject::of(&request.admission, &request.target_name());
    let requester = event.effective_user().username.clone().unwrap_or_default();
    let seen = Seen {
        subject: &subject,
        requester: &requester,
        operation: request.operation(),
        time,
        failures: &decision.failures,
        impact: decision.impact.as_ref().map(|impact| &impact.summary),
    };
    book.observe(&seen, |policy| {
        set.policies
            .iter()
            .find(|p| p.name == policy)
            .and_then(|p| p.severity.clone())
    });
}

/// Every report of `book` as a YAML stream (`kubectl apply -f -` reads it): the cluster report
/// first, then the namespaces in order.
pub fn yaml(book: &ReportBook) -> Result<String, serde_yaml_ng::Error> {
    let mut out = String::new();
    for scope in book.scopes() {
        if let Some(report) = reports::render(book, scope, REPORT_NAME, MANAGER) {
            out.push_str("---\n");
            out.push_str(&serde_yaml_ng::to_string(&report)?);
        }
    }
    Ok(out)
}
