//! The built-in kinds whose schema the lint knows, through k8s-openapi: each served resource,
//! its kind, and its JSON schema as `schemars` renders the k8s-openapi type (generated on first
//! use, then kept); and the standard `ObjectMeta` schema, which custom resources share.

use std::sync::OnceLock;

use schemars::JsonSchema;
use serde_json::Value;

use k8s_openapi::api::{apps, batch, core, networking, node, policy, rbac, scheduling, storage};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

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
    "scheduling.k8s.io" "v1" "priorityclasses" => "PriorityClass" scheduling::v1::PriorityClass,
    "node.k8s.io" "v1" "runtimeclasses" => "RuntimeClass" node::v1::RuntimeClass,
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
}

/// The schema of `metadata` (k8s-openapi's `ObjectMeta`, its own `$defs` included), generated
/// once, then kept.
pub(crate) fn object_meta() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(schema_of::<ObjectMeta>)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_generates_with_its_properties() {
        for kind in KINDS {
            let schema = kind.schema();
            assert!(schema.pointer("/properties/metadata").is_some(), "{}", kind.kind);
        }
        assert!(object_meta().pointer("/properties/labels").is_some());
    }

    #[test]
    fn kinds_are_found_by_group_version_and_resource() {
        let deployment = BuiltinKind::find("apps", "v1", "deployments").unwrap();
        assert_eq!(deployment.kind, "Deployment");
        assert!(BuiltinKind::find("apps", "v1beta1", "deployments").is_none());
        assert!(BuiltinKind::find("example.com", "v1", "widgets").is_none());
    }
}
