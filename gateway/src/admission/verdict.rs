//! From a [`Decision`] to the AdmissionReview answer, and to the per-policy labels that metrics
//! and the decision log report.

use policies_cel::Decision;
use policies_cel::eval::Outcome;
use policies_cel::policy::Action;

use crate::admission::review::{AdmissionResponse, ReviewResponse, Status, denial_code};

/// The name self-protection denials are recorded under (metrics, decision log).
pub const SELF_PROTECTION: &str = "suture-gateway-self-protection";

/// The answer to a judged request: uid echoed, allowed, status on denial, warnings and audit
/// annotations.
pub fn respond(uid: &str, decision: &Decision) -> ReviewResponse {
    let status = match decision.denials.first() {
        Some(first) if !decision.allowed => Some(Status::failure(
            denial_code(&first.reason),
            if first.policy == SELF_PROTECTION {
                first.message.clone()
            } else {
                decision
                    .status_message()
                    .unwrap_or_else(|| "denied by policy".to_owned())
            },
        )),
        _ => None,
    };
    ReviewResponse::new(AdmissionResponse {
        uid: uid.to_owned(),
        allowed: decision.allowed,
        status,
        warnings: decision.warnings.clone(),
        audit_annotations: decision.audit_annotations.clone(),
    })
}

/// The policies whose denials count (each once, in order).
pub fn denied_by(decision: &Decision) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for denial in &decision.denials {
        if !names.contains(&denial.policy) {
            names.push(denial.policy.clone());
        }
    }
    names
}

/// The policies that failed with action Warn.
pub fn warned_by(decision: &Decision) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for result in &decision.policies {
        if matches!(result.outcome, Outcome::Failed { .. })
            && result.actions.contains(&Action::Warn)
            && !names.contains(&result.policy)
        {
            names.push(result.policy.clone());
        }
    }
    names
}

/// `(policy, verdict)` for every policy that matched: pass, deny, warn, audit, skip or error.
pub fn policy_verdicts(decision: &Decision) -> impl Iterator<Item = (&str, &'static str)> {
    decision.policies.iter().filter_map(|result| {
        let verdict = match &result.outcome {
            Outcome::NotMatched => return None,
            Outcome::Skipped { .. } => "skip",
            Outcome::Passed => "pass",
            Outcome::Failed { .. } if result.actions.contains(&Action::Deny) => "deny",
            Outcome::Failed { .. } if result.actions.contains(&Action::Warn) => "warn",
            Outcome::Failed { .. } => "audit",
            Outcome::Error { ignored: false, .. } => "deny",
            Outcome::Error { ignored: true, .. } => "error",
        };
        Some((result.policy.as_str(), verdict))
    })
}
