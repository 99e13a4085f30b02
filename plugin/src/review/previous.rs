//! The object before an update when only the new one is known — an audit event or a manifest
//! carries just the new object, and the snapshot keeps only the fields the estimate reads: the
//! new object with the snapshot's view of those fields put back.

use policies_cel::ClusterView;
use policies_cel::cluster::{ObjectKey, template};
use serde_json::{Value as Json, json};

use crate::review::GroupVersionKind;

/// The object before an update, when only the new one is known (an audit event, a manifest):
/// the new object with
/// what the snapshot knows put back — its ownerReferences and labels, replicas, a Service's selector
/// and ports (and a load balancer's type and addresses), a
/// Node's taints, a ConfigMap's or Secret's keys — and, for the scale subresource, a Scale of the stored
/// replicas. A pod template change is recognised by comparing the new template with the
/// fingerprint of the stored one (`stored_template`, when the cluster recorded it: kube-apiserver's
/// defaults set aside, see `policies_cel::cluster::template`); without it, from a patch that
/// touches `spec.template`, or from an updated workload whose `metadata.generation` runs ahead of
/// `status.observedGeneration` with unchanged replicas. The old template then differs by a marker
/// annotation, so the estimate sees a rollout.
pub fn before_update(
    kind: &GroupVersionKind,
    sub_resource: Option<&str>,
    object: &Json,
    stored: Option<&Json>,
    patch: Option<&Json>,
    stored_template: Option<u64>,
) -> Json {
    if sub_resource == Some("scale") {
        let replicas = stored.map_or(&object["spec"]["replicas"], |s| &s["spec"]["replicas"]);
        return json!({
            "apiVersion": "autoscaling/v1",
            "kind": kind.kind,
            "metadata": object["metadata"].clone(),
            "spec": {"replicas": replicas},
        });
    }
    let mut old = object.clone();
    if let Some(stored) = stored {
        restore(&mut old, stored, &kind.kind);
        if policies_cel::cluster::object::builtin_group(&kind.kind) != Some(&*kind.group) {
            restore_kept(&mut old, stored);
        }
    }
    let has_template = object["spec"].get("template").is_some();
    let patched_template = patch.is_some_and(|p| p["spec"].get("template").is_some());
    let generation = object["metadata"]["generation"].as_i64();
    let observed = object["status"]["observedGeneration"].as_i64();
    let spec_changed = matches!((generation, observed), (Some(g), Some(o)) if g > o);
    let same_replicas = old["spec"]["replicas"] == object["spec"]["replicas"];
    let compared = stored_template
        .zip(template::of_workload(object))
        .map(|(before, after)| before != after);
    let rollout = compared.unwrap_or_else(|| {
        has_template && (patched_template || (patch.is_none() && spec_changed && same_replicas))
    });
    if rollout {
        let at = [
            "spec",
            "template",
            "metadata",
            "annotations",
            "suture.dev/replay-previous-template",
        ];
        set(&mut old, &at, json!("true"));
    }
    old
}

/// The fingerprint of the pod template `cluster` recorded for the `kind` object `namespace/name`
/// (what [`before_update`] compares a new template with).
pub fn recorded_template(
    cluster: &dyn ClusterView,
    kind: &GroupVersionKind,
    namespace: Option<&str>,
    name: &str,
) -> Option<u64> {
    let key = ObjectKey::new(&kind.group, &kind.kind, namespace.unwrap_or_default(), name);
    cluster.pod_template(&key)
}

/// Puts the snapshot's view of the fields the estimate compares back into `old`.
fn restore(old: &mut Json, stored: &Json, kind: &str) {
    // The owners it has now: new ones that name no existing owner get it collected.
    set(
        old,
        &["metadata", "ownerReferences"],
        stored["metadata"]["ownerReferences"].clone(),
    );
    // The labels it has now: a pod leaving a Service's selector, a Node leaving a DaemonSet's
    // placement, a Namespace's Pod Security level.
    if let Some(labels) = stored["metadata"].get("labels").filter(|l| l.is_object()) {
        set(old, &["metadata", "labels"], labels.clone());
    }
    match kind {
        "ConfigMap" | "Secret" => {
            let keys = stored["keys"].as_array().cloned().unwrap_or_default();
            let data: serde_json::Map<String, Json> = keys
                .iter()
                .filter_map(Json::as_str)
                .map(|k| (k.to_owned(), json!("")))
                .collect();
            set(old, &["data"], Json::Object(data));
            if let Some(map) = old.as_object_mut() {
                map.remove("stringData");
                map.remove("binaryData");
            }
        }
        "Service" => {
            set(old, &["spec", "selector"], stored["spec"]["selector"].clone());
            // Its ports as they are: a port pointed at another container port name.
            if let Some(ports) = stored["spec"].get("ports").filter(|p| p.is_array()) {
                set(old, &["spec", "ports"], ports.clone());
            }
            // A load balancer's type and addresses (the snapshot keeps them only for one that
            // has addresses): a new type tears it down.
            if let Some(balancer) = stored["status"].get("loadBalancer") {
                set(old, &["spec", "type"], stored["spec"]["type"].clone());
                set(old, &["status", "loadBalancer"], balancer.clone());
            }
        }
        "Node" => {
            set(
                old,
                &["spec", "unschedulable"],
                stored["spec"]["unschedulable"].clone(),
            );
            set(old, &["spec", "taints"], stored["spec"]["taints"].clone());
        }
        _ => {
            if let Some(replicas) = stored["spec"].get("replicas").filter(|r| !r.is_null()) {
                set(old, &["spec", "replicas"], replicas.clone());
            }
        }
    }
}

/// An operator's custom resource: what the model keeps of it (its finalizers, and the fields
/// its OperatorProfiles name) is all that is known of it before the change, so the old object
/// has those and nothing else beside its metadata: a profile's UPDATE rule compares them with
/// the new object (Argo CD's pruning switched on, a sync asked with pruning).
fn restore_kept(old: &mut Json, stored: &Json) {
    let Some(map) = old.as_object_mut() else { return };
    map.retain(|key, _| matches!(key.as_str(), "apiVersion" | "kind" | "metadata"));
    if let Some(kept) = stored.as_object() {
        for (key, value) in kept {
            if !matches!(key.as_str(), "apiVersion" | "kind" | "metadata") && !value.is_null() {
                map.insert(key.clone(), value.clone());
            }
        }
    }
    match stored["metadata"].get("finalizers").filter(|f| f.is_array()) {
        Some(finalizers) => set(old, &["metadata", "finalizers"], finalizers.clone()),
        None => {
            if let Some(metadata) = old.get_mut("metadata").and_then(Json::as_object_mut) {
                metadata.remove("finalizers");
            }
        }
    }
}

/// Sets `value` at `path`, creating objects on the way; leaves `target` alone where the path
/// runs into something that is not an object (a malformed logged body).
fn set(target: &mut Json, path: &[&str], value: Json) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = target;
    for key in parents {
        let Some(map) = node.as_object_mut() else { return };
        node = map.entry(*key).or_insert_with(|| json!({}));
        if node.is_null() {
            *node = json!({});
        }
    }
    if let Some(map) = node.as_object_mut() {
        map.insert((*last).to_owned(), value);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn a_template_patch_marks_the_old_template_so_the_rollout_is_seen() {
        let object = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                            "spec": {"replicas": 2, "template": {"spec": {"containers": []}}}});
        let kind = GroupVersionKind {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
        };
        let patch = json!({"spec": {"template": {"spec": {}}}});
        let old = before_update(&kind, None, &object, None, Some(&patch), None);
        assert_ne!(old["spec"]["template"], object["spec"]["template"]);
        let old = before_update(
            &kind,
            None,
            &object,
            None,
            Some(&json!({"spec": {"replicas": 3}})),
            None,
        );
        assert_eq!(old, object);
    }

    #[test]
    fn a_recorded_template_decides_whether_the_template_changes() {
        let object = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "i:1"}]}}}});
        let kind = GroupVersionKind {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
        };
        let same = template::of_workload(&object);
        let mut other = object.clone();
        other["spec"]["template"]["spec"]["containers"][0]["image"] = json!("i:2");
        let different = template::of_workload(&other);
        // A manifest (the whole object as the patch) with the template the cluster has: no rollout.
        let old = before_update(&kind, None, &object, None, Some(&object), same);
        assert_eq!(old["spec"]["template"], object["spec"]["template"]);
        // With another one, or without a recorded template: a rollout.
        for recorded in [different, None] {
            let old = before_update(&kind, None, &object, None, Some(&object), recorded);
            assert_ne!(
                old["spec"]["template"], object["spec"]["template"],
                "{recorded:?}"
            );
        }
    }

    #[test]
    fn the_stored_owners_are_put_back_so_new_ones_are_seen() {
        let kind = GroupVersionKind {
            group: String::new(),
            version: "v1".into(),
            kind: "PersistentVolumeClaim".into(),
        };
        let owner = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "u-1"});
        let object = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data-db-0", "ownerReferences": [owner]}});
        let stored = json!({"metadata": {"name": "data-db-0", "ownerReferences": []}});
        let old = before_update(&kind, None, &object, Some(&stored), None, None);
        assert_eq!(old["metadata"]["ownerReferences"], json!([]));
        assert_eq!(old["metadata"]["name"], "data-db-0");
    }

    #[test]
    fn the_stored_labels_are_put_back_so_a_relabel_is_seen() {
        let kind = GroupVersionKind {
            group: String::new(),
            version: "v1".into(),
            kind: "Namespace".into(),
        };
        let enforced =
            json!({"kubernetes.io/metadata.name": "db", "pod-security.kubernetes.io/enforce": "restricted"});
        let object =
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "db", "labels": enforced}});
        let stored = json!({"metadata": {"name": "db", "labels": {"kubernetes.io/metadata.name": "db"}}});
        let old = before_update(&kind, None, &object, Some(&stored), None, None);
        assert_eq!(old["metadata"]["labels"], stored["metadata"]["labels"]);
        // A stored object without labels (not in the snapshot's reading) leaves the new ones.
        let old = before_update(
            &kind,
            None,
            &object,
            Some(&json!({"metadata": {"name": "db"}})),
            None,
            None,
        );
        assert_eq!(old["metadata"]["labels"], enforced);
    }

    #[test]
    fn a_stored_load_balancer_is_put_back_so_a_new_type_is_seen() {
        let kind = GroupVersionKind {
            group: String::new(),
            version: "v1".into(),
            kind: "Service".into(),
        };
        let object = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "edge"},
            "spec": {"type": "ClusterIP", "selector": {"app": "edge"}}});
        let balancer = json!({"ingress": [{"ip": "203.0.113.10"}]});
        let stored = json!({"metadata": {"name": "edge"},
            "spec": {"type": "LoadBalancer", "selector": {"app": "edge"}}, "status": {"loadBalancer": balancer}});
        let old = before_update(&kind, None, &object, Some(&stored), None, None);
        assert_eq!(old["spec"]["type"], "LoadBalancer");
        assert_eq!(old["status"]["loadBalancer"], balancer);
        // A stored Service without a load balancer leaves the new type alone.
        let stored = json!({"metadata": {"name": "edge"}, "spec": {"selector": {"app": "edge"}}});
        let old = before_update(&kind, None, &object, Some(&stored), None, None);
        assert_eq!(old["spec"]["type"], "ClusterIP");
    }

    #[test]
    fn setting_through_a_malformed_body_changes_nothing_and_never_panics() {
        let mut value = json!({"spec": "not an object"});
        set(&mut value, &["spec", "template", "x"], json!(1));
        assert_eq!(value, json!({"spec": "not an object"}));
        let mut value = json!({"spec": null});
        set(&mut value, &["spec", "replicas"], json!(1));
        assert_eq!(value, json!({"spec": {"replicas": 1}}));
    }
}
