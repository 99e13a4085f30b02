//! OperatorProfiles loaded beside policies: a platform team's profile of an in-house operator
//! drives the estimate with the built-in semantics, a profile of a catalog entry's name replaces
//! it, a mistake names the file, line and field, and a pattern profile needs its finalizers.

use policies_cel::cluster::ClusterModel;
use policies_cel::impact::estimate_with;
use policies_cel::policy::Loader;
use policies_cel::{PolicySet, Request};
use serde_json::{Value as Json, json};

/// An in-house operator: deleting a Tenant deletes its namespaces, and what its `teardown`
/// finalizer names outside the cluster.
const TENANT: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: OperatorProfile
metadata:
  name: acme-tenant
spec:
  operator: the ACME tenant operator
  resource: {group: platform.acme.io, kind: Tenant}
  finalizers: [platform.acme.io/teardown]
  deletion:
  - name: delete-namespaces
    when: "object.?spec.?retain.orValue(false) == false"
    cascade:
    - reason: "'namespace of Tenant ' + object.metadata.name"
      objects: "object.?spec.?namespaces.orValue([]).map(n, {'kind': 'Namespace', 'name': n})"
    external: >-
      [{'provider': 'vault', 'kind': 'secrets engine', 'id': 'tenants/' + object.metadata.name,
        'dataLoss': true}]
"#;

fn load(name: &str, text: &str) -> PolicySet {
    Loader::new().add_str(name, text).unwrap().finish().unwrap()
}

fn model(objects: &[Json]) -> ClusterModel {
    let mut model = ClusterModel::new();
    for object in objects {
        model.insert_json(object).unwrap();
    }
    model
}

fn delete(resource: (&str, &str, &str), namespace: &str, old: Json) -> Request {
    let name = old["metadata"]["name"].as_str().unwrap().to_owned();
    let (group, version, plural) = resource;
    Request::from_review(json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "u", "kind": {"group": group, "version": version, "kind": old["kind"]},
            "resource": {"group": group, "version": version, "resource": plural},
            "name": name, "namespace": namespace, "operation": "DELETE",
            "userInfo": {"username": "system:serviceaccount:platform:tenant-operator"},
            "oldObject": old, "dryRun": false
        }
    }))
    .unwrap()
}

fn tenant(retain: bool) -> Json {
    json!({"apiVersion": "platform.acme.io/v1", "kind": "Tenant",
        "metadata": {"name": "blue", "uid": "tenant-blue", "finalizers": ["platform.acme.io/teardown"]},
        "spec": {"namespaces": ["blue-prod"], "retain": retain}})
}

/// The tenant's namespace with a Deployment's pod and a claim on a volume that reclaims with
/// Delete, mounted by a pod.
fn tenant_cluster() -> ClusterModel {
    model(&[
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "blue-prod", "uid": "ns-blue"}}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db-0", "namespace": "blue-prod", "uid": "pod-db-0"},
            "spec": {"nodeName": "n1", "containers": [{"name": "db", "image": "db"}],
                     "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data-db-0", "namespace": "blue-prod", "uid": "pvc-1"},
            "spec": {"volumeName": "pv-1"}, "status": {"phase": "Bound"}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1", "uid": "pv-1"},
            "spec": {"persistentVolumeReclaimPolicy": "Delete", "claimRef": {"namespace": "blue-prod", "name": "data-db-0"}},
            "status": {"phase": "Bound"}}),
    ])
}

#[test]
fn an_in_house_profile_drives_the_estimate_with_the_built_in_semantics() {
    let set = load("tenant.yaml", TENANT);
    let cluster = tenant_cluster();
    let request = delete(("platform.acme.io", "v1", "tenants"), "", tenant(false));
    let impact = estimate_with(&request, &cluster, &set.profiles);
    let deleted: Vec<String> = impact.deleted.iter().map(|d| d.object.display()).collect();
    assert!(deleted.contains(&"Namespace blue-prod".to_owned()), "{deleted:?}");
    assert!(
        deleted.contains(&"Pod blue-prod/db-0".to_owned()),
        "the namespace's contents: {deleted:?}"
    );
    assert_eq!(
        impact.summary.data_loss, 1,
        "the claim's volume reclaims with Delete"
    );
    assert_eq!(impact.summary.pods_disrupted, 1);
    assert_eq!(impact.summary.external_data_loss, 1);
    assert_eq!(impact.external[0].id, "tenants/blue");
    assert_eq!(impact.external[0].by, "Tenant blue");
    assert_eq!(impact.external[0].reason, "destroyed by the ACME tenant operator");
    assert!(impact.modelled, "{:?}", impact.notes);
    let reason = &impact
        .deleted
        .iter()
        .find(|d| d.object.name == "blue-prod")
        .unwrap()
        .reason;
    assert_eq!(reason, "namespace of Tenant blue");

    // The rule's condition: a retained tenant takes nothing with it.
    let kept = estimate_with(
        &delete(("platform.acme.io", "v1", "tenants"), "", tenant(true)),
        &cluster,
        &set.profiles,
    );
    assert_eq!(kept.summary.deleted, 1);
    assert_eq!(kept.summary.external_data_loss, 0);

    // Without the profile, the same deletion is estimated as an operator's unknown finalizer.
    let catalog_only = load("none.yaml", "");
    let unknown = estimate_with(&request, &cluster, &catalog_only.profiles);
    assert!(!unknown.modelled);
    assert!(
        unknown
            .notes
            .iter()
            .any(|n| n.contains("carries finalizer platform.acme.io/teardown")),
        "{:?}",
        unknown.notes
    );
}

#[test]
fn a_profile_of_a_catalog_entry_s_name_replaces_it() {
    let catalog = load("none.yaml", "");
    assert!(catalog.profiles.iter().any(|p| p.name == "strimzi-kafkatopic"));
    let topic = json!({"apiVersion": "kafka.strimzi.io/v1beta2", "kind": "KafkaTopic",
        "metadata": {"name": "orders", "namespace": "kafka", "uid": "t-1", "finalizers": ["strimzi.io/topic-operator"]},
        "spec": {"partitions": 3}});
    let request = delete(("kafka.strimzi.io", "v1beta2", "kafkatopics"), "kafka", topic);
    let cluster = model(&[json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kafka"}})]);
    assert_eq!(
        estimate_with(&request, &cluster, &catalog.profiles)
            .summary
            .external_data_loss,
        1
    );

    // A team whose brokers refuse topic deletion (delete.topic.enable=false) says so.
    let replaced = load(
        "topics.yaml",
        r#"
apiVersion: suture.dev/v1alpha1
kind: OperatorProfile
metadata: {name: strimzi-kafkatopic}
spec:
  operator: Strimzi (topic deletion disabled on the brokers)
  resource: {group: kafka.strimzi.io, kind: KafkaTopic}
  finalizers: [strimzi.io/topic-operator]
"#,
    );
    assert_eq!(replaced.profiles.len(), catalog.profiles.len());
    let impact = estimate_with(&request, &cluster, &replaced.profiles);
    assert_eq!(impact.summary.external_data_loss, 0);
    assert!(
        impact.modelled,
        "the finalizer is still explained: {:?}",
        impact.notes
    );
}

#[test]
fn a_broken_profile_names_the_file_line_and_field() {
    let text = r#"apiVersion: suture.dev/v1alpha1
kind: OperatorProfile
metadata:
  name: broken
spec:
  operator: someone
  resource: {group: example.com, kind: Widget}
  deletion:
  - name: bad
    when: "object.spec.size >"
    external: "[]"
  - name: bad
    cascade:
    - reason: "'x'"
"#;
    let error = Loader::new()
        .add_str("broken.yaml", text)
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("broken.yaml:10"), "{error}");
    assert!(error.contains("spec.deletion[0].when"), "{error}");
    assert!(
        error.contains("spec.deletion[1].name: Duplicate value"),
        "{error}"
    );
    assert!(
        error.contains("a cascade selects by objects, labels or names"),
        "{error}"
    );

    let types = r#"apiVersion: suture.dev/v1alpha1
kind: OperatorProfile
metadata: {name: types}
spec:
  operator: someone
  resource: {group: "*", kind: "*"}
  deletion:
  - name: wrong-type
    external: "'not a list'"
"#;
    let error = Loader::new()
        .add_str("types.yaml", types)
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("spec.finalizers: Required value"), "{error}");
    assert!(error.contains("spec.deletion[0].external"), "{error}");
    assert!(error.contains("must evaluate to a list"), "{error}");
}

#[test]
fn an_expression_that_fails_at_run_time_leaves_the_estimate_unmodelled() {
    let set = load(
        "fails.yaml",
        r#"
apiVersion: suture.dev/v1alpha1
kind: OperatorProfile
metadata: {name: fails}
spec:
  operator: someone
  resource: {group: example.com, kind: Widget}
  deletion:
  - name: reads-a-missing-field
    external: "[{'provider': 'x', 'kind': 'y', 'id': object.spec.missing, 'dataLoss': true}]"
"#,
    );
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "a", "uid": "w-1"}, "spec": {}});
    let request = delete(("example.com", "v1", "widgets"), "a", widget);
    let impact = estimate_with(&request, &model(&[]), &set.profiles);
    assert!(!impact.modelled);
    assert!(
        impact.notes.iter().any(|n| n.starts_with(
            "OperatorProfile fails: deletion rule reads-a-missing-field: external could not be evaluated"
        )),
        "{:?}",
        impact.notes
    );
    assert!(impact.external.is_empty());
}

/// An in-house Project: marking it decommissioned (an UPDATE) makes its operator delete its
/// namespaces; its namespaces are kept in the model (`keep`) for when a cascade reaches it.
const PROJECT: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: OperatorProfile
metadata:
  name: acme-project
spec:
  operator: the ACME project operator
  resource: {group: platform.acme.io, kind: Project}
  keep: [spec.namespaces]
  deletion:
  - name: decommission
    operations: [UPDATE]
    when: "object.?spec.?decommissioned.orValue(false) && !oldObject.?spec.?decommissioned.orValue(false)"
    cascade:
    - reason: "'namespace of decommissioned Project ' + object.metadata.name"
      objects: "object.spec.namespaces.map(n, {'kind': 'Namespace', 'name': n})"
  - name: delete-namespaces
    cascade:
    - reason: "'namespace of Project ' + object.metadata.name"
      objects: "object.?spec.?namespaces.orValue([]).map(n, {'kind': 'Namespace', 'name': n})"
"#;

fn project(decommissioned: bool, owner: Option<&str>) -> Json {
    let mut project = json!({"apiVersion": "platform.acme.io/v1", "kind": "Project",
        "metadata": {"name": "blue", "uid": "project-blue"},
        "spec": {"namespaces": ["blue-prod"], "decommissioned": decommissioned}});
    if let Some(owner) = owner {
        project["metadata"]["ownerReferences"] = json!([{"apiVersion": "platform.acme.io/v1",
            "kind": "Tenant", "name": owner, "uid": format!("tenant-{owner}"), "controller": true}]);
    }
    project
}

fn update(resource: (&str, &str, &str), old: Json, new: Json) -> Request {
    let name = new["metadata"]["name"].as_str().unwrap().to_owned();
    let (group, version, plural) = resource;
    Request::from_review(json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "u", "kind": {"group": group, "version": version, "kind": new["kind"]},
            "resource": {"group": group, "version": version, "resource": plural},
            "name": name, "namespace": "", "operation": "UPDATE",
            "userInfo": {"username": "system:serviceaccount:platform:project-operator"},
            "object": new, "oldObject": old, "dryRun": false
        }
    }))
    .unwrap()
}

#[test]
fn an_update_rule_compares_the_object_with_the_one_before() {
    let set = load("project.yaml", PROJECT);
    let cluster = tenant_cluster();
    let projects = ("platform.acme.io", "v1", "projects");
    let decommissioning = update(projects, project(false, None), project(true, None));
    let impact = estimate_with(&decommissioning, &cluster, &set.profiles);
    let namespace = impact.deleted.iter().find(|d| d.object.name == "blue-prod");
    assert_eq!(
        namespace.map(|d| d.reason.as_str()),
        Some("namespace of decommissioned Project blue"),
        "{:?}",
        impact.deleted
    );
    assert_eq!(impact.summary.data_loss, 1, "the namespace's claim goes with it");

    // Already decommissioned before: this UPDATE changes nothing the operator acts on.
    let again = update(projects, project(true, None), project(true, None));
    assert_eq!(estimate_with(&again, &cluster, &set.profiles).summary.deleted, 0);
    // A deletion sets off the DELETE rule, not the UPDATE one.
    let deleted = estimate_with(
        &delete(projects, "", project(false, None)),
        &cluster,
        &set.profiles,
    );
    assert_eq!(
        deleted
            .deleted
            .iter()
            .find(|d| d.object.name == "blue-prod")
            .map(|d| d.reason.as_str()),
        Some("namespace of Project blue")
    );
}

#[test]
fn a_profile_s_kept_fields_reach_an_object_a_cascade_finds() {
    let set = load("project.yaml", PROJECT);
    let owned = project(false, Some("blue"));
    let tenant = json!({"apiVersion": "platform.acme.io/v1", "kind": "Tenant",
        "metadata": {"name": "blue", "uid": "tenant-blue"}});
    let request = delete(("platform.acme.io", "v1", "tenants"), "", tenant.clone());

    // The model keeps the Project's namespaces because the loaded profile names them: deleting
    // the Tenant takes the Project (garbage collection), whose rule then takes the namespace.
    let namespace =
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "blue-prod", "uid": "ns-blue"}});
    let mut keeping = ClusterModel::new();
    keeping.keep_for(&set.profiles);
    for object in [&tenant, &owned, &namespace] {
        keeping.insert_json(object).unwrap();
    }
    let impact = estimate_with(&request, &keeping, &set.profiles);
    let mut names: Vec<String> = impact.deleted.iter().map(|d| d.object.display()).collect();
    names.sort();
    assert_eq!(
        names,
        ["Namespace blue-prod", "Project blue", "Tenant blue"],
        "{:?}",
        impact.deleted
    );

    // A model that keeps what the catalog names only holds no namespaces for the rule to read.
    let catalog_kept = model(&[tenant, owned, namespace]);
    let short = estimate_with(&request, &catalog_kept, &set.profiles);
    assert_eq!(short.summary.deleted, 2, "{:?}", short.deleted);
}

/// An in-house cache operator: deleting a Cache deletes the claims named after it.
const CACHE: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: OperatorProfile
metadata:
  name: acme-cache
spec:
  operator: the ACME cache operator
  resource: {group: platform.acme.io, kind: Cache}
  deletion:
  - name: delete-claims
    cascade:
    - reason: "'a claim of Cache ' + object.metadata.name"
      names: >-
        {'kind': 'PersistentVolumeClaim', 'namespaces': [object.metadata.namespace],
         'pattern': object.?spec.?claimPattern.orValue('cache-' + object.metadata.name + '-[0-9]+')}
"#;

fn claim(name: &str, namespace: &str) -> Json {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": format!("pvc-{namespace}-{name}")},
        "spec": {"volumeName": format!("pv-{namespace}-{name}")}, "status": {"phase": "Bound"}})
}

#[test]
fn a_cascade_selects_by_a_name_pattern() {
    let set = load("cache.yaml", CACHE);
    let cluster = model(&[
        claim("cache-hot-0", "shop"),
        claim("cache-hot-1", "shop"),
        claim("cache-hot-1-backup", "shop"),
        claim("cache-hotter-0", "shop"),
        claim("cache-hot-0", "other"),
    ]);
    let cache = |spec: Json| {
        json!({"apiVersion": "platform.acme.io/v1", "kind": "Cache",
            "metadata": {"name": "hot", "namespace": "shop", "uid": "cache-hot"}, "spec": spec})
    };
    let caches = ("platform.acme.io", "v1", "caches");
    let impact = estimate_with(&delete(caches, "shop", cache(json!({}))), &cluster, &set.profiles);
    let mut claims: Vec<String> = impact
        .deleted
        .iter()
        .filter(|d| d.object.kind == "PersistentVolumeClaim")
        .map(|d| d.object.display())
        .collect();
    claims.sort();
    assert_eq!(
        claims,
        [
            "PersistentVolumeClaim shop/cache-hot-0",
            "PersistentVolumeClaim shop/cache-hot-1"
        ],
        "the whole name matches, in the namespaces given"
    );

    // A pattern that is no regular expression: nothing is counted, and the estimate says so.
    let broken = estimate_with(
        &delete(caches, "shop", cache(json!({"claimPattern": "cache-(hot"}))),
        &cluster,
        &set.profiles,
    );
    assert_eq!(broken.summary.deleted, 1);
    assert!(!broken.modelled);
    assert!(
        broken
            .notes
            .iter()
            .any(|n| n.contains("is not a regular expression")),
        "{:?}",
        broken.notes
    );
}
