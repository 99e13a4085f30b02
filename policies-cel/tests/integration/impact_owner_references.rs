//! An UPDATE that sets ownerReferences naming no existing owner: the garbage collector deletes
//! the object (and its dependents, in the background), judged on the `database` scene
//! (`testdata/clusters/database`: StatefulSet pg-main with three members, their claims on
//! volumes that reclaim with Delete, a budget). The collector's own semantics were checked
//! against kube-controller-manager (e2e `reality`, scenario `update/dangling-owner`).

use std::path::Path;

use policies_cel::cluster::{ClusterModel, load_snapshots, project};
use policies_cel::impact::{Impact, estimate};
use policies_cel::{Request, evaluate, pack};
use serde_json::{Value as Json, json};

/// The uid of StatefulSet databases/pg-main in the scene.
const PG_MAIN_UID: &str = "9d2e4b7a-61c3-4f0e-8a5d-2c7b9e1f4a36";

fn scene() -> ClusterModel {
    let snapshot = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/clusters/database/snapshot.yaml");
    load_snapshots(&[snapshot.as_path()], &mut |_| {}).unwrap()
}

/// The scene's stored object of `kind` `name`, as kube-apiserver sends it as `oldObject`.
fn stored(kind: &str, name: &str) -> Json {
    let snapshot = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/clusters/database/snapshot.yaml");
    let list: Json = serde_yaml_ng::from_str(&std::fs::read_to_string(snapshot).unwrap()).unwrap();
    let mut object = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap()
        .clone();
    if object.get("apiVersion").is_none() {
        object["apiVersion"] = json!(if kind == "StatefulSet" { "apps/v1" } else { "v1" });
    }
    object
}

fn owner(kind: &str, name: &str, uid: &str) -> Json {
    let api_version = if kind == "StatefulSet" { "apps/v1" } else { "v1" };
    json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true})
}

/// An operator's UPDATE of the stored `kind` `name` that sets `owners` as its ownerReferences.
fn update_owners(kind: &str, plural: &str, name: &str, owners: Json) -> Request {
    let old = stored(kind, name);
    let mut new = old.clone();
    new["metadata"]["ownerReferences"] = owners;
    let group = if kind == "StatefulSet" { "apps" } else { "" };
    let namespace = old["metadata"]["namespace"].clone();
    Request::from_review(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "2f6b1c3d-8e4a-4b5c-9d6e-7f8a9b0c1d2e",
        "kind": {"group": group, "version": "v1", "kind": kind},
        "resource": {"group": group, "version": "v1", "resource": plural},
        "name": name, "namespace": namespace, "operation": "UPDATE",
        "userInfo": {"username": "system:serviceaccount:databases:pg-operator", "groups": ["system:serviceaccounts"]},
        "object": new, "oldObject": old, "dryRun": false}}))
    .unwrap()
}

fn deleted(impact: &Impact) -> Vec<String> {
    impact.deleted.iter().map(|d| d.object.display()).collect()
}

fn noted(impact: &Impact, needle: &str) -> bool {
    impact.notes.iter().any(|n| n.contains(needle))
}

#[test]
fn a_claim_given_an_owner_that_does_not_exist_is_collected_with_its_data() {
    let model = scene();
    let stale = owner("StatefulSet", "pg-main", "00000000-0000-4000-8000-000000000000");
    let request = update_owners(
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "data-pg-main-0",
        json!([stale]),
    );
    let impact = estimate(&request, &model);
    assert_eq!(
        deleted(&impact),
        ["PersistentVolumeClaim databases/data-pg-main-0"]
    );
    assert_eq!(
        impact.summary.data_loss, 1,
        "its volume reclaims with Delete and pg-main-0 mounts it"
    );
    assert!(impact.modelled);
    assert!(
        noted(&impact, "would name only owners that do not exist"),
        "{:?}",
        impact.notes
    );
    let decision = evaluate(&pack::builtin().unwrap(), &request, &model);
    let denied: Vec<&str> = decision.denials.iter().map(|d| d.policy.as_str()).collect();
    assert_eq!(denied, ["suture-data-loss"]);
}

#[test]
fn an_owner_that_exists_keeps_the_object() {
    let model = scene();
    let live = owner("StatefulSet", "pg-main", PG_MAIN_UID);
    let request = update_owners(
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "data-pg-main-0",
        json!([live]),
    );
    let impact = estimate(&request, &model);
    assert!(impact.deleted.is_empty(), "{:?}", impact.deleted);
    // One live owner among dangling ones is enough for the collector.
    let stale = owner("StatefulSet", "pg-old", "00000000-0000-4000-8000-000000000000");
    let both = update_owners(
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "data-pg-main-0",
        json!([stale, live]),
    );
    assert!(estimate(&both, &model).deleted.is_empty());
}

#[test]
fn a_namespaced_owner_in_another_namespace_is_absent() {
    let mut model = scene();
    let elsewhere = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "pg-main", "namespace": "staging", "uid": "5b7c9d1e-staging"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "pg"}}}});
    let elsewhere = project(&elsewhere, &mut model).unwrap();
    model.insert(elsewhere);
    let request = update_owners(
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "data-pg-main-1",
        json!([owner("StatefulSet", "pg-main", "5b7c9d1e-staging")]),
    );
    assert_eq!(
        deleted(&estimate(&request, &model)),
        ["PersistentVolumeClaim databases/data-pg-main-1"]
    );
}

#[test]
fn a_statefulset_given_a_dangling_owner_is_collected_with_its_members() {
    let model = scene();
    let request = update_owners(
        "StatefulSet",
        "statefulsets",
        "pg-main",
        json!([owner(
            "ConfigMap",
            "pg-cluster",
            "00000000-0000-4000-8000-0000000000aa"
        )]),
    );
    let impact = estimate(&request, &model);
    assert_eq!(impact.summary.pods_disrupted, 3, "{:?}", impact.notes);
    assert_eq!(impact.summary.quorum_lost, 1);
    assert!(deleted(&impact).contains(&"StatefulSet databases/pg-main".to_owned()));
}

#[test]
fn unchanged_unknown_or_unresolvable_owners_keep_the_object() {
    let model = scene();
    // The same owner written again, fields reordered: nothing changes.
    let mut old = stored("Pod", "pg-main-0");
    let mut request_object = old.clone();
    request_object["metadata"]["ownerReferences"][0] = json!({"uid": PG_MAIN_UID, "name": "pg-main",
        "kind": "StatefulSet", "apiVersion": "apps/v1", "controller": true, "blockOwnerDeletion": true});
    old["metadata"]["resourceVersion"] = json!("1");
    let unchanged = Request::from_review(
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "name": "pg-main-0", "namespace": "databases", "operation": "UPDATE",
        "userInfo": {"username": "system:serviceaccount:databases:pg-operator"},
        "object": request_object, "oldObject": old, "dryRun": false}}),
    )
    .unwrap();
    assert!(estimate(&unchanged, &model).deleted.is_empty());

    // A custom kind the model has no instance of: it cannot tell, and keeps the object.
    let custom = json!({"apiVersion": "acid.zalan.do/v1", "kind": "postgresql", "name": "pg", "uid": "1d2e3f4a-custom"});
    let request = update_owners(
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "data-pg-main-2",
        json!([custom]),
    );
    let impact = estimate(&request, &model);
    assert!(impact.deleted.is_empty());
    assert!(noted(&impact, "is not known to the model"), "{:?}", impact.notes);

    // A cluster-scoped object naming a namespaced owner: the collector cannot resolve it.
    let volume = stored("PersistentVolume", "pvc-cdd36a22-cc78-5381-ab27-003b96c6bca8");
    let mut new = volume.clone();
    new["metadata"]["ownerReferences"] = json!([owner("StatefulSet", "pg-main", PG_MAIN_UID)]);
    let request = Request::from_review(
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "4c5d6e7f-8a9b-4c0d-9e1f-2a3b4c5d6e7f",
        "kind": {"group": "", "version": "v1", "kind": "PersistentVolume"},
        "resource": {"group": "", "version": "v1", "resource": "persistentvolumes"},
        "name": "pvc-cdd36a22-cc78-5381-ab27-003b96c6bca8", "operation": "UPDATE",
        "userInfo": {"username": "system:serviceaccount:databases:pg-operator"},
        "object": new, "oldObject": volume, "dryRun": false}}),
    )
    .unwrap();
    let impact = estimate(&request, &model);
    assert!(impact.deleted.is_empty());
    assert!(noted(&impact, "OwnerRefInvalidNamespace"), "{:?}", impact.notes);
}
