//! The kinds a model of a live cluster reads from the API: every built-in kind the projection
//! knows ([`project`](crate::cluster::project)), plus the owners that only take part in
//! cascades (CronJobs own Jobs, ReplicationControllers own pods), the HorizontalPodAutoscalers
//! whose ranges make a scale-down intended (the catalog's `kubernetes-hpa` profile), and each
//! CRD's instances through the version the API serves. The gateway watches them; the plugin lists them.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{
    ConfigMap, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, ReplicationController, Secret,
    Service,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube_core::ApiResource;
use serde_json::Value;

/// Whether a k8s-openapi resource scope puts objects in a namespace.
trait Scope {
    const NAMESPACED: bool;
}

impl Scope for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

impl Scope for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

/// A built-in kind read into the model: its name and scope as its k8s-openapi type says.
struct Builtin {
    kind: &'static str,
    namespaced: bool,
    resource: fn() -> ApiResource,
}

const fn of<K>() -> Builtin
where
    K: k8s_openapi::Resource + kube_core::Resource<DynamicType = ()>,
    <K as k8s_openapi::Resource>::Scope: Scope,
{
    Builtin {
        kind: <K as k8s_openapi::Resource>::KIND,
        namespaced: <<K as k8s_openapi::Resource>::Scope as Scope>::NAMESPACED,
        resource: || ApiResource::erase::<K>(&()),
    }
}

/// The built-in kinds read into the model, CustomResourceDefinitions last.
const BUILTIN: &[Builtin] = &[
    of::<Namespace>(),
    of::<Node>(),
    of::<Pod>(),
    of::<Service>(),
    of::<EndpointSlice>(),
    of::<PersistentVolumeClaim>(),
    of::<PersistentVolume>(),
    of::<ConfigMap>(),
    of::<Secret>(),
    of::<ReplicationController>(),
    of::<Deployment>(),
    of::<ReplicaSet>(),
    of::<StatefulSet>(),
    of::<DaemonSet>(),
    of::<Job>(),
    of::<CronJob>(),
    of::<PodDisruptionBudget>(),
    of::<HorizontalPodAutoscaler>(),
    of::<CustomResourceDefinition>(),
];

/// True when `kind`, one of [`builtin`]'s, is cluster-scoped (its type's scope says so).
pub fn is_cluster_scoped(kind: &str) -> bool {
    BUILTIN.iter().any(|b| b.kind == kind && !b.namespaced)
}

/// Whether built-in `kind` of API `group` is read into the model, and then whether it is
/// namespaced: the model holds every object of such a kind (`None` for other kinds).
pub fn read_into_model(group: &str, kind: &str) -> Option<bool> {
    BUILTIN
        .iter()
        .find(|b| b.kind == kind && crate::cluster::object::builtin_group(kind) == Some(group))
        .map(|b| b.namespaced)
}

/// The built-in kinds read into the model, CustomResourceDefinitions last.
pub fn builtin() -> Vec<ApiResource> {
    BUILTIN.iter().map(|b| (b.resource)()).collect()
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
        let watched = builtin();
        for (group, kind) in crate::cluster::project::projected_kinds() {
            assert!(
                watched.iter().any(|r| r.group == group && r.kind == kind),
                "{kind} ({group:?}) is projected but not watched"
            );
        }
        // Owners that only take part in cascades are watched too.
        let names: Vec<String> = watched.iter().map(resource_name).collect();
        for owner in ["cronjobs.batch", "replicationcontrollers"] {
            assert!(names.iter().any(|n| n == owner), "{owner} missing from {names:?}");
        }
        assert_eq!(watched.last(), Some(&crd()));
        assert_eq!(crd().api_version, "apiextensions.k8s.io/v1");
    }

    #[test]
    fn scopes_come_from_the_types() {
        let cluster_scoped: Vec<String> = builtin()
            .into_iter()
            .filter(|r| is_cluster_scoped(&r.kind))
            .map(|r| r.kind)
            .collect();
        assert_eq!(
            cluster_scoped,
            [
                "Namespace",
                "Node",
                "PersistentVolume",
                "CustomResourceDefinition"
            ]
        );
        assert!(!is_cluster_scoped("Pod"));
        assert!(!is_cluster_scoped("Widget"));
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
