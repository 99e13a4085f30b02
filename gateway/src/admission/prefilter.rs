//! A cheap, conservative pre-filter: which policies of a set could possibly judge a request,
//! read from public fields only (subjects, resource rules, bindings) without the cluster model.
//!
//! `policies-cel` keeps its exact matcher private, so this filter errs on the side of "could
//! match": selectors, scopes, resourceNames and exclusions are left to `evaluate()`. A request
//! no policy could match is answered without taking the model's lock.

use std::sync::Arc;

use k8s_openapi::api::admissionregistration::v1::{MatchResources, NamedRuleWithOperations};
use kube_core::DynamicObject;
use kube_core::admission::{AdmissionRequest, Operation};
use policies_cel::eval::subjects;
use policies_cel::policy::{Policy, PolicyKind, PolicySet};

/// The policies of `set` that could judge `request`.
pub fn candidates(set: &PolicySet, request: &AdmissionRequest<DynamicObject>) -> Vec<Arc<Policy>> {
    set.policies
        .iter()
        .filter(|policy| could_match(set, policy, request))
        .cloned()
        .collect()
}

/// False only when `policy` certainly does not judge `request`.
pub fn could_match(set: &PolicySet, policy: &Policy, request: &AdmissionRequest<DynamicObject>) -> bool {
    if let Some(subjects) = &policy.subjects
        && !subjects::judges(subjects, request)
    {
        return false;
    }
    if !rules_could_match(policy.match_constraints.as_ref(), request) {
        return false;
    }
    if policy.kind == PolicyKind::SafetyPolicy || set.implicit_bindings {
        return true;
    }
    set.bindings
        .iter()
        .filter(|b| b.policy_name == policy.name)
        .any(|b| rules_could_match(b.match_resources.as_ref(), request))
}

fn rules_could_match(
    constraints: Option<&MatchResources>,
    request: &AdmissionRequest<DynamicObject>,
) -> bool {
    match constraints.and_then(|c| c.resource_rules.as_deref()) {
        Some(rules) if !rules.is_empty() => rules.iter().any(|rule| rule_could_match(rule, request)),
        _ => true,
    }
}

/// The operation as Kubernetes spells it.
pub fn operation_name(request: &AdmissionRequest<DynamicObject>) -> &'static str {
    match request.operation {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
        Operation::Connect => "CONNECT",
    }
}

fn rule_could_match(rule: &NamedRuleWithOperations, admission: &AdmissionRequest<DynamicObject>) -> bool {
    if !listed(&rule.operations, operation_name(admission)) {
        return false;
    }
    let subresource = admission.sub_resource.as_deref().unwrap_or_default();
    let requested = admission.request_resource.as_ref().map(|r| {
        (
            r,
            admission.request_sub_resource.as_deref().unwrap_or(subresource),
        )
    });
    std::iter::once((&admission.resource, subresource))
        .chain(requested)
        .any(|(resource, sub)| {
            listed(&rule.api_groups, &resource.group)
                && listed(&rule.api_versions, &resource.version)
                && rule
                    .resources
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .any(|pattern| {
                        let (res, subpattern) = pattern.split_once('/').unwrap_or((pattern, ""));
                        (res == "*" || res == resource.resource) && (subpattern == "*" || subpattern == sub)
                    })
        })
}

fn listed(list: &Option<Vec<String>>, value: &str) -> bool {
    list.as_deref()
        .unwrap_or_default()
        .iter()
        .any(|item| item == "*" || item == value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use policies_cel::Request;
    use policies_cel::policy::Loader;

    fn review(resource: &str, subresource: &str, operation: &str, user: &str) -> Request {
        Request::from_review(serde_json::json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "u",
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": resource},
                "subResource": subresource,
                "name": "p", "namespace": "ns",
                "operation": operation,
                "userInfo": {"username": user},
                "object": null,
                "oldObject": null
            }
        }))
        .unwrap()
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
