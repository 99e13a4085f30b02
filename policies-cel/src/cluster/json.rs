//! A slim object as JSON, the shape `cluster.get()`/`cluster.list()` return to CEL: Kubernetes'
//! own field names, limited to what the model keeps.

use serde_json::{Map, Value as Json, json};

use crate::cluster::object::{
    ClassKind, IntOrPercent, Labels, Object, PortTarget, Selector, ServicePort, Spec,
};

fn labels(labels: &Labels) -> Json {
    Json::Object(labels.iter().map(|(k, v)| (k.to_string(), json!(&**v))).collect())
}

fn selector(selector: &Selector) -> Json {
    json!({"matchLabels": labels(&selector.match_labels)})
}

fn int_or_percent(value: &IntOrPercent) -> Json {
    match value {
        IntOrPercent::Int(n) => json!(n),
        IntOrPercent::Percent(p) => json!(format!("{p}%")),
    }
}

fn service_port(port: &ServicePort) -> Json {
    let target = match &port.target {
        PortTarget::Number(n) => json!(n),
        PortTarget::Name(name) => json!(&**name),
    };
    json!({"name": &*port.name, "port": port.port, "protocol": &*port.protocol, "targetPort": target})
}

/// A load balancer ingress entry: an IP, or a hostname.
fn ingress(address: &str) -> Json {
    if address.parse::<std::net::IpAddr>().is_ok() {
        json!({"ip": address})
    } else {
        json!({"hostname": address})
    }
}

/// `object` as a Kubernetes-shaped JSON document.
pub fn to_json(object: &Object) -> Json {
    let key = &object.key;
    let owners: Vec<Json> = object
        .owners
        .iter()
        .map(|o| json!({"apiVersion": &*o.api_version, "kind": &*o.kind, "name": &*o.name, "uid": &*o.uid, "controller": o.controller}))
        .collect();
    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(&*key.name));
    if !key.namespace.is_empty() {
        metadata.insert("namespace".into(), json!(&*key.namespace));
    }
    if let Some(uid) = &object.uid {
        metadata.insert("uid".into(), json!(&**uid));
    }
    metadata.insert("labels".into(), labels(&object.labels));
    metadata.insert("annotations".into(), labels(&object.annotations));
    metadata.insert("ownerReferences".into(), Json::Array(owners));
    if let Some(timestamp) = object.deletion_timestamp_text() {
        metadata.insert("deletionTimestamp".into(), json!(timestamp));
    }
    let mut document = json!({"apiVersion": &*object.api_version, "kind": &*key.kind, "metadata": metadata});
    let (spec, status) = match &object.spec {
        Spec::Pod(pod) => (
            {
                let mut spec = json!({"nodeName": pod.node.as_deref(), "serviceAccountName": pod.runs_as()});
                for (field, kind) in [
                    ("priorityClassName", ClassKind::Priority),
                    ("runtimeClassName", ClassKind::Runtime),
                ] {
                    if let Some(class) = pod.class(kind) {
                        spec[field] = json!(class);
                    }
                }
                spec
            },
            json!({"phase": pod.phase.as_str(), "conditions": [{"type": "Ready", "status": if pod.ready { "True" } else { "False" }}]}),
        ),
        Spec::Deployment {
            replicas,
            selector: s,
            paused,
            ..
        } => (
            json!({"replicas": replicas, "selector": selector(s), "paused": paused}),
            Json::Null,
        ),
        Spec::ReplicaSet {
            replicas,
            selector: s,
        }
        | Spec::StatefulSet {
            replicas,
            selector: s,
            ..
        } => (json!({"replicas": replicas, "selector": selector(s)}), Json::Null),
        Spec::DaemonSet { selector: s, .. } => (json!({"selector": selector(s)}), Json::Null),
        Spec::Service {
            selector: s,
            external,
            ports,
        } => {
            let mut spec = json!({"selector": s.as_ref().map(labels)});
            if !ports.is_empty() {
                spec["ports"] = ports.iter().map(service_port).collect();
            }
            if external.is_empty() {
                (spec, Json::Null)
            } else {
                spec["type"] = json!("LoadBalancer");
                (
                    spec,
                    json!({"loadBalancer": {"ingress": external.iter().map(|a| ingress(a)).collect::<Vec<_>>()}}),
                )
            }
        }
        Spec::PodDisruptionBudget {
            selector: s,
            min_available,
            max_unavailable,
            always_allow_unhealthy,
        } => (
            json!({
                "selector": selector(s),
                "minAvailable": min_available.as_ref().map(int_or_percent),
                "maxUnavailable": max_unavailable.as_ref().map(int_or_percent),
                "unhealthyPodEvictionPolicy": if *always_allow_unhealthy { "AlwaysAllow" } else { "IfHealthyBudget" },
            }),
            Json::Null,
        ),
        Spec::PersistentVolumeClaim { volume } => (json!({"volumeName": volume.as_deref()}), Json::Null),
        Spec::PersistentVolume {
            reclaim_delete,
            claim,
            ..
        } => (
            json!({
                "persistentVolumeReclaimPolicy": if *reclaim_delete { "Delete" } else { "Retain" },
                "claimRef": claim.as_ref().map(|(ns, name)| json!({"namespace": &**ns, "name": &**name})),
            }),
            Json::Null,
        ),
        Spec::Node {
            unschedulable,
            taints,
        } => (
            json!({
                "unschedulable": unschedulable,
                "taints": taints.iter().map(|t| json!({"key": &*t.key, "value": t.value.as_deref(), "effect": &*t.effect})).collect::<Vec<_>>(),
            }),
            Json::Null,
        ),
        Spec::Kept(kept) => {
            if let Some(finalizers) = kept.get("metadata").and_then(|m| m.get("finalizers")) {
                document["metadata"]["finalizers"] = finalizers.clone();
            }
            // Kept top-level fields beside spec and status (an Argo CD Application's `operation`).
            for (name, value) in kept.as_object().into_iter().flatten() {
                if !matches!(
                    name.as_str(),
                    "apiVersion" | "kind" | "metadata" | "spec" | "status"
                ) {
                    document[name.as_str()] = value.clone();
                }
            }
            let field = |name: &str| kept.get(name).cloned().unwrap_or(Json::Null);
            (field("spec"), field("status"))
        }
        Spec::ConfigMap { keys } | Spec::Secret { keys } => {
            document["keys"] = json!(keys.iter().map(|k| &**k).collect::<Vec<_>>());
            (Json::Null, Json::Null)
        }
        _ => (Json::Null, Json::Null),
    };
    if !spec.is_null() {
        document["spec"] = spec;
    }
    if !status.is_null() {
        document["status"] = status;
    }
    document
}
