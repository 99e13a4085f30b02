//! When a scenario's scene is settled, so the estimate and the controllers start from the same
//! picture: every workload's controller has caught up with its spec, every pod runs (Ready as
//! its scene asked), every claim is Bound, every EndpointSlice and PodDisruptionBudget status
//! counts the ready pods it selects.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::reality::moment::{self, Observed, Store, pod_healthy};
use crate::simulator::READY_ANNOTATION;

fn selects(selector: &Value, pod: &Observed) -> bool {
    let Some(wanted) = selector.as_object() else {
        return false;
    };
    if wanted.is_empty() {
        return false;
    }
    wanted
        .iter()
        .all(|(key, value)| pod.value["metadata"]["labels"][key.as_str()] == *value)
}

fn healthy_selected(store: &Store, namespace: &str, selector: &Value) -> usize {
    store
        .values()
        .filter(|o| {
            o.kind.kind == "Pod" && o.namespace() == namespace && pod_healthy(o) && selects(selector, o)
        })
        .count()
}

fn generation_seen(object: &Observed) -> bool {
    object.value["status"]["observedGeneration"].as_i64() >= object.value["metadata"]["generation"].as_i64()
}

fn workload_settled(object: &Observed) -> Option<String> {
    let spec = &object.value["spec"];
    let status = &object.value["status"];
    if !generation_seen(object) {
        return Some(format!("{} not observed yet", object.label()));
    }
    let (want, have) = match object.kind.kind {
        "DaemonSet" => (
            status["desiredNumberScheduled"].as_i64(),
            status["currentNumberScheduled"].as_i64(),
        ),
        "Deployment" => (
            Some(spec["replicas"].as_i64().unwrap_or(1)),
            status["updatedReplicas"]
                .as_i64()
                .filter(|u| Some(*u) == status["replicas"].as_i64()),
        ),
        _ => (
            Some(spec["replicas"].as_i64().unwrap_or(1)),
            status["replicas"].as_i64(),
        ),
    };
    (want.unwrap_or(0) != have.unwrap_or(0)).then(|| format!("{}: {have:?} of {want:?}", object.label()))
}

fn pod_settled(pod: &Observed) -> Option<String> {
    if pod.terminating() {
        return Some(format!("{} terminating", pod.label()));
    }
    if pod.value["status"]["phase"].as_str() != Some("Running") {
        return Some(format!("{} not running", pod.label()));
    }
    let want_ready = pod.value["metadata"]["annotations"][READY_ANNOTATION].as_str() != Some("false");
    (pod_healthy(pod) != want_ready).then(|| format!("{} readiness not reported", pod.label()))
}

/// Why the scene is not settled yet, or `None` once it is.
pub fn unsettled(store: &Store) -> Option<String> {
    let services = moment::service_endpoints(store);
    let budgets: BTreeMap<String, moment::Budget> = moment::budgets(store);
    for (uid, object) in store {
        let why = match object.kind.kind {
            "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" => workload_settled(object),
            "Pod" if !moment::pod_finished(object) => pod_settled(object),
            "PersistentVolumeClaim" if !object.terminating() => (object.value["status"]["phase"].as_str()
                != Some("Bound"))
            .then(|| format!("{} not bound", object.label())),
            "Service" if object.value["spec"]["selector"].is_object() => {
                let want = healthy_selected(store, object.namespace(), &object.value["spec"]["selector"]);
                let have = services.get(uid).copied().unwrap_or(0);
                (want != have).then(|| format!("{}: {have} ready endpoints of {want}", object.label()))
            }
            "PodDisruptionBudget" => {
                let selector = &object.value["spec"]["selector"]["matchLabels"];
                let want = healthy_selected(store, object.namespace(), selector) as i64;
                match budgets.get(uid) {
                    Some(b) if b.current_spec && b.current == want => None,
                    _ => Some(format!("{} status not current", object.label())),
                }
            }
            _ => None,
        };
        if why.is_some() {
            return why;
        }
    }
    None
}
