//! The webhook's pre-filter: the policies that could judge a request, from its metadata alone.
//! The matching itself is `policies_cel::eval::prefilter` — the same rule matcher `evaluate()`
//! uses — so the gateway and the evaluation can never disagree about a rule.

pub use policies_cel::eval::operation_name;
pub use policies_cel::eval::prefilter::{candidates, could_judge};

/// A review of a core-group request with no objects: what the pre-filter reads, for tests.
#[cfg(test)]
pub(crate) fn metadata_review(
    resource: &str,
    subresource: &str,
    operation: &str,
    name: &str,
    user: &str,
    groups: &[&str],
) -> policies_cel::Request {
    policies_cel::Request::from_review(serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": resource},
            "subResource": subresource,
            "name": name, "namespace": "ns",
            "operation": operation,
            "userInfo": {"username": user, "groups": groups},
            "object": null,
            "oldObject": null
        }
    }))
    .unwrap_or_else(|error| panic!("a test review: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use policies_cel::Request;
    use policies_cel::policy::Loader;

    fn review(resource: &str, subresource: &str, operation: &str, user: &str) -> Request {
        metadata_review(resource, subresource, operation, "p", user, &[])
    }

    const POLICIES: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: operators-only}
spec:
  subjects: {users: ["operator"]}
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["*"], operations: [DELETE], resources: [pods]}]
  validations: [{expression: "false"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: unbound}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"]}]
  validations: [{expression: "false"}]
"#;

    #[test]
    fn subjects_rules_and_bindings_narrow_the_candidates() {
        let set = Loader::new()
            .implicit_bindings(false)
            .add_str("p.yaml", POLICIES)
            .unwrap()
            .finish()
            .unwrap();
        let names = |request: &Request| -> Vec<String> {
            candidates(&set, &request.admission)
                .iter()
                .map(|p| p.name.clone())
                .collect()
        };
        assert_eq!(
            names(&review("pods", "", "DELETE", "operator")),
            ["operators-only"]
        );
        assert!(names(&review("pods", "", "DELETE", "someone-else")).is_empty());
        assert!(names(&review("pods", "eviction", "CREATE", "operator")).is_empty());
        assert!(names(&review("pods", "", "CREATE", "operator")).is_empty());
    }
}
