//! Answers given by failurePolicy when policies cannot be evaluated (a timeout, a panic, an
//! internal error, a stale model): failurePolicy Fail denies with the reason, Ignore allows with
//! a warning — as kube-apiserver does when a webhook or policy fails.

use std::sync::Arc;

use policies_cel::eval::{Outcome, PolicyResult, bindings_of};
use policies_cel::policy::{Action, FailurePolicy, Policy, PolicyKind, PolicySet};
use policies_cel::{Decision, Denial};

/// The reason of failure-policy denials (answered with code 500).
pub const FAILURE_REASON: &str = "InternalError";

/// Adds the failurePolicy answer of each of `policies` to `decision`, `why` saying what failed.
/// Under Fail, the failure goes through each binding's actions as a failed validation would
/// (Deny denies, Warn warns, Audit only records), as kube-apiserver applies validationActions.
pub fn apply(decision: &mut Decision, set: &PolicySet, policies: &[Arc<Policy>], why: &str) {
    for policy in policies {
        let ignored = policy.failure_policy == FailurePolicy::Ignore;
        let message = if ignored {
            format!("{why} (failurePolicy Ignore: allowed without it)")
        } else {
            format!("{why} (failurePolicy Fail)")
        };
        for (binding, actions) in bindings_of(set, policy) {
            let binding = binding.map(|b| b.name.clone());
            if ignored {
                decision.warnings.push(format!(
                    "{} '{}' was not evaluated: {message}",
                    kind_name(policy),
                    policy.name
                ));
            } else {
                if actions.contains(&Action::Deny) {
                    decision.denials.push(Denial {
                        policy: policy.name.clone(),
                        binding: binding.clone(),
                        validation: None,
                        message: message.clone(),
                        reason: FAILURE_REASON.into(),
                    });
                }
                if actions.contains(&Action::Warn) {
                    decision.warnings.push(format!(
                        "{} '{}' could not be evaluated: {message}",
                        kind_name(policy),
                        policy.name
                    ));
                }
            }
            decision.policies.push(PolicyResult {
                policy: policy.name.clone(),
                binding,
                actions,
                outcome: Outcome::Error {
                    message: message.clone(),
                    ignored,
                },
            });
        }
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
---
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: advisory}
spec:
  action: Warn
  validations: [{expression: "true"}]
"#;

    /// The three policies above, and a decision that allows.
    fn setup() -> (PolicySet, Decision) {
        let set = Loader::new()
            .add_str("p.yaml", POLICIES)
            .unwrap()
            .finish()
            .unwrap();
        let decision = Decision {
            allowed: true,
            ..Decision::default()
        };
        (set, decision)
    }

    #[test]
    fn fail_denies_and_ignore_warns() {
        let (set, mut decision) = setup();
        apply(&mut decision, &set, &set.policies[1..2], "timed out");
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

    #[test]
    fn a_warn_only_policy_that_fails_warns_instead_of_denying() {
        let (set, mut decision) = setup();
        apply(
            &mut decision,
            &set,
            &set.policies[2..],
            "the cluster model is stale",
        );
        assert!(decision.allowed, "{:?}", decision.denials);
        assert_eq!(decision.warnings.len(), 1);
        assert!(
            decision.warnings[0].contains("'advisory'"),
            "{:?}",
            decision.warnings
        );
    }
}
