//! Does a policy (or binding) apply to a request? `matchConstraints` / `matchResources` as
//! kube-apiserver evaluates them: resource rules with operations, groups, versions, resources and
//! subresources (with `*` forms), scope and resourceNames; exclusions; namespace and object
//! selectors.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use k8s_openapi::api::admissionregistration::v1::{MatchResources, NamedRuleWithOperations};
use kube_core::admission::AdmissionRequest;
use kube_core::{DynamicObject, GroupVersionResource};

use crate::cluster::ClusterView;
use crate::eval::Request;
use crate::eval::request::{Objects, operation_name};
use crate::eval::selector::{self, SelectorError};
use crate::eval::subjects::UserJudge;
use crate::policy::Subjects;

/// The parts of a request that matching reads, each gathered on first use and once per request
/// (most policy sets select no labels, and then no object is parsed for matching).
pub(crate) struct MatchInput<'a> {
    request: &'a Request,
    cluster: &'a dyn ClusterView,
    object_labels: OnceCell<BTreeMap<String, String>>,
    old_object_labels: OnceCell<BTreeMap<String, String>>,
    namespace_json: OnceCell<Option<serde_json::Value>>,
    namespace_labels: OnceCell<Option<BTreeMap<String, String>>>,
    /// Whether each `subjects` list judges the user, each distinct list matched once.
    users: UserJudge<'a>,
}

impl<'a> MatchInput<'a> {
    /// The match input of `request`, whose Namespace `cluster` knows.
    pub fn new(request: &'a Request, cluster: &'a dyn ClusterView) -> Self {
        Self {
            request,
            cluster,
            object_labels: OnceCell::new(),
            old_object_labels: OnceCell::new(),
            namespace_json: OnceCell::new(),
            namespace_labels: OnceCell::new(),
            users: UserJudge::new(&request.admission),
        }
    }

    /// Whether `subjects` judges the request's user (see [`UserJudge`]).
    pub fn judges_user(&self, subjects: &'a Subjects) -> bool {
        self.users.judges(subjects)
    }

    /// The request's own fields.
    pub fn admission(&self) -> &'a AdmissionRequest<DynamicObject> {
        &self.request.admission
    }

    fn objects(&self) -> &'a Objects {
        self.request.objects()
    }

    /// The request's Namespace as the cluster view knows it (none for a cluster-scoped request).
    pub fn namespace_json(&self) -> Option<&serde_json::Value> {
        self.namespace_json
            .get_or_init(|| {
                let namespace = self.admission().namespace.as_deref().unwrap_or_default();
                (!namespace.is_empty())
                    .then(|| self.cluster.namespace(namespace))
                    .flatten()
            })
            .as_ref()
    }

    fn object_labels(&self) -> &BTreeMap<String, String> {
        self.object_labels.get_or_init(|| self.objects().object.labels())
    }

    fn old_object_labels(&self) -> &BTreeMap<String, String> {
        self.old_object_labels
            .get_or_init(|| self.objects().old_object.labels())
    }

    /// Labels of the request's namespace (from the cluster view, or the Namespace object
    /// itself); `None` for a cluster-scoped request.
    fn namespace_labels(&self) -> Option<&BTreeMap<String, String>> {
        self.namespace_labels
            .get_or_init(|| {
                if is_namespace(&self.admission().resource) {
                    Some(if self.objects().object.is_present() {
                        self.object_labels().clone()
                    } else {
                        self.old_object_labels().clone()
                    })
                } else {
                    let namespace = self.admission().namespace.as_deref().unwrap_or_default();
                    (!namespace.is_empty())
                        .then(|| self.namespace_json().map(selector::labels_of).unwrap_or_default())
                }
            })
            .as_ref()
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
            .any(|rule| rule_matches(rule, input.admission(), equivalent))
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
        && let Some(labels) = input.namespace_labels()
        && !selector::matches(selector, labels)?
    {
        return Ok(false);
    }
    if let Some(selector) = &constraints.object_selector {
        let object =
            input.objects().object.is_present() && selector::matches(selector, input.object_labels())?;
        let old = input.objects().old_object.is_present()
            && selector::matches(selector, input.old_object_labels())?;
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
pub(crate) fn resource_listed(patterns: &[String], resource: &str, subresource: &str) -> bool {
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
