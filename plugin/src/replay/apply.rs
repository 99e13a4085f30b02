//! The log's own changes carried into replay's model as it goes, so a sequence is judged as it
//! happened: each admitted request's change is applied with the model's `insert` and `remove`
//! (the functions the gateway's watches call for their events) — creates add, updates replace,
//! deletes and evictions remove, a scale sets its workload's replicas. A pod removed also leaves
//! its Services' endpoints, as the EndpointSlice controller carries it out. Dry runs change
//! nothing.

use policies_cel::cluster::json::to_json;
use policies_cel::cluster::{ClusterModel, ObjectKey, Spec};
use policies_cel::{ClusterView, Request};
use serde_json::Value as Json;

/// Applies `request`'s change to `model` (the request was admitted).
pub fn apply(model: &mut ClusterModel, request: &Request) {
    let admission = &request.admission;
    if admission.dry_run {
        return;
    }
    let namespace = admission.namespace.as_deref().unwrap_or_default();
    // A deletecollection's objects come unnamed: the name is in oldObject.
    let name = request.target_name();
    let name = &*name;
    match (
        request.operation(),
        admission.sub_resource.as_deref().unwrap_or_default(),
    ) {
        ("DELETE", "") => {
            let kind = &admission.kind;
            if model
                .remove(&ObjectKey::new(&kind.group, &kind.kind, namespace, name))
                .is_none()
            {
                // A cluster-scoped object whose request carried a namespace.
                model.remove(&ObjectKey::new(&kind.group, &kind.kind, "", name));
            }
            if kind.group.is_empty() && kind.kind == "Pod" {
                leave_endpoints(model, namespace, name);
            }
        }
        ("CREATE", "eviction") => {
            model.remove(&ObjectKey::new("", "Pod", namespace, name));
            leave_endpoints(model, namespace, name);
        }
        // A status update carries the whole object (a pod turning ready).
        ("CREATE" | "UPDATE", "") | ("UPDATE", "status") => {
            if let Some(object) = request.object_json() {
                upsert(model, object);
            }
        }
        ("UPDATE", "scale") => scale(model, request, namespace, name),
        _ => {}
    }
}

/// The endpoints of pod `namespace/name` turn not ready in every EndpointSlice that lists them.
fn leave_endpoints(model: &mut ClusterModel, namespace: &str, name: &str) {
    let listed = |endpoints: &[policies_cel::cluster::Endpoint]| {
        endpoints
            .iter()
            .any(|e| e.ready && e.pod.as_deref() == Some(name))
    };
    let changed: Vec<_> = model
        .in_namespace(namespace)
        .into_iter()
        .filter(|o| *o.key.kind == *"EndpointSlice")
        .filter(|slice| matches!(&slice.spec, Spec::EndpointSlice { endpoints, .. } if listed(endpoints)))
        .cloned()
        .collect();
    for mut slice in changed {
        if let Spec::EndpointSlice { endpoints, .. } = &mut slice.spec {
            for endpoint in endpoints.iter_mut().filter(|e| e.pod.as_deref() == Some(name)) {
                endpoint.ready = false;
            }
        }
        model.insert(slice);
    }
}

/// Inserts `object`, replacing the model's copy (an object that cannot be projected is left out).
fn upsert(model: &mut ClusterModel, object: &Json) {
    let _ = model.insert_json(object);
}

/// A `scale` update: the workload's `spec.replicas` becomes the Scale's.
fn scale(model: &mut ClusterModel, request: &Request, namespace: &str, name: &str) {
    let admission = &request.admission;
    let Some(replicas) = request
        .object_json()
        .and_then(|scale| scale.pointer("/spec/replicas"))
        .cloned()
    else {
        return;
    };
    let group = &admission.resource.group;
    let kind = match admission.resource.resource.as_str() {
        "statefulsets" => "StatefulSet",
        "deployments" => "Deployment",
        "replicasets" => "ReplicaSet",
        "replicationcontrollers" => "ReplicationController",
        _ => return,
    };
    let key = ObjectKey::new(group, kind, namespace, name);
    let Some(mut stored) = model.get(&key).map(to_json) else {
        return;
    };
    // The slim object carries no template: `insert_json` keeps the recorded fingerprint.
    if let Some(spec) = stored.get_mut("spec").and_then(Json::as_object_mut) {
        spec.insert("replicas".into(), replicas);
        upsert(model, &stored);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use policies_cel::cluster::Spec;
    use policies_cel::cluster::project;
    use serde_json::json;

    use super::*;

    fn model() -> ClusterModel {
        let mut model = ClusterModel::new();
        for object in [
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "pg", "namespace": "db", "uid": "s"},
                   "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "pg"}}}}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pg-0", "namespace": "db", "uid": "p0", "labels": {"app": "pg"}},
                   "spec": {"nodeName": "n"}}),
        ] {
            let object = project(&object, &mut model).unwrap();
            model.insert(object);
        }
        model
    }

    fn request(
        operation: &str,
        resource: (&str, &str),
        sub: Option<&str>,
        name: &str,
        object: Json,
        dry_run: bool,
    ) -> Request {
        let (group, plural) = resource;
        let kind = object["kind"].as_str().unwrap_or("Pod").to_owned();
        Request::from_review(
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u", "kind": {"group": group, "version": "v1", "kind": kind},
            "resource": {"group": group, "version": "v1", "resource": plural}, "subResource": sub,
            "name": name, "namespace": "db", "operation": operation, "userInfo": {"username": "op"},
            "dryRun": dry_run, "object": if operation == "DELETE" { Json::Null } else { object }}}),
        )
        .unwrap()
    }

    fn pod_key(name: &str) -> ObjectKey {
        ObjectKey::new("", "Pod", "db", name)
    }

    #[test]
    fn deletes_and_evictions_remove_creates_add() {
        let mut model = model();
        apply(
            &mut model,
            &request("DELETE", ("", "pods"), None, "pg-0", json!({}), true),
        );
        assert!(model.get(&pod_key("pg-0")).is_some(), "a dry run changes nothing");
        apply(
            &mut model,
            &request("DELETE", ("", "pods"), None, "pg-0", json!({}), false),
        );
        assert!(model.get(&pod_key("pg-0")).is_none());
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pg-1", "namespace": "db", "uid": "p1"}});
        apply(
            &mut model,
            &request("CREATE", ("", "pods"), None, "pg-1", pod, false),
        );
        assert!(model.get(&pod_key("pg-1")).is_some());
        let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "pg-1", "namespace": "db"}});
        apply(
            &mut model,
            &request("CREATE", ("", "pods"), Some("eviction"), "pg-1", eviction, false),
        );
        assert!(model.get(&pod_key("pg-1")).is_none());
    }

    #[test]
    fn a_removed_pod_leaves_its_services_endpoints() {
        let mut model = model();
        let slice = json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "pg-abc", "namespace": "db", "labels": {"kubernetes.io/service-name": "pg"}},
            "endpoints": [
                {"conditions": {"ready": true}, "targetRef": {"kind": "Pod", "name": "pg-0", "namespace": "db"}},
                {"conditions": {"ready": true}, "targetRef": {"kind": "Pod", "name": "pg-1", "namespace": "db"}}]});
        let slice = project(&slice, &mut model).unwrap();
        model.insert(slice);
        let ready = |model: &ClusterModel| match &model
            .get(&ObjectKey::new(
                "discovery.k8s.io",
                "EndpointSlice",
                "db",
                "pg-abc",
            ))
            .unwrap()
            .spec
        {
            Spec::EndpointSlice { endpoints, .. } => endpoints
                .iter()
                .filter(|e| e.ready)
                .map(|e| e.pod.as_deref().unwrap().to_owned())
                .collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        apply(
            &mut model,
            &request("DELETE", ("", "pods"), None, "pg-0", json!({}), false),
        );
        assert_eq!(ready(&model), ["pg-1"]);
        let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "pg-1", "namespace": "db"}});
        apply(
            &mut model,
            &request("CREATE", ("", "pods"), Some("eviction"), "pg-1", eviction, false),
        );
        assert!(ready(&model).is_empty());
    }

    #[test]
    fn a_scale_sets_the_workload_replicas() {
        let mut model = model();
        let scale = json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "pg", "namespace": "db"}, "spec": {"replicas": 1}});
        apply(
            &mut model,
            &request(
                "UPDATE",
                ("apps", "statefulsets"),
                Some("scale"),
                "pg",
                scale,
                false,
            ),
        );
        let sts = model
            .get(&ObjectKey::new("apps", "StatefulSet", "db", "pg"))
            .unwrap();
        let Spec::StatefulSet { replicas, .. } = &sts.spec else {
            panic!("not a StatefulSet: {:?}", sts.spec)
        };
        assert_eq!(*replicas, 1);
    }
}
