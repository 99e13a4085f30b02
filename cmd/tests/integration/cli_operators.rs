//! Operators' semantics from the command line: a what-if UPDATE of an Argo CD Application judged
//! by what its profile says Argo CD prunes next (the object before it from the snapshot), and an
//! in-house OperatorProfile given with `--policies` whose `keep` reaches the snapshot's model.

use crate::common;

use common::{json, stderr, suture, temp_files};

const OPERATORS: &str = "testdata/clusters/operators";

fn run(args: &[&str]) -> std::process::Output {
    suture().args(args).output().unwrap()
}

fn deleted(doc: &serde_json::Value) -> Vec<String> {
    doc["impact"]["deleted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{} {}", d["kind"].as_str().unwrap(), d["name"].as_str().unwrap()))
        .collect()
}

#[test]
fn a_sync_asked_with_prune_is_judged_by_what_argo_cd_prunes() {
    let out = run(&[
        "check",
        "-f",
        "testdata/objects/application-sync-prune.yaml",
        "--cluster",
        OPERATORS,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["impact"]["activity"], "updating Application argocd/shop");
    let deleted = deleted(&doc);
    assert!(
        deleted.contains(&"Deployment legacy-api".to_owned()),
        "{deleted:?}"
    );
    assert!(
        !deleted.iter().any(|d| d.ends_with(" web") || d.ends_with(" db")),
        "only what requires pruning goes: {deleted:?}"
    );
    assert_eq!(doc["impact"]["summary"]["workloadsDown"], 1);
    assert_eq!(doc["impact"]["modelled"], true);

    // The same sync without pruning: the profile says nothing goes, and says so as modelled.
    let out = run(&[
        "check",
        "-f",
        "testdata/objects/application-sync.yaml",
        "--cluster",
        OPERATORS,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["impact"]["summary"]["deleted"], 0);
    assert_eq!(doc["impact"]["modelled"], true);
}

const PROJECT_PROFILE: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: OperatorProfile
metadata:
  name: acme-project
spec:
  operator: the ACME project operator
  resource: {group: platform.acme.io, kind: Project}
  keep: [spec.namespaces]
  deletion:
  - name: delete-namespaces
    cascade:
    - reason: "'namespace of Project ' + object.metadata.name"
      objects: "object.?spec.?namespaces.orValue([]).map(n, {'kind': 'Namespace', 'name': n})"
"#;

const TENANT_SNAPSHOT: &str = r#"
apiVersion: v1
kind: List
items:
- apiVersion: platform.acme.io/v1
  kind: Tenant
  metadata: {name: blue, uid: tenant-blue}
- apiVersion: platform.acme.io/v1
  kind: Project
  metadata:
    name: blue
    uid: project-blue
    ownerReferences: [{apiVersion: platform.acme.io/v1, kind: Tenant, name: blue, uid: tenant-blue, controller: true}]
  spec: {namespaces: [blue-prod]}
- apiVersion: v1
  kind: Namespace
  metadata: {name: blue-prod, uid: ns-blue}
- apiVersion: apiextensions.k8s.io/v1
  kind: CustomResourceDefinition
  metadata: {name: tenants.platform.acme.io}
  spec:
    group: platform.acme.io
    scope: Cluster
    names: {kind: Tenant, plural: tenants, singular: tenant}
    versions: [{name: v1, served: true, storage: true}]
"#;

#[test]
fn an_in_house_profile_s_kept_fields_reach_the_snapshot_s_model() {
    let dir = temp_files(&[
        ("profile.yaml", PROJECT_PROFILE),
        ("snapshot.yaml", TENANT_SNAPSHOT),
    ]);
    let profile = dir.path().join("profile.yaml");
    let snapshot = dir.path().join("snapshot.yaml");
    let out = run(&[
        "check",
        "delete",
        "tenant/blue",
        "--cluster",
        snapshot.to_str().unwrap(),
        "--policies",
        "builtin",
        "--policies",
        profile.to_str().unwrap(),
        "-o",
        "json",
    ]);
    let doc = json(&out);
    let deleted = deleted(&doc);
    assert!(
        deleted.contains(&"Namespace blue-prod".to_owned()),
        "the Project the Tenant takes keeps its namespaces in the model: {deleted:?} {}",
        stderr(&out)
    );
}
