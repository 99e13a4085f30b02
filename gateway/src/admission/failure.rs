//! Answers given by failurePolicy when policies cannot be evaluated (a timeout, a panic, an
//! internal error, a stale model): failurePolicy Fail denies with the reason, Ignore allows with
//! a warning — as kube-apiserver does when a webhook or policy fails.

use std::sync::Arc;

use policies_cel::eval::{Outcome, PolicyResult};
use policies_cel::policy::{FailurePolicy, Policy, PolicyKind, PolicySet};
use policies_cel::{Decision, Denial};

/// The reason of failure-policy denials (answered with code 500).
pub const FAILURE_REASON: &str = "InternalError";

/// Adds the failurePolicy answer of each of `policies` to `decision`, `why` saying what failed.
pub fn apply(decision: &mut Decision, set: &PolicySet, policies: &[Arc<Policy>], why: &str) {
    for policy in policies {
        let binding = match policy.kind {
            PolicyKind::SafetyPolicy => None,
            PolicyKind::ValidatingAdmissionPolicy => set
                .bindings
                .iter()
                .find(|b| b.policy_name == policy.name)
                .map(|b| b.name.clone()),
        };
        let ignored = policy.failure_policy == FailurePolicy::Ignore;
        let message = if ignored {
            format!("{why} (failurePolicy Ignore: allowed without it)")
        } else {
            format!("{why} (failurePolicy Fail)")
        };
        if ignored {
            decision.warnings.push(format!(
                "{} '{}' was not evaluated: {message}",
                kind_name(policy),
                policy.name
            ));
        } else {
            decision.denials.push(Denial {
                policy: policy.name.clone(),
                binding: binding.clone(),
                validation: None,
                message: message.clone(),
                reason: FAILURE_REASON.into(),
            });
        }
        decision.policies.push(PolicyResult {
            policy: policy.name.clone(),
            binding,
            actions: Vec::new(),
            outcome: Outcome::Error { message, ignored },
        });
    }
    decision.allowed = decision.denials.is_empty();
}

fn kind_name(policy: &Policy) -> &'static str {
    match policy.kind {
        PolicyKind::SafetyPolicy => "SafetyPolicy",
        PolicyKind::ValidatingAdmissionPolicy => "ValidatingAdmissionPolicy",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policies_cel::policy::Loader;

    const POLICIES: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: strict}
spec:
  validations: [{expression: "true"}]
---
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: lenient}
spec:
  failurePolicy: Ignore
  validations: [{expression: "true"}]
"#;

    #[test]
    fn fail_denies_and_ignore_warns() {
        let set = Loader::new()
            .add_str("p.yaml", POLICIES)
            .unwrap()
            .finish()
            .unwrap();
        let mut decision = Decision {
            allowed: true,
            ..Decision::default()
        };
        apply(&mut decision, &set, &set.policies[1..], "timed out");
        assert!(decision.allowed);
        assert_eq!(decision.warnings.len(), 1);
        assert!(
            decision.warnings[0].contains("'lenient'"),
            "{:?}",
            decision.warnings
        );
        apply(&mut decision, &set, &set.policies[..1], "timed out");
        assert!(!decision.allowed);
        assert_eq!(decision.denials[0].policy, "strict");
        assert_eq!(decision.denials[0].reason, FAILURE_REASON);
        assert_eq!(decision.policies.len(), 2);
    }
}
