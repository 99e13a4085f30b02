//! Readings of one moment of a scenario's objects, as the controllers report them: each
//! Service's ready endpoints (its EndpointSlices), each workload's healthy pods, each
//! PodDisruptionBudget's `currentHealthy` and `desiredHealthy` (the disruption controller's own
//! status).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::reality::request::Kind;

/// An object seen by a watch, with the kind it was listed as.
#[derive(Debug, Clone)]
pub struct Observed {
    pub kind: Kind,
    pub value: Value,
}

impl Observed {
    pub fn name(&self) -> &str {
        self.value["metadata"]["name"].as_str().unwrap_or_default()
    }

    pub fn namespace(&self) -> &str {
        self.value["metadata"]["namespace"].as_str().unwrap_or_default()
    }

    /// Carries a deletionTimestamp (held by a finalizer, or on its way out).
    pub fn terminating(&self) -> bool {
        !self.value["metadata"]["deletionTimestamp"].is_null()
    }

    /// `Kind namespace/name`.
    pub fn label(&self) -> String {
        crate::reality::figure::label(self.kind.kind, self.namespace(), self.name())
    }

    /// The controller's ownerReference: (uid, kind).
    pub fn controller(&self) -> Option<(String, String)> {
        self.value["metadata"]["ownerReferences"]
            .as_array()?
            .iter()
            .find(|r| r["controller"].as_bool() == Some(true))
            .map(|r| {
                (
                    r["uid"].as_str().unwrap_or_default().to_owned(),
                    r["kind"].as_str().unwrap_or_default().to_owned(),
                )
            })
    }
}

/// The objects of a scenario by uid.
pub type Store = BTreeMap<String, Observed>;

/// A pod that has not finished: not Succeeded or Failed.
pub fn pod_finished(pod: &Observed) -> bool {
    matches!(
        pod.value["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    )
}

/// A pod that runs and is not on its way out.
pub fn pod_running(pod: &Observed) -> bool {
    !pod.terminating() && !pod_finished(pod)
}

/// A pod that counts as healthy: Ready, not terminating, not finished.
pub fn pod_healthy(pod: &Observed) -> bool {
    pod_running(pod)
        && pod.value["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// Controllers seen over the scenario (uid → (controller uid, controller kind)), kept after an
/// object is released or gone, so a pod stays its workload's even once orphaned.
pub type Owners = BTreeMap<String, (String, String)>;

/// The workload running an object: its controller, or the Deployment above its ReplicaSet.
pub fn workload_of(owners: &Owners, uid: &str) -> Option<String> {
    let (owner, kind) = owners.get(uid)?;
    if kind == "ReplicaSet"
        && let Some((deployment, "Deployment")) = owners.get(owner).map(|(u, k)| (u, k.as_str()))
    {
        return Some(deployment.clone());
    }
    Some(owner.clone())
}

/// A workload as the estimate counts them: a Deployment, StatefulSet, DaemonSet, a ReplicaSet
/// no Deployment controls, or an operator's own controller of pods (a custom kind: a
/// CloudNativePG Cluster).
pub fn is_workload(object: &Observed, owners: &Owners, uid: &str) -> bool {
    match object.kind.kind {
        "Deployment" | "StatefulSet" | "DaemonSet" => true,
        "ReplicaSet" => owners.get(uid).is_none_or(|(_, kind)| kind != "Deployment"),
        kind => policies_cel::cluster::object::builtin_group(kind) != Some(object.kind.group),
    }
}

/// Ready endpoints of each Service in the store (by uid), over all its EndpointSlices: those
/// serving every port of the Service (the fewest ready endpoints of the slices that list a port,
/// over its ports; kube-proxy programs endpoints per port, and the EndpointSlice controller
/// leaves a port out of a pod's slice when the pod does not declare the container port it
/// targets by name). A Service without ports counts every ready endpoint.
pub fn service_endpoints(store: &Store) -> BTreeMap<String, usize> {
    // (namespace, service) → ready endpoints in all its slices, and by port name.
    type Ready<'a> = (usize, BTreeMap<&'a str, usize>);
    let mut by_name: BTreeMap<(&str, &str), Ready<'_>> = BTreeMap::new();
    for slice in store.values().filter(|o| o.kind.kind == "EndpointSlice") {
        let Some(service) = slice.value["metadata"]["labels"]["kubernetes.io/service-name"].as_str() else {
            continue;
        };
        let ready = slice.value["endpoints"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["conditions"]["ready"].as_bool() != Some(false))
            .count();
        let entry = by_name.entry((slice.namespace(), service)).or_default();
        entry.0 += ready;
        for port in slice.value["ports"].as_array().into_iter().flatten() {
            *entry.1.entry(port["name"].as_str().unwrap_or("")).or_default() += ready;
        }
    }
    store
        .iter()
        .filter(|(_, o)| o.kind.kind == "Service")
        .map(|(uid, s)| {
            let (all, by_port) = by_name
                .get(&(s.namespace(), s.name()))
                .cloned()
                .unwrap_or_default();
            let ports: Vec<&str> = s.value["spec"]["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| p["name"].as_str().unwrap_or(""))
                .collect();
            let ready = ports
                .iter()
                .map(|port| by_port.get(port).copied().unwrap_or(0))
                .min()
                .unwrap_or(all);
            (uid.clone(), ready)
        })
        .collect()
}

/// Healthy pods of each workload (by uid).
pub fn workload_ready(store: &Store, owners: &Owners) -> BTreeMap<String, usize> {
    let mut ready: BTreeMap<String, usize> = BTreeMap::new();
    for (uid, pod) in store.iter().filter(|(_, o)| o.kind.kind == "Pod") {
        if pod_healthy(pod)
            && let Some(workload) = workload_of(owners, uid)
        {
            *ready.entry(workload).or_default() += 1;
        }
    }
    ready
}

/// A PodDisruptionBudget's status as the disruption controller last wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub current: i64,
    pub desired: i64,
    /// The status describes the current spec (observedGeneration caught up).
    pub current_spec: bool,
}

/// Each PodDisruptionBudget's status (by uid).
pub fn budgets(store: &Store) -> BTreeMap<String, Budget> {
    store
        .iter()
        .filter(|(_, o)| o.kind.kind == "PodDisruptionBudget")
        .map(|(uid, pdb)| {
            let status = &pdb.value["status"];
            let budget = Budget {
                current: status["currentHealthy"].as_i64().unwrap_or(0),
                desired: status["desiredHealthy"].as_i64().unwrap_or(0),
                current_spec: status["observedGeneration"].as_i64().is_some()
                    && status["observedGeneration"] == pdb.value["metadata"]["generation"],
            };
            (uid.clone(), budget)
        })
        .collect()
}
