//! The kinds whose schema the lint knows — built-in ones ([`builtin`](crate::lint::builtin))
//! and custom resources of the CRDs it was given ([`crds`](crate::lint::crds)) — and which of
//! them a policy's `matchConstraints` names, as kube-apiserver's ValidatingAdmissionPolicy type
//! check picks them.
//!
//! Kubernetes' behaviour, followed here (`admission/plugin/policy/validating/typechecking.go`,
//! `typesToCheck`): for each rule of `matchConstraints.resourceRules`, a rule with a wildcard
//! among its `apiGroups` or its `apiVersions` gives no kind at all; among its `resources`,
//! wildcards and subresources (`pods/eviction`) are skipped; every remaining group × version ×
//! resource (each sorted) is resolved to the kind it serves, and unknown ones give nothing. At
//! most ten kinds are checked. The expressions are then checked against each kind's schema and
//! what fails is reported as a *warning* (`status.typeChecking.expressionWarnings`): the policy
//! is created all the same. A policy with no known kind has `object` typed `dyn`: no warning.

use std::sync::Arc;

use k8s_openapi::api::admissionregistration::v1::MatchResources;
use serde_json::Value;

use crate::lint::builtin::BuiltinKind;
use crate::lint::crds::{Crds, CustomKind};

/// kube-apiserver checks at most this many kinds per policy (`maxTypesToCheck`).
const MAX_KINDS: usize = 10;

/// A kind whose schema is known: built in (its schema generated once and shared), or served by
/// a CustomResourceDefinition (its version's `openAPIV3Schema`).
#[derive(Debug, Clone)]
pub(crate) enum KnownKind {
    Builtin(&'static BuiltinKind),
    Custom(Arc<CustomKind>),
}

impl KnownKind {
    /// The kind served as `resource` by `group`/`version`: a built-in one first, then a CRD's.
    pub(crate) fn find(crds: &Crds, group: &str, version: &str, resource: &str) -> Option<Self> {
        BuiltinKind::find(group, version, resource)
            .map(KnownKind::Builtin)
            .or_else(|| crds.find(group, version, resource).map(KnownKind::Custom))
    }

    /// The kind's schema.
    pub(crate) fn schema(&self) -> &Value {
        match self {
            KnownKind::Builtin(kind) => kind.schema(),
            KnownKind::Custom(kind) => &kind.schema,
        }
    }

    /// The kind's name (`Deployment`, `Backup`).
    pub(crate) fn kind(&self) -> &str {
        match self {
            KnownKind::Builtin(kind) => kind.kind,
            KnownKind::Custom(kind) => &kind.kind,
        }
    }

    /// `Deployment apps/v1`, `Pod v1`, `Backup example.com/v1`: how findings name the kind.
    pub(crate) fn describe(&self) -> String {
        let (group, version) = match self {
            KnownKind::Builtin(kind) => (kind.group, kind.version),
            KnownKind::Custom(kind) => (kind.group.as_str(), kind.version.as_str()),
        };
        if group.is_empty() {
            format!("{} {version}", self.kind())
        } else {
            format!("{} {group}/{version}", self.kind())
        }
    }

    /// The same kind (one resource may be named twice by the rules).
    fn same(&self, other: &Self) -> bool {
        match (self, other) {
            (KnownKind::Builtin(a), KnownKind::Builtin(b)) => std::ptr::eq(*a, *b),
            (KnownKind::Custom(a), KnownKind::Custom(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// The known kinds `matchConstraints` selects, in kube-apiserver's order (see the module
/// header); empty when `object` is to be typed `dyn`.
pub(crate) fn kinds_to_check(constraints: &MatchResources, crds: &Crds) -> Vec<KnownKind> {
    let mut out: Vec<KnownKind> = Vec::new();
    let mut count = 0;
    for rule in constraints.resource_rules.iter().flatten() {
        let all = |list: &Option<Vec<String>>| list.clone().unwrap_or_default();
        let (mut groups, mut versions) = (all(&rule.api_groups), all(&rule.api_versions));
        if groups.iter().chain(&versions).any(|g| g.contains('*')) {
            continue;
        }
        let mut resources: Vec<String> = all(&rule.resources)
            .into_iter()
            .filter(|r| !r.contains(['*', '/']))
            .collect();
        groups.sort();
        versions.sort();
        resources.sort();
        for group in &groups {
            for version in &versions {
                for resource in &resources {
                    let Some(kind) = KnownKind::find(crds, group, version, resource) else {
                        continue;
                    };
                    count += 1;
                    if !out.iter().any(|k| k.same(&kind)) {
                        out.push(kind);
                    }
                    if count == MAX_KINDS {
                        return out;
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(rules: Value, crds: &Crds) -> Vec<String> {
        let constraints: MatchResources =
            serde_json::from_value(serde_json::json!({ "resourceRules": rules })).unwrap();
        kinds_to_check(&constraints, crds)
            .iter()
            .map(|k| k.kind().to_owned())
            .collect()
    }

    #[test]
    fn exact_rules_name_their_kinds() {
        let rules = serde_json::json!([
            {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["*"],
             "resources": ["statefulsets", "deployments", "deployments/scale", "widgets"]},
            {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["pods", "*"]},
        ]);
        assert_eq!(
            kinds(rules, &Crds::default()),
            ["Deployment", "StatefulSet", "Pod"]
        );
    }

    #[test]
    fn wildcards_give_no_kind() {
        let rules = serde_json::json!([
            {"apiGroups": ["*"], "apiVersions": ["v1"], "operations": ["*"], "resources": ["pods"]},
            {"apiGroups": [""], "apiVersions": ["*"], "operations": ["*"], "resources": ["pods"]},
            {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["*", "pods/status"]},
            {"apiGroups": ["apps"], "apiVersions": ["v1beta1"], "operations": ["*"], "resources": ["deployments"]},
        ]);
        assert!(kinds(rules, &Crds::default()).is_empty());
    }

    #[test]
    fn custom_resources_are_named_by_their_crds() {
        let crd = serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"plural": "widgets", "kind": "Widget"},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": true, "storage": true,
                              "schema": {"openAPIV3Schema": {"type": "object"}}}],
            },
        });
        let mut crds = Crds::default();
        crds.add(crate::lint::crds::read(&crd).unwrap());
        let rules = serde_json::json!([
            {"apiGroups": ["example.com"], "apiVersions": ["v1", "v2"], "operations": ["*"],
             "resources": ["widgets", "gadgets"]},
            {"apiGroups": ["example.com"], "apiVersions": ["v1"], "operations": ["*"], "resources": ["widgets"]},
        ]);
        assert_eq!(kinds(rules.clone(), &crds), ["Widget"]);
        assert!(kinds(rules, &Crds::default()).is_empty());
    }
}
