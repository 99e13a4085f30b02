//! The kinds a model of a live cluster reads from the API: every built-in kind the projection
//! knows ([`project`](crate::cluster::project)), plus the owners that only take part in
//! cascades (CronJobs own Jobs, ReplicationControllers own pods), and each CRD's instances
//! through the version the API serves. The gateway watches them; the plugin lists them.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{
    ConfigMap, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, ReplicationController, Secret,
    Service,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube_core::ApiResource;
use serde_json::Value;

/// The built-in kinds of [`builtin`] that are cluster-scoped.
pub const CLUSTER_SCOPED: &[&str] = &[
    "Namespace",
    "Node",
    "PersistentVolume",
    "CustomResourceDefinition",
];

/// True when `kind`, one of [`builtin`]'s, is cluster-scoped.
pub fn is_cluster_scoped(kind: &str) -> bool {
    CLUSTER_SCOPED.contains(&kind)
}

/// The built-in kinds read into the model, CustomResourceDefinitions last.
pub fn builtin() -> Vec<ApiResource> {
    vec![
        ApiResource::erase::<Namespace>(&()),
        ApiResource::erase::<Node>(&()),
        ApiResource::erase::<Pod>(&()),
        ApiResource::erase::<Service>(&()),
        ApiResource::erase::<EndpointSlice>(&()),
        ApiResource::erase::<PersistentVolumeClaim>(&()),
        ApiResource::erase::<PersistentVolume>(&()),
        ApiResource::erase::<ConfigMap>(&()),
        ApiResource::erase::<Secret>(&()),
        ApiResource::erase::<ReplicationController>(&()),
        ApiResource::erase::<Deployment>(&()),
        ApiResource::erase::<ReplicaSet>(&()),
        ApiResource::erase::<StatefulSet>(&()),
        ApiResource::erase::<DaemonSet>(&()),
        ApiResource::erase::<Job>(&()),
        ApiResource::erase::<CronJob>(&()),
        ApiResource::erase::<PodDisruptionBudget>(&()),
        crd(),
    ]
}

/// CustomResourceDefinitions (apiextensions.k8s.io/v1).
pub fn crd() -> ApiResource {
    ApiResource::erase::<CustomResourceDefinition>(&())
}

/// The resource as kubectl names it (`pods`, `deployments.apps`): a watch's or a list's name.
pub fn resource_name(resource: &ApiResource) -> String {
    if resource.group.is_empty() {
        resource.plural.clone()
    } else {
        format!("{}.{}", resource.plural, resource.group)
    }
}

/// The resource to read a CRD's instances through: its storage version when served, else
/// its first served version. `None` for a CRD without a served version.
pub fn instance_resource(crd: &Value) -> Option<(String, ApiResource)> {
    let name = crd["metadata"]["name"].as_str()?;
    let spec = &crd["spec"];
    let group = spec["group"].as_str()?;
    let kind = spec["names"]["kind"].as_str()?;
    let plural = spec["names"]["plural"].as_str()?;
    let served: Vec<&Value> = spec["versions"]
        .as_array()?
        .iter()
        .filter(|v| v["served"].as_bool().unwrap_or(false))
        .collect();
    let version = served
        .iter()
        .find(|v| v["storage"].as_bool().unwrap_or(false))
        .or(served.first())?["name"]
        .as_str()?;
    let resource = ApiResource {
        group: group.to_owned(),
        version: version.to_owned(),
        api_version: format!("{group}/{version}"),
        kind: kind.to_owned(),
        plural: plural.to_owned(),
    };
    Some((name.to_owned(), resource))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_projected_kind_is_watched() {
        let names: Vec<String> = builtin().iter().map(resource_name).collect();
        for expected in [
            "pods",
            "nodes",
            "namespaces",
            "services",
            "endpointslices.discovery.k8s.io",
            "persistentvolumeclaims",
            "persistentvolumes",
            "configmaps",
            "secrets",
            "deployments.apps",
            "replicasets.apps",
            "statefulsets.apps",
            "daemonsets.apps",
            "jobs.batch",
            "cronjobs.batch",
            "poddisruptionbudgets.policy",
            "customresourcedefinitions.apiextensions.k8s.io",
        ] {
            assert!(
                names.iter().any(|n| n == expected),
                "{expected} missing from {names:?}"
            );
        }
        assert_eq!(crd().api_version, "apiextensions.k8s.io/v1");
    }

    fn crd_object(name: &str, versions: Value) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": name},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets"}, "versions": versions}})
    }

    #[test]
    fn instances_are_watched_through_the_served_storage_version() {
        let (_, resource) = instance_resource(&crd_object(
            "widgets.example.com",
            json!([{"name": "v1alpha1", "served": true, "storage": false},
                   {"name": "v1", "served": true, "storage": true}]),
        ))
        .unwrap();
        assert_eq!(resource.api_version, "example.com/v1");
        assert_eq!(
            (resource.kind.as_str(), resource.plural.as_str()),
            ("Widget", "widgets")
        );
        let (_, resource) = instance_resource(&crd_object(
            "widgets.example.com",
            json!([{"name": "v2", "served": false, "storage": true}, {"name": "v1", "served": true}]),
        ))
        .unwrap();
        assert_eq!(resource.version, "v1");
        assert!(instance_resource(&crd_object("w", json!([{"name": "v1", "served": false}]))).is_none());
    }
}
