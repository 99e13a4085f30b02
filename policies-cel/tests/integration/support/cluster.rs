//! Builders for small hand-built cluster models and the AdmissionReviews that act on them.

#![allow(dead_code)] // each test crate uses its own subset

use policies_cel::Request;
use policies_cel::cluster::object::{
    DeploymentStrategy, IntOrPercent, Labels, OwnerRef, Phase, PodSpec, Retention, Selector,
    StatefulSetStrategy, Text,
};
use policies_cel::cluster::{ClusterModel, Object, ObjectKey, Spec};
use serde_json::{Value as Json, json};

pub fn labels(pairs: &[(&str, &str)]) -> Labels {
    let mut labels: Vec<(Text, Text)> = pairs
        .iter()
        .map(|(k, v)| (Text::from(*k), Text::from(*v)))
        .collect();
    labels.sort();
    labels.into()
}

pub fn selector(pairs: &[(&str, &str)]) -> Selector {
    Selector {
        match_labels: labels(pairs),
        expressions: Box::default(),
    }
}

fn group_of(kind: &str) -> &'static str {
    match kind {
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" => "apps",
        "PodDisruptionBudget" => "policy",
        "EndpointSlice" => "discovery.k8s.io",
        "CustomResourceDefinition" => "apiextensions.k8s.io",
        "RabbitmqCluster" => "rabbitmq.com",
        _ => "",
    }
}

/// An object of `kind` with a uid derived from its name.
pub fn object(kind: &str, namespace: &str, name: &str, spec: Spec) -> Object {
    Object {
        key: ObjectKey::new(group_of(kind), kind, namespace, name),
        api_version: match group_of(kind) {
            "" => "v1".into(),
            group => format!("{group}/v1").into(),
        },
        uid: Some(uid(kind, name)),
        labels: Labels::default(),
        annotations: Labels::default(),
        owners: Default::default(),
        deletion_timestamp: None,
        spec,
    }
}

pub fn uid(kind: &str, name: &str) -> Text {
    Text::from(format!("uid-{}-{name}", kind.to_ascii_lowercase()))
}

/// `child` with a controller ownerReference to `owner`.
pub fn owned_by(mut child: Object, owner: &Object) -> Object {
    let mut owners = child.owners.to_vec();
    owners.push(OwnerRef {
        uid: owner.uid.clone().unwrap_or_default(),
        api_version: owner.api_version.clone(),
        kind: owner.key.kind.clone(),
        name: owner.key.name.clone(),
        controller: true,
        block_owner_deletion: true,
    });
    child.owners = owners.into();
    child
}

pub fn with_labels(mut o: Object, pairs: &[(&str, &str)]) -> Object {
    o.labels = labels(pairs);
    o
}

pub fn pod(namespace: &str, name: &str, node: &str, ready: bool) -> Object {
    object(
        "Pod",
        namespace,
        name,
        Spec::Pod(PodSpec {
            node: Some(node.into()),
            phase: Phase::Running,
            ready,
            ..PodSpec::default()
        }),
    )
}

pub fn pod_with_claims(namespace: &str, name: &str, node: &str, claims: &[&str]) -> Object {
    let mut p = pod(namespace, name, node, true);
    if let Spec::Pod(spec) = &mut p.spec {
        spec.claims = claims.iter().map(|c| Text::from(*c)).collect();
    }
    p
}

pub fn statefulset(
    namespace: &str,
    name: &str,
    replicas: i64,
    app: &str,
    templates: &[&str],
    retention: Retention,
) -> Object {
    with_labels(
        object(
            "StatefulSet",
            namespace,
            name,
            Spec::StatefulSet {
                replicas,
                selector: selector(&[("app", app)]),
                strategy: StatefulSetStrategy::RollingUpdate {
                    partition: 0,
                    max_unavailable: IntOrPercent::Int(1),
                },
                parallel: false,
                claim_templates: templates.iter().map(|t| Text::from(*t)).collect(),
                retention,
            },
        ),
        &[("app", app)],
    )
}

pub fn deployment(namespace: &str, name: &str, replicas: i64, app: &str) -> Object {
    object(
        "Deployment",
        namespace,
        name,
        Spec::Deployment {
            replicas,
            selector: selector(&[("app", app)]),
            strategy: DeploymentStrategy::RollingUpdate {
                max_unavailable: IntOrPercent::Percent(25),
                max_surge: IntOrPercent::Percent(25),
            },
            paused: false,
        },
    )
}

pub fn replicaset(namespace: &str, name: &str, replicas: i64, app: &str) -> Object {
    object(
        "ReplicaSet",
        namespace,
        name,
        Spec::ReplicaSet {
            replicas,
            selector: selector(&[("app", app)]),
        },
    )
}

pub fn service(namespace: &str, name: &str, app: &str) -> Object {
    object(
        "Service",
        namespace,
        name,
        Spec::Service {
            selector: Some(labels(&[("app", app)])),
            external: Box::default(),
            ports: Box::default(),
        },
    )
}

pub fn pdb_min_available(namespace: &str, name: &str, app: &str, min: IntOrPercent) -> Object {
    object(
        "PodDisruptionBudget",
        namespace,
        name,
        Spec::PodDisruptionBudget {
            selector: selector(&[("app", app)]),
            min_available: Some(min),
            max_unavailable: None,
            always_allow_unhealthy: false,
        },
    )
}

pub fn pvc(namespace: &str, name: &str, volume: &str) -> Object {
    object(
        "PersistentVolumeClaim",
        namespace,
        name,
        Spec::PersistentVolumeClaim {
            volume: Some(volume.into()),
        },
    )
}

pub fn pv(name: &str, claim_namespace: &str, claim: &str, reclaim_delete: bool) -> Object {
    object(
        "PersistentVolume",
        "",
        name,
        Spec::PersistentVolume {
            reclaim_delete,
            claim: Some((claim_namespace.into(), claim.into())),
            node: None,
        },
    )
}

pub fn model(objects: Vec<Object>) -> ClusterModel {
    let mut model = ClusterModel::new();
    for o in objects {
        model.insert(o);
    }
    model
}

/// An AdmissionReview v1 for `operation` on `group/version/resource` `namespace/name`.
pub fn review(
    operation: &str,
    resource: (&str, &str, &str),
    kind: &str,
    namespace: &str,
    name: &str,
    extra: Json,
) -> Request {
    let (group, version, plural) = resource;
    let mut request = json!({
        "uid": "6a1c5d2e-1f0b-4c8e-9f3a-2b7d4e6c8a10",
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": plural},
        "name": name,
        "namespace": namespace,
        "operation": operation,
        "userInfo": {"username": "system:serviceaccount:ops:operator", "groups": ["system:serviceaccounts"]},
        "dryRun": false,
    });
    if let (Some(target), Some(extra)) = (request.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            target.insert(k.clone(), v.clone());
        }
    }
    Request::from_review(
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// A DELETE review with DeleteOptions carrying `propagation` (if any).
pub fn delete(
    resource: (&str, &str, &str),
    kind: &str,
    namespace: &str,
    name: &str,
    propagation: Option<&str>,
) -> Request {
    let mut options = json!({"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions"});
    if let Some(p) = propagation {
        options["propagationPolicy"] = json!(p);
    }
    review(
        "DELETE",
        resource,
        kind,
        namespace,
        name,
        json!({"options": options, "object": null}),
    )
}
