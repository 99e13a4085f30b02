//! Answers given by failurePolicy when policies cannot be evaluated (a timeout, a panic, an
//! internal error, a stale model): failurePolicy Fail denies with the reason, Ignore allows with
//! a warning — as kube-apiserver does when a webhook or policy fails.

use std::sync::Arc;

use policies_cel::Decision;
use policies_cel::eval::apply_failure;
use policies_cel::policy::{FailurePolicy, Policy, PolicySet};

/// The reason of failure-policy denials (answered with code 500).
pub const FAILURE_REASON: &str = "InternalError";

/// Adds the failurePolicy answer of each of `policies` to `decision`, `why` saying what failed.
/// Under Fail, the failure goes through each binding's actions as a failed validation would
/// (Deny denies, Warn warns, Audit records the audit annotation), as kube-apiserver applies
/// validationActions; under Ignore, each policy adds one warning ([`apply_failure`]).
pub fn apply(decision: &mut Decision, set: &PolicySet, policies: &[Arc<Policy>], why: &str) {
    for policy in policies {
        let message = if policy.failure_policy == FailurePolicy::Ignore {
            format!("{why} (failurePolicy Ignore: allowed without it)")
        } else {
            format!("{why} (failurePolicy Fail)")
        };
        apply_failure(decision, set, policy, &message, FAILURE_REASON);
    }
    decision.allowed = decision.denials.is_empty();
}

#[cfg(test)]
mod tests {
    use super::*;
    use policies_cel::eval::{AUDIT_FAILURE_KEY, Outcome};
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

    /// A ValidatingAdmissionPolicy under `failure_policy` with two bindings: one Deny, one Warn
    /// and Audit.
    fn two_bindings(failure_policy: &str) -> PolicySet {
        let text = format!(
            r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {{name: replicas}}
spec:
  failurePolicy: {failure_policy}
  matchConstraints:
    resourceRules: [{{apiGroups: [apps], apiVersions: [v1], operations: [UPDATE], resources: [deployments]}}]
  validations: [{{expression: "true"}}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {{name: replicas-deny}}
spec: {{policyName: replicas, validationActions: [Deny]}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {{name: replicas-warn}}
spec: {{policyName: replicas, validationActions: [Warn, Audit]}}
"#
        );
        Loader::new()
            .implicit_bindings(false)
            .add_str("vap.yaml", &text)
            .unwrap()
            .finish()
            .unwrap()
    }

    /// An allowed decision after [`two_bindings`]' policy timed out.
    fn timed_out(failure_policy: &str) -> Decision {
        let set = two_bindings(failure_policy);
        let mut decision = Decision {
            allowed: true,
            ..Decision::default()
        };
        apply(&mut decision, &set, &set.policies, "timed out");
        decision
    }

    #[test]
    fn fail_goes_through_each_bindings_actions() {
        let decision = timed_out("Fail");
        assert!(!decision.allowed);
        assert_eq!(decision.denials.len(), 1, "{:?}", decision.denials);
        assert_eq!(decision.denials[0].binding.as_deref(), Some("replicas-deny"));
        assert_eq!(decision.denials[0].reason, FAILURE_REASON);
        assert_eq!(
            decision.warnings,
            [
                "Validation failed for ValidatingAdmissionPolicy 'replicas' with binding 'replicas-warn': \
              timed out (failurePolicy Fail)"
            ]
        );
        let audit: serde_json::Value =
            serde_json::from_str(&decision.audit_annotations[AUDIT_FAILURE_KEY]).unwrap();
        assert_eq!(
            audit,
            serde_json::json!([{
                "message": "timed out (failurePolicy Fail)",
                "policy": "replicas",
                "binding": "replicas-warn",
                "expressionIndex": null,
                "validationActions": ["Warn", "Audit"],
            }])
        );
        assert_eq!(decision.policies.len(), 2);
        assert!(
            decision
                .policies
                .iter()
                .all(|p| matches!(p.outcome, Outcome::Error { ignored: false, .. }))
        );
    }

    #[test]
    fn ignore_warns_once_per_policy_whatever_its_bindings() {
        let decision = timed_out("Ignore");
        assert!(decision.allowed, "{:?}", decision.denials);
        assert_eq!(
            decision.warnings,
            ["ValidatingAdmissionPolicy 'replicas' was not evaluated: \
              timed out (failurePolicy Ignore: allowed without it)"]
        );
        assert!(decision.audit_annotations.is_empty());
        assert_eq!(decision.policies.len(), 2);
        assert!(
            decision
                .policies
                .iter()
                .all(|p| matches!(p.outcome, Outcome::Error { ignored: true, .. }))
        );
    }
}
