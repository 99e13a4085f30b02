//! Does a policy (or binding) apply to a request? `matchConstraints` / `matchResources` as
//! kube-apiserver evaluates them: resource rules with operations, groups, versions, resources and
//! subresources (with `*` forms), scope and resourceNames; exclusions; namespace and object
//! selectors.

use std::collections::BTreeMap;

use k8s_openapi::api::admissionregistration::v1::{MatchResources, NamedRuleWithOperations};
use kube_core::admission::AdmissionRequest;
use kube_core::{DynamicObject, GroupVersionResource};

use crate::eval::request::operation_name;
use crate::eval::selector::{self, SelectorError};

/// The parts of a request that matching reads, gathered once.
pub(crate) struct MatchInput<'a> {
    pub request: &'a AdmissionRequest<DynamicObject>,
    pub object_labels: BTreeMap<String, String>,
    pub old_object_labels: BTreeMap<String, String>,
    /// Labels of the request's namespace (from the cluster view, or the Namespace object itself).
    pub namespace_labels: Option<BTreeMap<String, String>>,
    /// The user's service account as `namespace/name`, when the user is one.
    pub service_account: Option<String>,
}

impl<'a> MatchInput<'a> {
    /// `namespace` is the request's Namespace as the cluster view knows it.
    pub fn new(request: &'a AdmissionRequest<DynamicObject>, namespace: Option<&serde_json::Value>) -> Self {
        let labels = |object: &Option<DynamicObject>| {
            object
                .as_ref()
                .map(|o| {
                    o.metadata
                        .labels
                        .clone()
                        .unwrap_or_default()
                        .into_iter()
                        .collect()
                })
                .unwrap_or_default()
        };
        let object_labels: BTreeMap<String, String> = labels(&request.object);
        let old_object_labels: BTreeMap<String, String> = labels(&request.old_object);
        let namespace_labels = if is_namespace(&request.resource) {
            Some(if request.object.is_some() {
                object_labels.clone()
            } else {
                old_object_labels.clone()
            })
        } else {
            request
                .namespace
                .as_deref()
                .filter(|ns| !ns.is_empty())
                .map(|_| namespace.map(selector::labels_of).unwrap_or_default())
        };
        let service_account = request
            .user_info
            .username
            .as_deref()
            .and_then(crate::eval::subjects::service_account);
        Self {
            request,
            object_labels,
            old_object_labels,
            namespace_labels,
            service_account,
        }
    }
}

fn is_namespace(resource: &GroupVersionResource) -> bool {
    resource.group.is_empty() && resource.resource == "namespaces"
}

/// True when `constraints` select the request. `None` selects everything.
pub(crate) fn matches(
    constraints: Option<&MatchResources>,
    input: &MatchInput<'_>,
) -> Result<bool, SelectorError> {
    let Some(constraints) = constraints else {
        return Ok(true);
    };
    let equivalent = constraints.match_policy.as_deref() != Some("Exact");
    let rule_hit = |rules: &[NamedRuleWithOperations]| {
        rules
            .iter()
            .any(|rule| rule_matches(rule, input.request, equivalent))
    };
    match constraints.resource_rules.as_deref() {
        Some(rules) if !rules.is_empty() && !rule_hit(rules) => return Ok(false),
        _ => {}
    }
    if constraints
        .exclude_resource_rules
        .as_deref()
        .is_some_and(rule_hit)
    {
        return Ok(false);
    }
    if let Some(selector) = &constraints.namespace_selector
        && let Some(labels) = &input.namespace_labels
        && !selector::matches(selector, labels)?
    {
        return Ok(false);
    }
    if let Some(selector) = &constraints.object_selector {
        let object = input.request.object.is_some() && selector::matches(selector, &input.object_labels)?;
        let old =
            input.request.old_object.is_some() && selector::matches(selector, &input.old_object_labels)?;
        if !object && !old {
            return Ok(false);
        }
    }
    Ok(true)
}

fn listed(list: &Option<Vec<String>>, value: &str) -> bool {
    list.as_deref()
        .unwrap_or_default()
        .iter()
        .any(|item| item == "*" || item == value)
}

pub(crate) fn rule_matches(
    rule: &NamedRuleWithOperations,
    request: &AdmissionRequest<DynamicObject>,
    equivalent: bool,
) -> bool {
    if !listed(&rule.operations, operation_name(request)) {
        return false;
    }
    let namespaced = request.namespace.as_deref().is_some_and(|ns| !ns.is_empty());
    match rule.scope.as_deref() {
        Some("Cluster") if namespaced => return false,
        Some("Namespaced") if !namespaced => return false,
        _ => {}
    }
    if let Some(names) = rule.resource_names.as_deref()
        && !names.is_empty()
        && !names.iter().any(|n| n == &request.name)
    {
        return false;
    }
    let subresource = request.sub_resource.as_deref().unwrap_or_default();
    let requested = request
        .request_resource
        .as_ref()
        .map(|r| (r, request.request_sub_resource.as_deref().unwrap_or(subresource)));
    let candidates =
        std::iter::once((&request.resource, subresource)).chain(requested.filter(|_| equivalent));
    for (resource, sub) in candidates {
        if listed(&rule.api_groups, &resource.group)
            && listed(&rule.api_versions, &resource.version)
            && resource_listed(
                rule.resources.as_deref().unwrap_or_default(),
                &resource.resource,
                sub,
            )
        {
            return true;
        }
    }
    false
}

/// The resources field of a rule: `*`, `*/*`, `pods`, `pods/*`, `*/scale`, `pods/eviction`.
fn resource_listed(patterns: &[String], resource: &str, subresource: &str) -> bool {
    patterns.iter().any(|pattern| {
        let (res, sub) = pattern.split_once('/').unwrap_or((pattern, ""));
        (res == "*" || res == resource) && (sub == "*" || sub == subresource)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn resource_patterns_follow_kubernetes() {
        assert!(resource_listed(&patterns(&["pods"]), "pods", ""));
        assert!(!resource_listed(&patterns(&["pods"]), "pods", "eviction"));
        assert!(resource_listed(&patterns(&["pods/eviction"]), "pods", "eviction"));
        assert!(resource_listed(&patterns(&["pods/*"]), "pods", "status"));
        assert!(resource_listed(&patterns(&["pods/*"]), "pods", ""));
        assert!(resource_listed(&patterns(&["*"]), "deployments", ""));
        assert!(!resource_listed(&patterns(&["*"]), "deployments", "scale"));
        assert!(resource_listed(&patterns(&["*/scale"]), "statefulsets", "scale"));
        assert!(resource_listed(&patterns(&["*/*"]), "statefulsets", "status"));
    }
}
