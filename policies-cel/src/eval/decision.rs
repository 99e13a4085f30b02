//! The verdict on one request: what `evaluate()` returns and every report prints.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::policy::Action;

/// A validation that failed (or errored under failurePolicy Fail) with action Deny.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Denial {
    pub policy: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binding: Option<String>,
    /// Index of the validation in the policy; `None` when the policy failed as a whole
    /// (a matchCondition, variable or param error under failurePolicy Fail).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<usize>,
    pub message: String,
    /// Kubernetes reason: Forbidden, Invalid (default), Unauthorized or RequestEntityTooLarge.
    pub reason: String,
}

/// A failed validation (or a policy that failed as a whole under failurePolicy Fail) and the
/// actions it went through: one per policy, binding and validation, whatever the actions. What
/// reports built from decisions read (PolicyReports, Events); the JSON contracts carry the same
/// facts as denials, warnings and audit annotations, so it is not serialized.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub policy: String,
    pub binding: Option<String>,
    /// Index of the validation in the policy; `None` when the policy failed as a whole.
    pub validation: Option<usize>,
    pub message: String,
    pub actions: Vec<Action>,
}

/// What became of one policy (through one binding) for this request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum Outcome {
    /// The request was outside matchConstraints / the binding's matchResources / the subjects.
    NotMatched,
    /// A matchCondition was false.
    Skipped { condition: String },
    /// Every validation held.
    Passed,
    /// At least one validation failed.
    Failed { validations: Vec<usize> },
    /// The policy could not be evaluated; `ignored` when its failurePolicy is Ignore.
    Error { message: String, ignored: bool },
}

/// One policy's (and binding's) part in the decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyResult {
    pub policy: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binding: Option<String>,
    pub actions: Vec<Action>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// The decision on a request.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub allowed: bool,
    pub denials: Vec<Denial>,
    pub warnings: Vec<String>,
    pub audit_annotations: BTreeMap<String, String>,
    /// Every policy that was looked at, in order, with its outcome.
    pub policies: Vec<PolicyResult>,
    /// True when an expression read `impact` (the estimate was computed).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub impact_evaluated: bool,
    /// The impact estimate, when a policy read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impact: Option<crate::impact::Impact>,
    /// Every failure, in order, with its actions (see [`Failure`]).
    #[serde(skip)]
    pub failures: Vec<Failure>,
}

impl Decision {
    /// The HTTP status code of a denial, from the first denial's reason (as kube-apiserver does).
    pub fn status_code(&self) -> u16 {
        match self.denials.first().map(|d| d.reason.as_str()) {
            None => 200,
            Some("Unauthorized") => 401,
            Some("Forbidden") => 403,
            Some("RequestEntityTooLarge") => 413,
            Some(_) => 422,
        }
    }

    /// The status message kube-apiserver would show for this denial.
    pub fn status_message(&self) -> Option<String> {
        let first = self.denials.first()?;
        Some(match &first.binding {
            Some(binding) => format!(
                "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {}",
                first.policy, binding, first.message
            ),
            None => format!(
                "SafetyPolicy '{}' denied request: {}",
                first.policy, first.message
            ),
        })
    }
}
