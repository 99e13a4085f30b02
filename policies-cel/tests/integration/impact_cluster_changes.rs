//! Impact of changes to cluster objects other than workloads, on small hand-built clusters:
//! Service selector and port edits, Node taints and cordons (taint-based eviction), ConfigMap
//! and Secret key removals (broken references), PodDisruptionBudgets created or tightened, and
//! controllers created over orphan pods (adoption).

use crate::support;

use policies_cel::Request;
use policies_cel::cluster::object::{ConfigUse, IntOrPercent, PodSpec, Retention, Text, Toleration};
use policies_cel::cluster::{ClusterModel, Object, Spec};
use policies_cel::impact::report::BrokenReference;
use policies_cel::impact::{Impact, Summary, estimate};
use serde_json::{Value as Json, json};
use support::cluster::*;

// ---- slim objects -------------------------------------------------------------------------

fn pod_spec(pod: &mut Object) -> &mut PodSpec {
    match &mut pod.spec {
        Spec::Pod(spec) => spec,
        other => panic!("not a pod: {other:?}"),
    }
}

/// A ready pod labelled `app=<app>` on `node`.
fn app_pod(namespace: &str, name: &str, node: &str, app: &str) -> Object {
    with_labels(pod(namespace, name, node, true), &[("app", app)])
}

fn tolerating(mut pod: Object, tolerations: Vec<Toleration>) -> Object {
    pod_spec(&mut pod).tolerations = tolerations.into();
    pod
}

fn toleration(key: &str, value: Option<&str>, effect: &str) -> Toleration {
    Toleration {
        key: Some(key.into()),
        exists: value.is_none(),
        value: value.map(Text::from),
        effect: Some(effect.into()),
    }
}

/// The tolerations the DaemonSet controller adds to its pods (none for custom taints).
fn daemonset_tolerations() -> Vec<Toleration> {
    let execute = ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"];
    let schedule = [
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/pid-pressure",
        "node.kubernetes.io/unschedulable",
    ];
    execute
        .iter()
        .map(|k| toleration(k, None, "NoExecute"))
        .chain(schedule.iter().map(|k| toleration(k, None, "NoSchedule")))
        .collect()
}

fn reading(mut pod: Object, kind: &str, name: &str, keys: Option<&[&str]>, required: bool) -> Object {
    let config = ConfigUse {
        name: name.into(),
        keys: keys.map(|k| k.iter().map(|k| Text::from(*k)).collect()),
        required,
    };
    let spec = pod_spec(&mut pod);
    let uses = if kind == "Secret" {
        &mut spec.secrets
    } else {
        &mut spec.config_maps
    };
    let mut list = uses.to_vec();
    list.push(config);
    *uses = list.into();
    pod
}

fn node(name: &str) -> Object {
    object(
        "Node",
        "",
        name,
        Spec::Node {
            unschedulable: false,
            taints: Box::default(),
        },
    )
}

fn daemonset(namespace: &str, name: &str, app: &str) -> Object {
    object(
        "DaemonSet",
        namespace,
        name,
        Spec::DaemonSet {
            selector: selector(&[("app", app)]),
            max_unavailable: IntOrPercent::Int(1),
            max_surge: IntOrPercent::Int(0),
            placement: Box::default(),
        },
    )
}

// ---- objects as the API server sends them -------------------------------------------------

fn metadata(namespace: &str, name: &str, kind: &str, extra: Json) -> Json {
    let mut meta = json!({
        "name": name,
        "uid": uid(kind, name).to_string(),
        "resourceVersion": "48213",
        "generation": 1,
        "creationTimestamp": "2025-03-02T09:14:07Z",
    });
    if !namespace.is_empty() {
        meta["namespace"] = json!(namespace);
    }
    for (k, v) in extra.as_object().into_iter().flatten() {
        meta[k] = v.clone();
    }
    meta
}

fn update(
    resource: (&str, &str, &str),
    kind: &str,
    namespace: &str,
    name: &str,
    old: Json,
    new: Json,
) -> Request {
    review(
        "UPDATE",
        resource,
        kind,
        namespace,
        name,
        json!({"oldObject": old, "object": new, "options": {
        "apiVersion": "meta.k8s.io/v1", "kind": "UpdateOptions"}}),
    )
}

fn create(resource: (&str, &str, &str), kind: &str, namespace: &str, name: &str, new: Json) -> Request {
    review(
        "CREATE",
        resource,
        kind,
        namespace,
        name,
        json!({"object": new, "oldObject": null, "options": {
        "apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}),
    )
}

const SERVICES: (&str, &str, &str) = ("", "v1", "services");
const NODES: (&str, &str, &str) = ("", "v1", "nodes");
const CONFIG_MAPS: (&str, &str, &str) = ("", "v1", "configmaps");
const SECRETS: (&str, &str, &str) = ("", "v1", "secrets");
const PDBS: (&str, &str, &str) = ("policy", "v1", "poddisruptionbudgets");
const REPLICA_SETS: (&str, &str, &str) = ("apps", "v1", "replicasets");

fn service_json(namespace: &str, name: &str, selector: Json, port: u16) -> Json {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(namespace, name, "Service", json!({})),
        "spec": {
            "selector": selector,
            "ports": [{"name": "http", "port": port, "protocol": "TCP", "targetPort": 8080}],
            "type": "ClusterIP",
            "clusterIP": "10.96.41.7",
            "clusterIPs": ["10.96.41.7"],
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster",
            "sessionAffinity": "None",
        },
        "status": {"loadBalancer": {}},
    })
}

fn node_json(name: &str, unschedulable: bool, taints: Json) -> Json {
    let mut spec = json!({"podCIDR": "10.244.1.0/24", "providerID": format!("aws:///eu-west-1a/i-{name}")});
    if unschedulable {
        spec["unschedulable"] = json!(true);
    }
    if taints.as_array().is_some_and(|t| !t.is_empty()) {
        spec["taints"] = taints;
    }
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": metadata("", name, "Node", json!({"labels": {"kubernetes.io/hostname": name}})),
        "spec": spec,
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    })
}

fn config_map_json(namespace: &str, name: &str, data: Json) -> Json {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata(namespace, name, "ConfigMap", json!({})), "data": data})
}

fn secret_json(namespace: &str, name: &str, data: Json) -> Json {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(namespace, name, "Secret", json!({})),
        "type": "Opaque",
        "data": data,
    })
}

fn pdb_json(namespace: &str, name: &str, app: &str, min_available: i64) -> Json {
    json!({
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": metadata(namespace, name, "PodDisruptionBudget", json!({})),
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": app}}},
    })
}

fn replica_set_json(namespace: &str, name: &str, app: &str, replicas: i64) -> Json {
    json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": metadata(namespace, name, "ReplicaSet", json!({"labels": {"app": app}})),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": {"app": app}},
                "spec": {"containers": [{"name": app, "image": "nginx:1.27"}]},
            },
        },
    })
}

// ---- helpers on the estimate --------------------------------------------------------------

fn stopped(impact: &Impact) -> Vec<(&str, bool, &str)> {
    let mut pods: Vec<_> = impact
        .pods
        .iter()
        .map(|p| (p.name.as_str(), p.replaced, p.reason.as_str()))
        .collect();
    pods.sort();
    pods
}

#[track_caller]
fn noted(impact: &Impact, needle: &str) {
    assert!(
        impact.notes.iter().any(|n| n.contains(needle)),
        "no note contains {needle:?}: {:#?}",
        impact.notes
    );
}

// ---- Services -----------------------------------------------------------------------------

/// Service `shop/web` selecting `app=web`: 3 ready pods, plus 1 ready `app=web-canary` pod.
fn shop() -> ClusterModel {
    let stable = Spec::Service {
        selector: Some(labels(&[("app", "web"), ("track", "stable")])),
        external: Box::default(),
        ports: Box::default(),
    };
    let mut objects = vec![object("Service", "shop", "web", stable)];
    for i in 0..3 {
        objects.push(with_labels(
            pod("shop", &format!("web-{i}"), "node-a", true),
            &[("app", "web"), ("track", "stable")],
        ));
    }
    objects.push(with_labels(
        pod("shop", "web-canary", "node-b", true),
        &[("app", "web"), ("track", "canary")],
    ));
    model(objects)
}

#[test]
fn a_service_selecting_a_label_no_pod_has_loses_its_endpoints() {
    let old = service_json("shop", "web", json!({"app": "web", "track": "stable"}), 80);
    let new = service_json("shop", "web", json!({"app": "web-v2"}), 80);
    let impact = estimate(&update(SERVICES, "Service", "shop", "web", old, new), &shop());
    assert_eq!(
        impact.summary,
        Summary {
            services_without_endpoints: 1,
            ..Summary::default()
        }
    );
    let service = &impact.services[0];
    assert_eq!(
        (service.namespace.as_str(), service.name.as_str()),
        ("shop", "web")
    );
    assert_eq!((service.ready_before, service.ready_after), (3, 0));
    noted(
        &impact,
        "new selector app=web-v2 of Service shop/web matches no ready pod",
    );
}

#[test]
fn a_widened_service_selector_harms_nothing() {
    let old = service_json("shop", "web", json!({"app": "web", "track": "stable"}), 80);
    let new = service_json("shop", "web", json!({"app": "web"}), 80);
    let impact = estimate(&update(SERVICES, "Service", "shop", "web", old, new), &shop());
    assert_eq!(impact.summary, Summary::default());
    assert_eq!(
        (impact.services[0].ready_before, impact.services[0].ready_after),
        (3, 4)
    );
}

#[test]
fn a_port_change_keeps_the_endpoints() {
    let old = service_json("shop", "web", json!({"app": "web", "track": "stable"}), 80);
    let new = service_json("shop", "web", json!({"app": "web", "track": "stable"}), 8443);
    let impact = estimate(&update(SERVICES, "Service", "shop", "web", old, new), &shop());
    assert_eq!(impact.summary, Summary::default());
    assert!(impact.services.is_empty());
    noted(
        &impact,
        "the ports of Service shop/web change (clients of 80/TCP lose it): its endpoints are kept",
    );
}

#[test]
fn a_service_without_selector_keeps_its_hand_made_endpoints() {
    let mut cluster = shop();
    cluster.insert(object(
        "Service",
        "shop",
        "legacy-db",
        Spec::Service {
            selector: None,
            external: Box::default(),
            ports: Box::default(),
        },
    ));
    let old = service_json("shop", "legacy-db", Json::Null, 5432);
    let mut new = old.clone();
    new["metadata"]["labels"] = json!({"team": "storage"});
    let impact = estimate(
        &update(SERVICES, "Service", "shop", "legacy-db", old, new),
        &cluster,
    );
    assert_eq!(impact.summary, Summary::default());
    assert!(
        impact.services.is_empty() && impact.notes.is_empty(),
        "{impact:#?}"
    );
}

// ---- Nodes --------------------------------------------------------------------------------

/// Node `node-a` runs a ReplicaSet pod, a DaemonSet pod (with the controller's default
/// tolerations) and a pod tolerating `dedicated=db:NoExecute`; `node-b` runs one more pod of
/// the ReplicaSet and of the DaemonSet.
fn tainted_node() -> ClusterModel {
    let rs = replicaset("shop", "api-5c8d", 2, "api");
    let ds = daemonset("kube-system", "node-exporter", "node-exporter");
    let exporter = |name: &str, node: &str| {
        let pod = owned_by(app_pod("kube-system", name, node, "node-exporter"), &ds);
        tolerating(pod, daemonset_tolerations())
    };
    let db = app_pod("databases", "db-0", "node-a", "db");
    model(vec![
        node("node-a"),
        node("node-b"),
        owned_by(app_pod("shop", "api-5c8d-q9w", "node-a", "api"), &rs),
        owned_by(app_pod("shop", "api-5c8d-z2m", "node-b", "api"), &rs),
        exporter("node-exporter-x7k2p", "node-a"),
        exporter("node-exporter-p4f8d", "node-b"),
        tolerating(db, vec![toleration("dedicated", Some("db"), "NoExecute")]),
        rs,
        ds,
    ])
}

fn taint(key: &str, value: &str, effect: &str) -> Json {
    json!({"key": key, "value": value, "effect": effect, "timeAdded": "2025-03-02T10:00:00Z"})
}

#[test]
fn a_no_execute_taint_evicts_the_pods_that_do_not_tolerate_it() {
    let old = node_json("node-a", false, json!([]));
    let new = node_json("node-a", false, json!([taint("dedicated", "db", "NoExecute")]));
    let impact = estimate(&update(NODES, "Node", "", "node-a", old, new), &tainted_node());
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 2,
            pods_disrupted: 2,
            ..Summary::default()
        }
    );
    assert_eq!(
        stopped(&impact),
        [
            ("api-5c8d-q9w", true, "evicted by NoExecute taint dedicated=db"),
            (
                "node-exporter-x7k2p",
                false,
                "evicted by NoExecute taint dedicated=db"
            ),
        ],
        "the ReplicaSet replaces its pod elsewhere, the DaemonSet does not"
    );
    noted(
        &impact,
        "pods db-0 on Node node-a tolerate the new NoExecute taint(s)",
    );
}

#[test]
fn a_cordon_stops_nothing() {
    let old = node_json("node-a", false, json!([]));
    let new = node_json(
        "node-a",
        true,
        json!([{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2025-03-02T10:00:00Z"}]),
    );
    let impact = estimate(&update(NODES, "Node", "", "node-a", old, new), &tainted_node());
    assert_eq!(impact.summary, Summary::default());
    assert!(impact.pods.is_empty());
    noted(
        &impact,
        "Node node-a is cordoned: new pods will not land there, running pods stay",
    );
    noted(
        &impact,
        "taint node.kubernetes.io/unschedulable:NoSchedule on Node node-a",
    );
}

#[test]
fn a_no_execute_taint_on_the_node_of_the_last_replicas_takes_the_workload_down() {
    // Deployment web: both ready pods on node-a. StatefulSet db (PDB minAvailable 2): 2 of 3 on node-a.
    let deploy = deployment("shop", "web", 2, "web");
    let rs = owned_by(replicaset("shop", "web-7d9f8", 2, "web"), &deploy);
    let sts = statefulset("databases", "db", 3, "db", &[], Retention::default());
    let mut objects = vec![node("node-a"), node("node-b")];
    for i in 0..2 {
        objects.push(owned_by(
            app_pod("shop", &format!("web-7d9f8-{i}"), "node-a", "web"),
            &rs,
        ));
    }
    for (i, node) in ["node-a", "node-a", "node-b"].iter().enumerate() {
        objects.push(owned_by(
            app_pod("databases", &format!("db-{i}"), node, "db"),
            &sts,
        ));
    }
    objects.extend([
        pdb_min_available("databases", "db", "db", IntOrPercent::Int(2)),
        deploy,
        rs,
        sts,
    ]);
    let old = node_json("node-a", false, json!([]));
    let new = node_json(
        "node-a",
        false,
        json!([taint("maintenance", "kernel-upgrade", "NoExecute")]),
    );
    let impact = estimate(&update(NODES, "Node", "", "node-a", old, new), &model(objects));
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 4,
            pods_disrupted: 4,
            pdb_violations: 1,
            workloads_down: 1,
            quorum_lost: 1,
            ..Summary::default()
        }
    );
    let web = impact
        .workloads
        .iter()
        .find(|w| w.workload.name == "web")
        .unwrap();
    assert_eq!(
        (web.ready_before, web.ready_worst, web.ready_after),
        (2, 0, 2),
        "replaced elsewhere, down meanwhile"
    );
    let pdb = &impact.pdbs[0];
    assert_eq!(
        (
            pdb.desired_healthy,
            pdb.current_healthy,
            pdb.healthy_after,
            pdb.violated
        ),
        (2, 3, 1, true)
    );
    assert!(
        impact
            .pods
            .iter()
            .all(|p| p.reason == "evicted by NoExecute taint maintenance=kernel-upgrade")
    );
}

// ---- ConfigMaps and Secrets ---------------------------------------------------------------

/// ConfigMap `shop/settings` read by `api-0` (env keyRef LOG_LEVEL), `api-1` (envFrom, whole)
/// and `api-2` (optional keyRef LOG_LEVEL).
fn settings() -> ClusterModel {
    let keys: Box<[Text]> = ["LOG_LEVEL", "CACHE_TTL"]
        .iter()
        .map(|k| Text::from(*k))
        .collect();
    model(vec![
        object("ConfigMap", "shop", "settings", Spec::ConfigMap { keys }),
        reading(
            app_pod("shop", "api-0", "node-a", "api"),
            "ConfigMap",
            "settings",
            Some(&["LOG_LEVEL"]),
            true,
        ),
        reading(
            app_pod("shop", "api-1", "node-a", "api"),
            "ConfigMap",
            "settings",
            None,
            true,
        ),
        reading(
            app_pod("shop", "api-2", "node-b", "api"),
            "ConfigMap",
            "settings",
            Some(&["LOG_LEVEL"]),
            false,
        ),
    ])
}

#[test]
fn removing_a_config_map_key_a_pod_requires_breaks_a_reference() {
    let old = config_map_json(
        "shop",
        "settings",
        json!({"LOG_LEVEL": "info", "CACHE_TTL": "30s"}),
    );
    let new = config_map_json("shop", "settings", json!({"CACHE_TTL": "30s"}));
    let impact = estimate(
        &update(CONFIG_MAPS, "ConfigMap", "shop", "settings", old, new),
        &settings(),
    );
    assert_eq!(
        impact.summary,
        Summary {
            broken_references: 1,
            ..Summary::default()
        },
        "nothing stops now"
    );
    assert_eq!(
        impact.broken_references,
        [BrokenReference {
            namespace: "shop".into(),
            pod: "api-0".into(),
            kind: "ConfigMap".into(),
            name: "settings".into(),
            key: "LOG_LEVEL".into(),
        }]
    );
    noted(
        &impact,
        "pods api-0 require key LOG_LEVEL of ConfigMap shop/settings, which the change removes",
    );
    noted(&impact, "pod api-1 reads all of ConfigMap shop/settings");
    noted(
        &impact,
        "pod api-2 reads key(s) LOG_LEVEL of ConfigMap shop/settings as optional",
    );
    let value = serde_json::to_value(&impact).unwrap();
    assert_eq!(value["summary"]["brokenReferences"], 1);
    assert_eq!(value["brokenReferences"][0]["key"], "LOG_LEVEL");
}

#[test]
fn removing_a_key_nobody_reads_breaks_nothing() {
    let old = config_map_json(
        "shop",
        "settings",
        json!({"LOG_LEVEL": "info", "CACHE_TTL": "30s"}),
    );
    let new = config_map_json("shop", "settings", json!({"LOG_LEVEL": "debug"}));
    let impact = estimate(
        &update(CONFIG_MAPS, "ConfigMap", "shop", "settings", old, new),
        &settings(),
    );
    assert_eq!(impact.summary, Summary::default());
    assert!(impact.broken_references.is_empty());
    noted(
        &impact,
        "ConfigMap shop/settings loses key(s) CACHE_TTL: no running pod requires them",
    );
}

#[test]
fn removing_a_secret_key_mounted_through_items_breaks_the_mount() {
    let cluster = model(vec![
        object(
            "Secret",
            "databases",
            "pg-credentials",
            Spec::Secret {
                keys: Box::new(["password".into(), "username".into()]),
            },
        ),
        reading(
            app_pod("databases", "pg-0", "node-a", "pg"),
            "Secret",
            "pg-credentials",
            Some(&["password", "username"]),
            true,
        ),
    ]);
    let old = secret_json(
        "databases",
        "pg-credentials",
        json!({"username": "cG9zdGdyZXM=", "password": "czNjcjN0LXZhbHVl"}),
    );
    let new = secret_json("databases", "pg-credentials", json!({"username": "cG9zdGdyZXM="}));
    let impact = estimate(
        &update(SECRETS, "Secret", "databases", "pg-credentials", old, new),
        &cluster,
    );
    assert_eq!(
        impact.summary,
        Summary {
            broken_references: 1,
            ..Summary::default()
        }
    );
    let broken = &impact.broken_references[0];
    assert_eq!(
        (broken.pod.as_str(), broken.kind.as_str(), broken.key.as_str()),
        ("pg-0", "Secret", "password")
    );
    let printed = serde_json::to_string(&impact).unwrap();
    assert!(
        !printed.contains("czNjcjN0") && !printed.contains("s3cr3t"),
        "a Secret value leaked: {printed}"
    );
}

// ---- PodDisruptionBudgets -----------------------------------------------------------------

fn three_queue_pods() -> ClusterModel {
    model(
        (0..3)
            .map(|i| app_pod("mq", &format!("rabbit-{i}"), "node-a", "rabbit"))
            .collect(),
    )
}

#[test]
fn a_budget_asking_for_more_pods_than_are_healthy_is_violated_from_the_start() {
    let request = create(
        PDBS,
        "PodDisruptionBudget",
        "mq",
        "rabbit",
        pdb_json("mq", "rabbit", "rabbit", 5),
    );
    let impact = estimate(&request, &three_queue_pods());
    assert_eq!(
        impact.summary,
        Summary {
            pdb_violations: 1,
            ..Summary::default()
        },
        "no pod stops"
    );
    let pdb = &impact.pdbs[0];
    assert_eq!(
        (pdb.name.as_str(), pdb.desired_healthy, pdb.current_healthy),
        ("rabbit", 5, 3)
    );
    assert_eq!((pdb.healthy_after, pdb.violated), (3, true));
    noted(&impact, "wants 5 healthy pod(s) but 3 of 3 are: it is violated");
}

#[test]
fn a_satisfiable_budget_is_not_violated() {
    let request = create(
        PDBS,
        "PodDisruptionBudget",
        "mq",
        "rabbit",
        pdb_json("mq", "rabbit", "rabbit", 2),
    );
    let impact = estimate(&request, &three_queue_pods());
    assert_eq!(impact.summary, Summary::default());
    assert_eq!(
        (impact.pdbs[0].desired_healthy, impact.pdbs[0].violated),
        (2, false)
    );
}

#[test]
fn easing_a_budget_that_was_already_violated_counts_no_violation() {
    let mut cluster = three_queue_pods();
    cluster.insert(pdb_min_available("mq", "rabbit", "rabbit", IntOrPercent::Int(5)));
    let request = update(
        PDBS,
        "PodDisruptionBudget",
        "mq",
        "rabbit",
        pdb_json("mq", "rabbit", "rabbit", 5),
        pdb_json("mq", "rabbit", "rabbit", 4),
    );
    let impact = estimate(&request, &cluster);
    assert_eq!(impact.summary.pdb_violations, 0);
    noted(&impact, "it already was before the change");
}

// ---- CREATE: adoption ---------------------------------------------------------------------

/// Three orphan pods `app=web` (one not ready), one pod `app=web` owned by another ReplicaSet,
/// and a Service selecting `app=web`.
fn orphans() -> ClusterModel {
    let owner = replicaset("shop", "web-old", 1, "web");
    model(vec![
        app_pod("shop", "web-a", "node-a", "web"),
        with_labels(pod("shop", "web-b", "node-a", false), &[("app", "web")]),
        app_pod("shop", "web-c", "node-b", "web"),
        owned_by(app_pod("shop", "web-old-x1", "node-b", "web"), &owner),
        owner,
        service("shop", "web", "web"),
    ])
}

#[test]
fn a_replica_set_adopting_more_orphans_than_its_replicas_deletes_the_excess() {
    let request = create(
        REPLICA_SETS,
        "ReplicaSet",
        "shop",
        "web-1",
        replica_set_json("shop", "web-1", "web", 1),
    );
    let impact = estimate(&request, &orphans());
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 2,
            pods_disrupted: 2,
            ..Summary::default()
        }
    );
    let reason = "adopted and removed by new ReplicaSet web-1";
    assert_eq!(
        stopped(&impact),
        [("web-a", false, reason), ("web-b", false, reason)],
        "the not-ready pod goes first"
    );
    assert_eq!(
        (impact.services[0].ready_before, impact.services[0].ready_after),
        (3, 2)
    );
    noted(
        &impact,
        "new ReplicaSet shop/web-1 adopts 3 pod(s) without a controller (web-a, web-b, web-c) and keeps 1",
    );
}

#[test]
fn a_new_service_only_routes_traffic() {
    let new = service_json("shop", "web-public", json!({"app": "web"}), 80);
    let impact = estimate(
        &create(SERVICES, "Service", "shop", "web-public", new),
        &orphans(),
    );
    assert_eq!(impact.summary, Summary::default());
    noted(
        &impact,
        "new Service shop/web-public starts routing traffic to 3 ready pod(s)",
    );
}

fn stateful_set_json(namespace: &str, name: &str, app: &str, replicas: i64) -> Json {
    json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": metadata(namespace, name, "StatefulSet", json!({})),
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": {"app": app}},
                "spec": {"containers": [{"name": app, "image": "postgres:17"}]},
            },
        },
    })
}

#[test]
fn a_stateful_set_adopts_only_its_members_and_removes_ordinals_beyond_replicas() {
    let cluster = model(vec![
        app_pod("databases", "pg-0", "node-a", "pg"),
        app_pod("databases", "pg-1", "node-a", "pg"),
        app_pod("databases", "pg-2", "node-b", "pg"),
        app_pod("databases", "pg-backup", "node-b", "pg"),
    ]);
    let request = create(
        ("apps", "v1", "statefulsets"),
        "StatefulSet",
        "databases",
        "pg",
        stateful_set_json("databases", "pg", "pg", 2),
    );
    let impact = estimate(&request, &cluster);
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 1,
            pods_disrupted: 1,
            ..Summary::default()
        }
    );
    assert_eq!(
        stopped(&impact),
        [(
            "pg-2",
            false,
            "adopted and removed by new StatefulSet pg (ordinal 2 ≥ replicas 2)"
        )]
    );
    noted(
        &impact,
        "pods pg-backup match the selector of new StatefulSet databases/pg but are not named pg-<ordinal>",
    );
}

#[test]
fn a_deployment_adopts_no_orphan_pod() {
    let new = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata("shop", "web", "Deployment", json!({})),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}},
        },
    });
    let impact = estimate(
        &create(("apps", "v1", "deployments"), "Deployment", "shop", "web", new),
        &orphans(),
    );
    assert_eq!(impact.summary, Summary::default());
    noted(
        &impact,
        "pods web-a, web-b, web-c match the selector of new Deployment shop/web but are not adopted",
    );
}

// ---- finalizers removed, reclaim policies changed --------------------------------------------

fn held_config_map(deleting: bool, finalizers: Json) -> Json {
    let mut extra = json!({"finalizers": finalizers});
    if deleting {
        extra["deletionTimestamp"] = json!("2025-03-02T10:00:00Z");
    }
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": metadata("shop", "held", "ConfigMap", extra), "data": {"mode": "fast"}})
}

fn held_and_part() -> ClusterModel {
    let mut held = object(
        "ConfigMap",
        "shop",
        "held",
        Spec::ConfigMap { keys: Box::default() },
    );
    held.uid = Some(uid("ConfigMap", "held").to_string().into());
    held.deletion_timestamp = policies_cel::cluster::object::deletion_timestamp("2026-11-25T10:00:00Z");
    let part = owned_by(
        object(
            "ConfigMap",
            "shop",
            "held-part",
            Spec::ConfigMap { keys: Box::default() },
        ),
        &held,
    );
    model(vec![held, part])
}

#[test]
fn removing_the_last_finalizer_of_an_object_being_deleted_deletes_it_with_its_dependents() {
    let request = update(
        CONFIG_MAPS,
        "ConfigMap",
        "shop",
        "held",
        held_config_map(true, json!(["e2e.suture.dev/hold"])),
        held_config_map(true, json!([])),
    );
    let impact = estimate(&request, &held_and_part());
    let mut deleted: Vec<String> = impact.deleted.iter().map(|d| d.object.display()).collect();
    deleted.sort();
    assert_eq!(deleted, ["ConfigMap shop/held", "ConfigMap shop/held-part"]);
    noted(&impact, "its last finalizer");
}

#[test]
fn the_orphan_finalizer_keeps_the_dependents_of_the_completed_deletion() {
    let request = update(
        CONFIG_MAPS,
        "ConfigMap",
        "shop",
        "held",
        held_config_map(true, json!(["orphan", "e2e.suture.dev/hold"])),
        held_config_map(true, json!(null)),
    );
    let impact = estimate(&request, &held_and_part());
    assert_eq!(impact.summary.deleted, 1);
}

#[test]
fn removing_a_finalizer_from_an_object_not_being_deleted_deletes_nothing() {
    let request = update(
        CONFIG_MAPS,
        "ConfigMap",
        "shop",
        "held",
        held_config_map(false, json!(["e2e.suture.dev/hold"])),
        held_config_map(false, json!([])),
    );
    assert_eq!(estimate(&request, &held_and_part()).summary, Summary::default());
}

#[test]
fn removing_one_of_two_finalizers_deletes_nothing_yet() {
    let request = update(
        CONFIG_MAPS,
        "ConfigMap",
        "shop",
        "held",
        held_config_map(true, json!(["a.example/x", "b.example/y"])),
        held_config_map(true, json!(["b.example/y"])),
    );
    assert_eq!(estimate(&request, &held_and_part()).summary, Summary::default());
}

fn volume_json(policy: &str, claim: Option<&str>) -> Json {
    let mut spec = json!({"persistentVolumeReclaimPolicy": policy, "capacity": {"storage": "1Gi"}});
    if let Some(claim) = claim {
        spec["claimRef"] = json!({"kind": "PersistentVolumeClaim", "namespace": "shop", "name": claim});
    }
    json!({"apiVersion": "v1", "kind": "PersistentVolume",
           "metadata": metadata("", "vol", "PersistentVolume", json!({})), "spec": spec})
}

fn reclaim_to_delete(claim: Option<&str>, model: &ClusterModel) -> Impact {
    let request = update(
        ("", "v1", "persistentvolumes"),
        "PersistentVolume",
        "",
        "vol",
        volume_json("Retain", claim),
        volume_json("Delete", claim),
    );
    estimate(&request, model)
}

#[test]
fn retain_to_delete_on_a_released_volume_deletes_it_and_its_data() {
    let cluster = model(vec![pv("vol", "shop", "gone", false)]);
    let impact = reclaim_to_delete(Some("gone"), &cluster);
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 1,
            data_loss: 1,
            ..Summary::default()
        }
    );
    let volume = &impact.volumes[0];
    assert!(volume.released && !volume.scheduled, "{volume:?}");
    assert_eq!(volume.claim, "gone");
}

#[test]
fn retain_to_delete_on_a_bound_volume_schedules_the_loss_for_when_its_claim_goes() {
    let cluster = model(vec![
        pv("vol", "shop", "data", false),
        pvc("shop", "data", "vol"),
        pod_with_claims("shop", "db-0", "node-a", &["data"]),
    ]);
    let impact = reclaim_to_delete(Some("data"), &cluster);
    // Nothing is deleted now; the data is counted as loss scheduled (DESIGN.md's dataLoss).
    assert_eq!(
        impact.summary,
        Summary {
            data_loss: 1,
            ..Summary::default()
        }
    );
    let volume = &impact.volumes[0];
    assert!(volume.scheduled && !volume.released, "{volume:?}");
    assert_eq!(volume.in_use_by, ["db-0"]);
    assert!(
        volume.reason.contains("when that claim is deleted"),
        "{}",
        volume.reason
    );
}

#[test]
fn delete_to_delete_or_retain_to_retain_changes_nothing() {
    let cluster = model(vec![pv("vol", "shop", "gone", false)]);
    let request = update(
        ("", "v1", "persistentvolumes"),
        "PersistentVolume",
        "",
        "vol",
        volume_json("Delete", Some("gone")),
        volume_json("Delete", Some("gone")),
    );
    assert_eq!(estimate(&request, &cluster).summary, Summary::default());
}

#[test]
fn retain_to_delete_on_a_volume_never_bound_loses_nothing() {
    let mut volume = pv("vol", "shop", "x", false);
    volume.spec = Spec::PersistentVolume {
        reclaim_delete: false,
        claim: None,
        node: None,
    };
    let impact = reclaim_to_delete(None, &model(vec![volume]));
    assert_eq!(impact.summary, Summary::default());
}

// ---- pod labels ----------------------------------------------------------------------------

fn pod_json(name: &str, labels: Json) -> Json {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": metadata("shop", name, "Pod", json!({"labels": labels})),
           "spec": {"nodeName": "node-b", "containers": [{"name": "app", "image": "nginx"}]}})
}

fn relabel(name: &str, old: Json, new: Json, cluster: &ClusterModel) -> Impact {
    let request = update(
        ("", "v1", "pods"),
        "Pod",
        "shop",
        name,
        pod_json(name, old),
        pod_json(name, new),
    );
    estimate(&request, cluster)
}

/// Service `shop/solo` over one ready pod, with a budget of minAvailable 1 over it.
fn solo() -> ClusterModel {
    let service = object(
        "Service",
        "shop",
        "solo",
        Spec::Service {
            selector: Some(labels(&[("app", "solo")])),
            external: Box::default(),
            ports: Box::default(),
        },
    );
    let pod = with_labels(pod("shop", "solo", "node-b", true), &[("app", "solo")]);
    model(vec![
        service,
        pod,
        pdb_min_available("shop", "solo", "solo", IntOrPercent::Int(1)),
    ])
}

#[test]
fn a_label_change_that_takes_the_only_pod_out_of_its_service_leaves_it_dark() {
    let impact = relabel("solo", json!({"app": "solo"}), json!({"app": "debug"}), &solo());
    assert_eq!(
        impact.summary,
        Summary {
            services_without_endpoints: 1,
            pdb_violations: 1,
            ..Summary::default()
        }
    );
    assert_eq!(
        (impact.services[0].ready_before, impact.services[0].ready_after),
        (1, 0)
    );
    noted(&impact, "leaves the endpoints of Service shop/solo");
}

#[test]
fn a_label_change_that_keeps_the_pod_behind_its_service_harms_nothing() {
    let impact = relabel(
        "solo",
        json!({"app": "solo"}),
        json!({"app": "solo", "inspected": "true"}),
        &solo(),
    );
    assert_eq!(impact.summary, Summary::default());
    assert!(impact.services.is_empty() && impact.pdbs.is_empty());
}

#[test]
fn one_pod_of_several_leaving_a_service_leaves_it_serving() {
    let impact = relabel(
        "web-0",
        json!({"app": "web", "track": "stable"}),
        json!({"app": "web", "track": "debug"}),
        &shop(),
    );
    assert_eq!(impact.summary, Summary::default());
    assert_eq!(
        (impact.services[0].ready_before, impact.services[0].ready_after),
        (3, 2)
    );
}

// ---- node labels against DaemonSet placement -------------------------------------------------

fn labelled_node_json(labels: Json) -> Json {
    json!({"apiVersion": "v1", "kind": "Node",
           "metadata": metadata("", "gpu-1", "Node", json!({"labels": labels})), "spec": {}})
}

/// Node gpu-1 labelled `agent=yes`, running a DaemonSet pod placed by that label and a
/// ReplicaSet's pod that selects the node the same way (IgnoredDuringExecution).
fn agent_node() -> ClusterModel {
    let mut gpu = node("gpu-1");
    gpu.labels = labels(&[("agent", "yes")]);
    let mut ds = daemonset("monitoring", "agent", "agent");
    if let Spec::DaemonSet { placement, .. } = &mut ds.spec {
        *placement = vec![policies_cel::cluster::object::Selector {
            match_labels: labels(&[("agent", "yes")]),
            expressions: Box::default(),
        }]
        .into();
    }
    let rs = replicaset("shop", "api-5c8d", 1, "api");
    model(vec![
        gpu,
        owned_by(app_pod("monitoring", "agent-x7k2p", "gpu-1", "agent"), &ds),
        owned_by(app_pod("shop", "api-5c8d-q9w", "gpu-1", "api"), &rs),
        ds,
        rs,
    ])
}

fn relabel_node(old: Json, new: Json) -> Impact {
    let request = update(
        ("", "v1", "nodes"),
        "Node",
        "",
        "gpu-1",
        labelled_node_json(old),
        labelled_node_json(new),
    );
    estimate(&request, &agent_node())
}

#[test]
fn a_node_label_a_daemonset_selects_on_removed_deletes_its_pod_there_only() {
    let impact = relabel_node(json!({"agent": "yes"}), json!({"agent": "no"}));
    assert_eq!(
        stopped(&impact),
        [(
            "agent-x7k2p",
            false,
            "Node gpu-1's new labels no longer fit DaemonSet monitoring/agent's node selection: its pod there is deleted"
        )]
    );
    assert_eq!(impact.summary.deleted, 1);
    assert_eq!(impact.summary.workloads_down, 1);
}

#[test]
fn a_node_label_no_daemonset_reads_stops_nothing() {
    let impact = relabel_node(json!({"agent": "yes"}), json!({"agent": "yes", "rack": "r7"}));
    assert_eq!(impact.summary, Summary::default());
}

// ---- what the estimate does not model says so ------------------------------------------------

#[test]
fn an_update_no_rule_covers_is_marked_unmodelled_and_a_modelled_one_is_not() {
    let cron = |schedule: &str| {
        json!({"apiVersion": "batch/v1", "kind": "CronJob",
               "metadata": metadata("shop", "nightly", "CronJob", json!({})),
               "spec": {"schedule": schedule, "jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}}})
    };
    let request = update(
        ("batch", "v1", "cronjobs"),
        "CronJob",
        "shop",
        "nightly",
        cron("0 3 * * *"),
        cron("*/1 * * * *"),
    );
    let impact = estimate(&request, &shop());
    assert!(!impact.modelled);
    assert_eq!(impact.summary, Summary::default());
    noted(&impact, "impact.modelled is false");

    let old = service_json("shop", "web", json!({"app": "web", "track": "stable"}), 80);
    let new = service_json("shop", "web", json!({"app": "web", "track": "stable"}), 8080);
    assert!(estimate(&update(SERVICES, "Service", "shop", "web", old, new), &shop()).modelled);
}

// ---- a Node's local volumes ----------------------------------------------------------------

fn local_volume(name: &str, claim: Option<&str>, node: &str) -> Object {
    object(
        "PersistentVolume",
        "",
        name,
        Spec::PersistentVolume {
            reclaim_delete: false,
            claim: claim.map(|c| (Text::from("db"), Text::from(c))),
            node: Some(node.into()),
        },
    )
}

#[test]
fn deleting_a_node_loses_the_bound_local_volumes_pinned_to_it() {
    let cluster = model(vec![
        with_labels(
            node("storage-1"),
            &[("kubernetes.io/hostname", "storage-1.internal")],
        ),
        node("storage-2"),
        // Pinned by hostname label value, by node name, to another node, and never bound.
        local_volume("local-a", Some("data-a"), "storage-1.internal"),
        local_volume("local-b", Some("data-b"), "storage-1"),
        local_volume("local-c", Some("data-c"), "storage-2"),
        local_volume("local-free", None, "storage-1"),
        pvc("db", "data-a", "local-a"),
        pvc("db", "data-b", "local-b"),
        pvc("db", "data-c", "local-c"),
        pod_with_claims("db", "db-0", "storage-1", &["data-a"]),
    ]);
    let impact = estimate(
        &delete(("", "v1", "nodes"), "Node", "", "storage-1", None),
        &cluster,
    );
    let mut lost: Vec<(&str, &[String])> = impact
        .volumes
        .iter()
        .map(|v| (v.claim.as_str(), &v.in_use_by[..]))
        .collect();
    lost.sort();
    assert_eq!(lost, [("data-a", &["db-0".to_owned()][..]), ("data-b", &[][..])]);
    assert!(
        impact
            .volumes
            .iter()
            .all(|v| v.reason.contains("lives on deleted Node storage-1")),
        "{:?}",
        impact.volumes
    );
    assert_eq!(impact.summary.data_loss, 2);
    assert_eq!(impact.summary.pods_disrupted, 1);
}

#[test]
fn deleting_a_node_without_local_volumes_loses_no_data() {
    let cluster = model(vec![
        node("pool-1"),
        pv("zonal", "db", "data", true),
        pvc("db", "data", "zonal"),
        pod_with_claims("db", "db-0", "pool-1", &["data"]),
    ]);
    let impact = estimate(&delete(("", "v1", "nodes"), "Node", "", "pool-1", None), &cluster);
    assert_eq!(impact.summary.data_loss, 0);
    assert_eq!(impact.summary.pods_disrupted, 1);
}
