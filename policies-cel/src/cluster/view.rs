//! [`ClusterView`]: the one read-only trait through which policies and the impact estimate see
//! the cluster. The plugin implements it with a [`ClusterModel`](crate::cluster::ClusterModel)
//! built from snapshots, the gateway with one kept by watches.

use serde_json::json;

use crate::cluster::object::{ClassKind, Object, ObjectKey, Selector};

/// A read-only view of the cluster. Every query costs what it returns, not the cluster's size.
pub trait ClusterView: Send + Sync {
    /// The object with `key`.
    fn get(&self, key: &ObjectKey) -> Option<&Object>;

    /// The object with `uid`.
    fn by_uid(&self, uid: &str) -> Option<&Object>;

    /// Objects whose ownerReferences name `owner_uid`.
    fn dependents(&self, owner_uid: &str) -> Vec<&Object>;

    /// Every object in `namespace`.
    fn in_namespace(&self, namespace: &str) -> Vec<&Object>;

    /// Every object of a kind (e.g. the instances of a CRD).
    fn of_kind(&self, group: &str, kind: &str) -> Vec<&Object>;

    /// Pods bound to `node`.
    fn pods_on_node(&self, node: &str) -> Vec<&Object>;

    /// PersistentVolumes whose required node affinity pins them to the node named `node`, or to
    /// the node whose node-local topology label (the hostname, a local-disk CSI driver's key)
    /// has the value `node`.
    fn volumes_pinned_to(&self, node: &str) -> Vec<&Object>;

    /// Pods in `namespace` whose labels satisfy `selector`.
    fn pods_matching(&self, namespace: &str, selector: &Selector) -> Vec<&Object>;

    /// Pods mounting the PersistentVolumeClaim `claim`.
    fn pods_using_claim(&self, namespace: &str, claim: &str) -> Vec<&Object>;

    /// The PersistentVolume bound to the claim.
    fn volume_of_claim(&self, namespace: &str, claim: &str) -> Option<&Object>;

    /// Pods reading the ConfigMap or Secret (`kind`) `namespace/name`.
    fn pods_reading(&self, kind: &str, namespace: &str, name: &str) -> Vec<&Object>;

    /// EndpointSlices of a Service.
    fn endpoint_slices(&self, namespace: &str, service: &str) -> Vec<&Object>;

    /// Pods naming the class of `kind` called `name` (every namespace).
    fn pods_of_class(&self, kind: ClassKind, name: &str) -> Vec<&Object>;

    /// Services or PodDisruptionBudgets (`kind`) whose selector matches `pod`.
    fn selecting_pod(&self, kind: &str, pod: &Object) -> Vec<&Object>;

    /// How many objects the view holds (0 when it knows nothing).
    fn object_count(&self) -> usize;

    /// The fingerprint of the pod template of the workload with `key`, when the view recorded it
    /// ([`template`](super::template): snapshots and the plugin's live reads do; the gateway's
    /// watches need not, its UPDATEs carry both objects).
    fn pod_template(&self, _key: &ObjectKey) -> Option<u64> {
        None
    }

    /// The Namespace `name` as `namespaceObject` sees it (metadata with labels).
    fn namespace(&self, name: &str) -> Option<serde_json::Value> {
        let ns = self.get(&ObjectKey::new("", "Namespace", "", name))?;
        let labels: serde_json::Map<String, serde_json::Value> = ns
            .labels
            .iter()
            .map(|(k, v)| (k.to_string(), json!(&**v)))
            .collect();
        let annotations: serde_json::Map<String, serde_json::Value> = ns
            .annotations
            .iter()
            .map(|(k, v)| (k.to_string(), json!(&**v)))
            .collect();
        Some(json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name, "uid": ns.uid.as_deref(), "labels": labels, "annotations": annotations},
        }))
    }
}

/// A cluster we know nothing about: every query is empty.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmptyCluster;

impl ClusterView for EmptyCluster {
    fn get(&self, _: &ObjectKey) -> Option<&Object> {
        None
    }
    fn by_uid(&self, _: &str) -> Option<&Object> {
        None
    }
    fn dependents(&self, _: &str) -> Vec<&Object> {
        Vec::new()
    }
    fn in_namespace(&self, _: &str) -> Vec<&Object> {
        Vec::new()
    }
    fn of_kind(&self, _: &str, _: &str) -> Vec<&Object> {
        Vec::new()
    }
    fn pods_on_node(&self, _: &str) -> Vec<&Object> {
        Vec::new()
    }
    fn volumes_pinned_to(&self, _: &str) -> Vec<&Object> {
        Vec::new()
    }
    fn pods_matching(&self, _: &str, _: &Selector) -> Vec<&Object> {
        Vec::new()
    }
    fn pods_using_claim(&self, _: &str, _: &str) -> Vec<&Object> {
        Vec::new()
    }
    fn volume_of_claim(&self, _: &str, _: &str) -> Option<&Object> {
        None
    }
    fn pods_reading(&self, _: &str, _: &str, _: &str) -> Vec<&Object> {
        Vec::new()
    }
    fn pods_of_class(&self, _: ClassKind, _: &str) -> Vec<&Object> {
        Vec::new()
    }

    fn endpoint_slices(&self, _: &str, _: &str) -> Vec<&Object> {
        Vec::new()
    }
    fn selecting_pod(&self, _: &str, _: &Object) -> Vec<&Object> {
        Vec::new()
    }
    fn object_count(&self) -> usize {
        0
    }
}
