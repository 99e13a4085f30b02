//! The built-in kinds the live model watches: every kind the projection knows
//! (`policies_cel::cluster::project`), plus the owners that only take part in cascades
//! (CronJobs own Jobs, ReplicationControllers own pods).

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{
    ConfigMap, Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod, ReplicationController, Secret,
    Service,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::ApiResource;

/// The built-in kinds watched into the model, CustomResourceDefinitions last.
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

/// A watch's name: the resource as kubectl names it (`pods`, `deployments.apps`).
pub fn watch_name(resource: &ApiResource) -> String {
    if resource.group.is_empty() {
        resource.plural.clone()
    } else {
        format!("{}.{}", resource.plural, resource.group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_projected_kind_is_watched() {
        let names: Vec<String> = builtin().iter().map(watch_name).collect();
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
}
