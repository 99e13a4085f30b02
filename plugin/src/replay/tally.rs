//! What a replay found: how many events were judged or skipped and why, and who and which
//! policy would have been denied or warned, with the findings themselves.

use std::collections::BTreeMap;

use policies_cel::policy::Action;
use policies_cel::{Decision, Request, eval::Outcome};
use serde::Serialize;

use crate::replay::BadLine;
use crate::replay::event::Event;
use crate::replay::rebuild::Skip;

/// Totals of one policy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyTotals {
    /// Requests the policy would have denied.
    pub denied: usize,
    /// Requests it would have let through with a warning (Warn action).
    pub warned: usize,
    /// Requests it would have denied but for the escape-hatch annotation.
    pub allowed_by_annotation: usize,
}

/// Totals of one user.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserTotals {
    pub requests: usize,
    pub denied: usize,
    pub warned: usize,
}

/// One request a policy would have denied or warned about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(rename = "auditID")]
    pub audit_id: String,
    pub user: String,
    /// `DELETE persistentvolumeclaims databases/data-pg-main-0`.
    pub request: String,
    /// `denied` or `warned`.
    pub verdict: &'static str,
    pub policy: String,
    pub message: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

/// Everything a replay counted.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tally {
    /// Audit events read.
    pub events: usize,
    /// Events rebuilt into admission requests and judged.
    pub replayed: usize,
    /// Events not judged, by reason.
    #[serde(serialize_with = "skips")]
    pub skipped: BTreeMap<Skip, usize>,
    /// Judged requests that would have been denied.
    pub denied: usize,
    /// Judged requests that would have been admitted with a warning.
    pub warned: usize,
    pub by_policy: BTreeMap<String, PolicyTotals>,
    pub by_user: BTreeMap<String, UserTotals>,
    pub findings: Vec<Finding>,
    #[serde(skip)]
    pub bad_lines: Vec<BadLine>,
}

fn skips<S: serde::Serializer>(skipped: &BTreeMap<Skip, usize>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_map(skipped.iter().map(|(skip, n)| (skip.describe(), n)))
}

impl Tally {
    pub(crate) fn skip(&mut self, skip: Skip) {
        *self.skipped.entry(skip).or_default() += 1;
    }

    pub(crate) fn record(&mut self, event: &Event, request: &Request, decision: &Decision) {
        self.replayed += 1;
        let admission = &request.admission;
        let user = event.effective_user().username.clone().unwrap_or_default();
        let mut what = format!("{} {}", request.operation(), admission.resource.resource);
        if let Some(sub) = admission.sub_resource.as_deref().filter(|s| !s.is_empty()) {
            what = format!("{what}/{sub}");
        }
        // A Namespace's requests carry its own name as their namespace.
        let namespaced = admission.resource.resource != "namespaces";
        // A deletecollection's objects come unnamed: the name is in oldObject.
        let name = request.target_name();
        let target = match admission
            .namespace
            .as_deref()
            .filter(|n| namespaced && !n.is_empty())
        {
            Some(namespace) => format!("{namespace}/{name}"),
            None => name.into_owned(),
        };
        let finding = |verdict, policy: &str, message: &str| Finding {
            time: event.request_received_timestamp.clone(),
            audit_id: event.audit_id.clone(),
            user: user.clone(),
            request: format!("{what} {target}"),
            verdict,
            policy: policy.to_owned(),
            message: message.to_owned(),
            dry_run: event.dry_run(),
        };

        let mut warned = false;
        for result in &decision.policies {
            let totals = self.by_policy.entry(result.policy.clone()).or_default();
            let failed = matches!(result.outcome, Outcome::Failed { .. });
            if decision
                .audit_annotations
                .contains_key(&format!("{}/allowed-by", result.policy))
            {
                totals.allowed_by_annotation += 1;
            } else if failed && result.actions.contains(&Action::Warn) {
                totals.warned += 1;
                warned = true;
            }
        }
        let mut denied_by: Vec<&str> = Vec::new();
        for denial in &decision.denials {
            if !denied_by.contains(&denial.policy.as_str()) {
                denied_by.push(&denial.policy);
                self.by_policy.entry(denial.policy.clone()).or_default().denied += 1;
                self.findings
                    .push(finding("denied", &denial.policy, &denial.message));
            }
        }
        if !decision.denials.is_empty() {
            self.denied += 1;
        } else if warned || !decision.warnings.is_empty() {
            self.warned += 1;
            for warning in &decision.warnings {
                self.findings.push(finding("warned", "", warning));
            }
        }
        let totals = self.by_user.entry(user).or_default();
        totals.requests += 1;
        totals.denied += usize::from(!decision.denials.is_empty());
        totals.warned +=
            usize::from(decision.denials.is_empty() && (warned || !decision.warnings.is_empty()));
    }
}
