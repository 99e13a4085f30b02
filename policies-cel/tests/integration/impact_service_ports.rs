//! Service ports left without endpoints while their pods stay ready (`services[].unservedPorts`):
//! a Service UPDATE pointing a port at a container port name its pods do not declare, and a
//! rollout whose new template renames the port or leaves the Service's selector.

use crate::support;

use policies_cel::cluster::ClusterModel;
use policies_cel::cluster::snapshot::SnapshotLoader;
use policies_cel::impact::{Impact, estimate};
use serde_json::{Value, json};
use support::cluster::review;

/// Container `app` declaring `ports` (`[name, number]`, TCP).
fn pod_spec(ports: &[(&str, i64)]) -> Value {
    let ports: Vec<Value> = ports
        .iter()
        .map(|(name, number)| json!({"name": name, "containerPort": number}))
        .collect();
    json!({"containers": [{"name": "app", "image": "app:2", "ports": ports}]})
}

fn deployment(name: &str, labels: Value, spec: Value, extra: Value) -> Value {
    let mut deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop", "uid": format!("uid-{name}")},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {"metadata": {"labels": labels}, "spec": spec}}});
    if let (Some(target), Some(extra)) = (deployment["spec"].as_object_mut(), extra.as_object()) {
        target.extend(extra.clone());
    }
    deployment
}

/// Ready pods `{workload}-0..count` of ReplicaSet `{workload}-rs`, labelled `app: {workload}`
/// plus `tier: front`.
fn pods(workload: &str, count: usize, spec: &Value) -> Vec<Value> {
    let mut out = vec![json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": format!("{workload}-rs"), "namespace": "shop", "uid": format!("uid-{workload}-rs"),
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": workload,
                "uid": format!("uid-{workload}"), "controller": true}]},
        "spec": {"replicas": count, "selector": {"matchLabels": {"app": workload}}}})];
    for i in 0..count {
        let mut spec = spec.clone();
        spec["nodeName"] = json!("node-a");
        out.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("{workload}-{i}"), "namespace": "shop", "uid": format!("uid-{workload}-{i}"),
                "labels": {"app": workload, "tier": "front"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{workload}-rs"),
                    "uid": format!("uid-{workload}-rs"), "controller": true}]},
            "spec": spec,
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}));
    }
    out
}

fn service(name: &str, selector: Value, ports: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "namespace": "shop", "uid": format!("uid-svc-{name}")},
        "spec": {"selector": selector, "ports": ports}})
}

fn model(objects: Vec<Value>) -> ClusterModel {
    let mut loader = SnapshotLoader::new();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    loader.add_str("cluster.json", &list.to_string());
    loader.finish().unwrap_or_else(|e| panic!("{e}"))
}

/// The web Deployment as the shop's cluster holds it (pods declaring `http` and `metrics`).
fn current_web() -> Value {
    deployment(
        "web",
        json!({"app": "web", "tier": "front"}),
        pod_spec(&[("http", 8080), ("metrics", 9090)]),
        json!({}),
    )
}

/// The web Deployment (2 pods declaring `http` 8080 and `metrics` 9090), the `web` Service
/// targeting `http` by name and the `web-metrics` Service targeting 9090 by number.
fn shop(extra: Vec<Value>) -> ClusterModel {
    let spec = pod_spec(&[("http", 8080), ("metrics", 9090)]);
    let mut objects = vec![
        current_web(),
        service(
            "web",
            json!({"app": "web"}),
            json!([{"name": "http", "port": 80, "targetPort": "http"}]),
        ),
        service(
            "web-metrics",
            json!({"app": "web"}),
            json!([{"name": "metrics", "port": 9090, "targetPort": 9090}]),
        ),
    ];
    objects.extend(pods("web", 2, &spec));
    objects.extend(extra);
    model(objects)
}

fn update_service(old: Value, new: Value) -> policies_cel::Request {
    let name = new["metadata"]["name"].as_str().unwrap_or_default().to_owned();
    review(
        "UPDATE",
        ("", "v1", "services"),
        "Service",
        "shop",
        &name,
        json!({"object": new, "oldObject": old}),
    )
}

fn roll(old: Value, new: Value) -> policies_cel::Request {
    review(
        "UPDATE",
        ("apps", "v1", "deployments"),
        "Deployment",
        "shop",
        "web",
        json!({"object": new, "oldObject": old}),
    )
}

/// `(service, readyBefore, readyAfter, unservedPorts)` of every Service entry.
fn services(impact: &Impact) -> Vec<(&str, usize, usize, Vec<&str>)> {
    let mut out: Vec<_> = impact
        .services
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.ready_before,
                s.ready_after,
                s.unserved_ports.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    out.sort();
    out
}

/// No Service loses its endpoints (the entries are shown otherwise).
fn assert_every_port_served(impact: &Impact) {
    assert_eq!(
        impact.summary.services_without_endpoints, 0,
        "{:?}",
        impact.services
    );
}

fn web_service(target: Value, protocol: &str) -> Value {
    service(
        "web",
        json!({"app": "web"}),
        json!([{"name": "http", "port": 80, "targetPort": target, "protocol": protocol}]),
    )
}

#[test]
fn a_service_pointed_at_a_port_name_its_pods_do_not_declare_is_left_without_endpoints() {
    let cluster = shop(vec![]);
    let old = web_service(json!("http"), "TCP");
    for new in [
        web_service(json!("web"), "TCP"),
        web_service(json!("http"), "UDP"),
    ] {
        let impact = estimate(&update_service(old.clone(), new), &cluster);
        assert_eq!(services(&impact), vec![("web", 2, 0, vec!["http"])]);
        assert_eq!(impact.summary.services_without_endpoints, 1);
        assert_eq!(impact.summary.pods_disrupted, 0, "the pods stay ready");
        assert!(
            impact.notes.iter().any(|n| n.contains(
                "port http of Service shop/web would be served by no ready pod (no ready pod it selects declares the container port"
            )),
            "{:?}",
            impact.notes
        );
    }
    // A name the pods declare, or a number (always served): nothing is lost.
    for new in [
        web_service(json!("metrics"), "TCP"),
        web_service(json!(8081), "TCP"),
    ] {
        let impact = estimate(&update_service(old.clone(), new), &cluster);
        assert_every_port_served(&impact);
    }
}

#[test]
fn a_port_that_served_nothing_before_is_not_made_worse() {
    // The Service already targets a name no pod declares: its port had no endpoints to lose.
    let cluster = shop(vec![]);
    let old = web_service(json!("gone"), "TCP");
    let impact = estimate(&update_service(old, web_service(json!("other"), "TCP")), &cluster);
    assert_every_port_served(&impact);
    // A new port with no clients yet.
    let old = web_service(json!("http"), "TCP");
    let mut new = old.clone();
    new["spec"]["ports"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "admin", "port": 81, "targetPort": "admin"}));
    let impact = estimate(&update_service(old, new), &cluster);
    assert_every_port_served(&impact);
}

#[test]
fn a_rollout_renaming_the_targeted_container_port_leaves_the_service_without_endpoints() {
    let cluster = shop(vec![]);
    let labels = json!({"app": "web", "tier": "front"});
    let old = current_web();
    let renamed = deployment(
        "web",
        labels.clone(),
        pod_spec(&[("web", 8080), ("metrics", 9090)]),
        json!({}),
    );
    let impact = estimate(&roll(old.clone(), renamed.clone()), &cluster);
    // `web` targets the name; `web-metrics` a number, served whatever the names.
    assert_eq!(
        services(&impact),
        vec![("web", 2, 0, vec!["http"]), ("web-metrics", 2, 2, vec![])]
    );
    assert!(
        impact.notes.iter().any(|n| n.contains(
            "port http of Service shop/web would be served by no ready pod (the new pod template of Deployment shop/web declares no container port http/TCP)"
        )),
        "{:?}",
        impact.notes
    );
    // A sidecar (restartable init container) declaring it serves it.
    let mut sidecar = renamed.clone();
    sidecar["spec"]["template"]["spec"]["initContainers"] = json!([{"name": "proxy", "image": "proxy:1",
        "restartPolicy": "Always", "ports": [{"name": "http", "containerPort": 15001}]}]);
    let impact = estimate(&roll(old.clone(), sidecar), &cluster);
    assert_every_port_served(&impact);
    // A paused Deployment rolls nothing out now.
    let mut paused = renamed;
    paused["spec"]["paused"] = json!(true);
    let impact = estimate(&roll(old, paused), &cluster);
    assert_every_port_served(&impact);
}

#[test]
fn pods_a_scale_down_removes_in_the_same_request_do_not_keep_the_port_served() {
    // 2 → 1 with the port renamed: one old pod goes, the other is replaced; neither serves after.
    let cluster = shop(vec![]);
    let labels = json!({"app": "web", "tier": "front"});
    let old = current_web();
    let renamed = deployment("web", labels, pod_spec(&[("web", 8080)]), json!({"replicas": 1}));
    let impact = estimate(&roll(old, renamed), &cluster);
    assert_eq!(
        services(&impact).into_iter().find(|(name, ..)| *name == "web"),
        Some(("web", 2, 0, vec!["http"]))
    );
}

#[test]
fn a_rollout_whose_labels_leave_the_selector_leaves_the_service_without_endpoints() {
    let cluster = shop(vec![]);
    let spec = pod_spec(&[("http", 8080), ("metrics", 9090)]);
    let old = deployment(
        "web",
        json!({"app": "web", "tier": "front"}),
        spec.clone(),
        json!({}),
    );
    // A Service selecting the pods by `tier: front`, which the new template changes.
    let new = deployment("web", json!({"app": "web", "tier": "back"}), spec, json!({}));
    let front = model({
        let mut objects = vec![
            old.clone(),
            service(
                "front",
                json!({"tier": "front"}),
                json!([{"name": "http", "port": 80, "targetPort": 8080}]),
            ),
        ];
        objects.extend(pods("web", 2, &pod_spec(&[("http", 8080)])));
        objects
    });
    let impact = estimate(&roll(old.clone(), new.clone()), &front);
    assert_eq!(services(&impact), vec![("front", 2, 0, vec!["http"])]);
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("carries labels its selector does not match")),
        "{:?}",
        impact.notes
    );
    // The shop's Services select `app: web`, which the new template keeps.
    let impact = estimate(&roll(old, new), &cluster);
    assert_every_port_served(&impact);
}

#[test]
fn pods_of_another_workload_that_serve_the_port_keep_it_served() {
    // A canary Deployment behind the same Service still declares `http`.
    let canary_spec = pod_spec(&[("http", 8080)]);
    let mut canary = pods("canary", 1, &canary_spec);
    for object in &mut canary {
        if object["kind"] == "Pod" {
            object["metadata"]["labels"]["app"] = json!("web");
            object["metadata"]["labels"]["track"] = json!("canary");
        }
    }
    let cluster = shop(canary);
    let labels = json!({"app": "web", "tier": "front"});
    let old = current_web();
    let renamed = deployment("web", labels, pod_spec(&[("web", 8080)]), json!({}));
    let impact = estimate(&roll(old, renamed), &cluster);
    assert_every_port_served(&impact);
}
