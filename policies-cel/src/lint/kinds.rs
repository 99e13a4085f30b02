//! The built-in kinds whose schema the lint knows (through k8s-openapi), and which of them a
//! policy's `matchConstraints` names, as kube-apiserver's ValidatingAdmissionPolicy type check
//! picks them.
//!
//! Kubernetes' behaviour, followed here (`admission/plugin/policy/validating/typechecking.go`,
//! `typesToCheck`): for each rule of `matchConstraints.resourceRules`, a rule with a wildcard
//! among its `apiGroups` or its `apiVersions` gives no kind at all; among its `resources`,
//! wildcards and subresources (`pods/eviction`) are skipped; every remaining group × version ×
//! resource (each sorted) is resolved to the kind it serves, and unknown ones give nothing. At
//! most ten kinds are checked. The expressions are then checked against each kind's schema and
//! what fails is reported as a *warning* (`status.typeChecking.expressionWarnings`): the policy
//! is created all the same. A policy with no known kind has `object` typed `dyn`: no warning.

use std::sync::OnceLock;

use k8s_openapi::api::admissionregistration::v1::MatchResources;
use schemars::JsonSchema;
use serde_json::Value;

use k8s_openapi::api::{apps, batch, core, networking, policy, rbac, storage};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// kube-apiserver checks at most this many kinds per policy (`maxTypesToCheck`).
const MAX_KINDS: usize = 10;

/// A built-in kind: the resource serving it and its schema.
#[derive(Debug)]
pub(crate) struct BuiltinKind {
    pub(crate) group: &'static str,
    pub(crate) version: &'static str,
    pub(crate) resource: &'static str,
    pub(crate) kind: &'static str,
    generate: fn() -> Value,
}

fn schema_of<T: JsonSchema>() -> Value {
    schemars::schema_for!(T).into()
}

macro_rules! kinds {
    ($($group:literal $version:literal $resource:literal => $kind:literal $ty:ty,)*) => {
        const KINDS: &[BuiltinKind] = &[$(BuiltinKind {
            group: $group,
            version: $version,
            resource: $resource,
            kind: $kind,
            generate: schema_of::<$ty>,
        },)*];
    };
}

kinds! {
    "" "v1" "pods" => "Pod" core::v1::Pod,
    "" "v1" "services" => "Service" core::v1::Service,
    "" "v1" "configmaps" => "ConfigMap" core::v1::ConfigMap,
    "" "v1" "secrets" => "Secret" core::v1::Secret,
    "" "v1" "namespaces" => "Namespace" core::v1::Namespace,
    "" "v1" "nodes" => "Node" core::v1::Node,
    "" "v1" "persistentvolumes" => "PersistentVolume" core::v1::PersistentVolume,
    "" "v1" "persistentvolumeclaims" => "PersistentVolumeClaim" core::v1::PersistentVolumeClaim,
    "" "v1" "serviceaccounts" => "ServiceAccount" core::v1::ServiceAccount,
    "" "v1" "replicationcontrollers" => "ReplicationController" core::v1::ReplicationController,
    "" "v1" "resourcequotas" => "ResourceQuota" core::v1::ResourceQuota,
    "" "v1" "limitranges" => "LimitRange" core::v1::LimitRange,
    "apps" "v1" "deployments" => "Deployment" apps::v1::Deployment,
    "apps" "v1" "statefulsets" => "StatefulSet" apps::v1::StatefulSet,
    "apps" "v1" "daemonsets" => "DaemonSet" apps::v1::DaemonSet,
    "apps" "v1" "replicasets" => "ReplicaSet" apps::v1::ReplicaSet,
    "batch" "v1" "jobs" => "Job" batch::v1::Job,
    "batch" "v1" "cronjobs" => "CronJob" batch::v1::CronJob,
    "policy" "v1" "poddisruptionbudgets" => "PodDisruptionBudget" policy::v1::PodDisruptionBudget,
    "networking.k8s.io" "v1" "ingresses" => "Ingress" networking::v1::Ingress,
    "networking.k8s.io" "v1" "networkpolicies" => "NetworkPolicy" networking::v1::NetworkPolicy,
    "rbac.authorization.k8s.io" "v1" "roles" => "Role" rbac::v1::Role,
    "rbac.authorization.k8s.io" "v1" "clusterroles" => "ClusterRole" rbac::v1::ClusterRole,
    "rbac.authorization.k8s.io" "v1" "rolebindings" => "RoleBinding" rbac::v1::RoleBinding,
    "rbac.authorization.k8s.io" "v1" "clusterrolebindings" => "ClusterRoleBinding" rbac::v1::ClusterRoleBinding,
    "storage.k8s.io" "v1" "storageclasses" => "StorageClass" storage::v1::StorageClass,
    "apiextensions.k8s.io" "v1" "customresourcedefinitions" => "CustomResourceDefinition" CustomResourceDefinition,
}

/// Each kind's schema, generated on first use.
static SCHEMAS: [OnceLock<Value>; KINDS.len()] = [const { OnceLock::new() }; KINDS.len()];

impl BuiltinKind {
    /// The kind served as `resource` by `group`/`version`, if it is one the lint knows.
    pub(crate) fn find(group: &str, version: &str, resource: &str) -> Option<&'static Self> {
        KINDS
            .iter()
            .find(|k| k.group == group && k.version == version && k.resource == resource)
    }

    /// The kind's schema (generated once, then kept).
    pub(crate) fn schema(&'static self) -> &'static Value {
        let index = KINDS
            .iter()
            .position(|k| std::ptr::eq(k, self))
            .unwrap_or_default();
        SCHEMAS[index].get_or_init(self.generate)
    }

    /// `Deployment apps/v1`, `Pod v1`: how findings name the kind.
    pub(crate) fn describe(&self) -> String {
        if self.group.is_empty() {
            format!("{} {}", self.kind, self.version)
        } else {
            format!("{} {}/{}", self.kind, self.group, self.version)
        }
    }
}

/// The known kinds `matchConstraints` selects, in kube-apiserver's order (see the module
/// header); empty when `object` is to be typed `dyn`.
pub(crate) fn kinds_to_check(constraints: &MatchResources) -> Vec<&'static BuiltinKind> {
    let mut out: Vec<&'static BuiltinKind> = Vec::new();
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
                    let Some(kind) = BuiltinKind::find(group, version, resource) else {
                        continue;
                    };
                    count += 1;
                    if !out.iter().any(|k| std::ptr::eq(*k, kind)) {
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

    fn kinds(rules: Value) -> Vec<&'static str> {
        let constraints: MatchResources =
            serde_json::from_value(serde_json::json!({ "resourceRules": rules })).unwrap();
        kinds_to_check(&constraints).iter().map(|k| k.kind).collect()
    }

    #[test]
    fn exact_rules_name_their_kinds() {
        let rules = serde_json::json!([
            {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["*"],
             "resources": ["statefulsets", "deployments", "deployments/scale", "widgets"]},
            {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["pods", "*"]},
        ]);
        assert_eq!(kinds(rules), ["Deployment", "StatefulSet", "Pod"]);
    }

    #[test]
    fn wildcards_give_no_kind() {
        let rules = serde_json::json!([
            {"apiGroups": ["*"], "apiVersions": ["v1"], "operations": ["*"], "resources": ["pods"]},
            {"apiGroups": [""], "apiVersions": ["*"], "operations": ["*"], "resources": ["pods"]},
            {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": ["*", "pods/status"]},
            {"apiGroups": ["apps"], "apiVersions": ["v1beta1"], "operations": ["*"], "resources": ["deployments"]},
        ]);
        assert!(kinds(rules).is_empty());
    }

    #[test]
    fn every_schema_generates_with_its_properties() {
        for kind in KINDS {
            let schema = kind.schema();
            assert!(schema.pointer("/properties/metadata").is_some(), "{}", kind.kind);
        }
    }
}
