//! UPDATEs of a v1 Endpoints and of an EndpointSlice: the ready endpoints the Service keeps.

use crate::support;

use policies_cel::cluster::{ClusterModel, project};
use policies_cel::impact::{Impact, estimate};
use serde_json::{Value, json};
use support::cluster::review;

fn model(objects: &[Value]) -> ClusterModel {
    let mut model = ClusterModel::new();
    for json in objects {
        let object = project(json, &mut model).unwrap_or_else(|e| panic!("{e}"));
        model.insert(object);
    }
    model
}

fn service(name: &str, selector: Option<Value>) -> Value {
    let mut spec = json!({"ports": [{"name": "pg", "port": 5432}]});
    if let Some(selector) = selector {
        spec["selector"] = selector;
    }
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "db", "uid": format!("svc-{name}")}, "spec": spec})
}

fn slice(name: &str, service: &str, manager: &str, ready: &[bool]) -> Value {
    let endpoints: Vec<Value> = ready
        .iter()
        .enumerate()
        .map(|(i, ready)| json!({"addresses": [format!("10.0.0.{}", i + 1)], "conditions": {"ready": ready}}))
        .collect();
    json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": name, "namespace": "db", "uid": format!("slice-{name}"),
            "labels": {"kubernetes.io/service-name": service, "endpointslice.kubernetes.io/managed-by": manager}},
        "addressType": "IPv4", "endpoints": endpoints})
}

fn endpoints(name: &str, ready: &[&str], labels: Value) -> Value {
    let addresses: Vec<Value> = ready.iter().map(|ip| json!({"ip": ip})).collect();
    json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name, "namespace": "db", "labels": labels},
        "subsets": [{"addresses": addresses, "notReadyAddresses": [{"ip": "10.0.9.9"}], "ports": [{"name": "pg", "port": 5432}]}]})
}

fn update(resource: (&str, &str, &str), kind: &str, old: Value, new: Value) -> policies_cel::Request {
    let name = old["metadata"]["name"].as_str().unwrap_or_default().to_owned();
    review(
        "UPDATE",
        resource,
        kind,
        "db",
        &name,
        json!({"oldObject": old, "object": new}),
    )
}

fn update_endpoints(old: Value, new: Value) -> policies_cel::Request {
    update(("", "v1", "endpoints"), "Endpoints", old, new)
}

fn update_slice(old: Value, new: Value) -> policies_cel::Request {
    update(
        ("discovery.k8s.io", "v1", "endpointslices"),
        "EndpointSlice",
        old,
        new,
    )
}

/// (readyBefore, readyAfter) of the Service, and whether it counts as left without endpoints.
fn leader(impact: &Impact) -> (usize, usize, usize) {
    let s = impact
        .services
        .iter()
        .find(|s| s.name == "leader")
        .unwrap_or_else(|| panic!("no effect on Service leader: {impact:?}"));
    (
        s.ready_before,
        s.ready_after,
        impact.summary.services_without_endpoints,
    )
}

const MIRRORING: &str = "endpointslicemirroring-controller.k8s.io";

#[test]
fn the_endpoints_of_a_selectorless_service_decide_its_mirrored_endpoints() {
    // Two mirrored addresses and a hand-made slice with one more.
    let cluster = model(&[
        service("leader", None),
        slice("leader-m", "leader", MIRRORING, &[true, true]),
        slice("leader-extra", "leader", "operator.example.com", &[true]),
    ]);
    let old = endpoints("leader", &["10.0.0.1", "10.0.0.2"], json!({}));

    // Emptied: the controller deletes the slice it mirrored; the hand-made slice's endpoint
    // stays.
    let impact = estimate(
        &update_endpoints(old.clone(), endpoints("leader", &[], json!({}))),
        &cluster,
    );
    assert_eq!(leader(&impact), (3, 1, 0));
    let deleted: Vec<&str> = impact.deleted.iter().map(|d| d.object.name.as_str()).collect();
    assert_eq!(deleted, ["leader-m"]);
    assert!(impact.modelled);
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("2 ready addresses before, 0 after")),
        "{:?}",
        impact.notes
    );

    // Moved to another address (a failover): nothing lost. An invalid IP is not mirrored, and
    // a duplicate address counts once.
    let moved = endpoints(
        "leader",
        &["10.0.0.7", "10.0.0.8", "10.0.0.8", "not-an-ip"],
        json!({}),
    );
    let impact = estimate(&update_endpoints(old.clone(), moved), &cluster);
    assert_eq!(leader(&impact), (3, 3, 0));
    assert!(impact.deleted.is_empty(), "{:?}", impact.deleted);

    // Labelled skip-mirror: the controller deletes what it mirrored.
    let skipped = endpoints(
        "leader",
        &["10.0.0.1", "10.0.0.2"],
        json!({"endpointslice.kubernetes.io/skip-mirror": "true"}),
    );
    let impact = estimate(&update_endpoints(old, skipped), &cluster);
    assert_eq!(leader(&impact), (3, 1, 0));
    assert!(
        impact.deleted[0].reason.contains("keeps from mirroring"),
        "{:?}",
        impact.deleted
    );
}

#[test]
fn emptying_the_only_endpoints_leaves_the_service_without_any() {
    let cluster = model(&[
        service("leader", None),
        slice("leader-m", "leader", MIRRORING, &[true]),
    ]);
    let old = endpoints("leader", &["10.0.0.1"], json!({}));
    let impact = estimate(
        &update_endpoints(old, endpoints("leader", &[], json!({}))),
        &cluster,
    );
    assert_eq!(leader(&impact), (1, 0, 1));
}

#[test]
fn the_endpoints_of_a_service_with_a_selector_change_nothing() {
    let cluster = model(&[
        service("leader", Some(json!({"app": "pg"}))),
        slice("leader-a", "leader", "endpointslice-controller.k8s.io", &[true]),
    ]);
    let old = endpoints("leader", &["10.0.0.1"], json!({}));
    let impact = estimate(
        &update_endpoints(old, endpoints("leader", &[], json!({}))),
        &cluster,
    );
    assert!(impact.services.is_empty(), "{:?}", impact.services);
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("the endpoints controller's")),
        "{:?}",
        impact.notes
    );
}

#[test]
fn a_leader_election_lock_is_not_mirrored() {
    let cluster = model(&[service("leader", None)]);
    let lock = |ips: &[&str]| {
        let mut e = endpoints("leader", ips, json!({}));
        e["metadata"]["annotations"] =
            json!({"control-plane.alpha.kubernetes.io/leader": "{\"holderIdentity\":\"a\"}"});
        e
    };
    let impact = estimate(&update_endpoints(lock(&["10.0.0.1"]), lock(&[])), &cluster);
    assert!(impact.services.is_empty(), "{:?}", impact.services);
}

#[test]
fn an_endpointslice_update_keeps_the_other_slices_endpoints() {
    let cluster = model(&[
        service("leader", None),
        slice("leader-a", "leader", "operator.example.com", &[true, true]),
        slice("leader-b", "leader", "operator.example.com", &[true]),
    ]);
    let old = slice("leader-a", "leader", "operator.example.com", &[true, true]);
    // One endpoint no longer ready: 3 → 2.
    let impact = estimate(
        &update_slice(
            old.clone(),
            slice("leader-a", "leader", "operator.example.com", &[true, false]),
        ),
        &cluster,
    );
    assert_eq!(leader(&impact), (3, 2, 0));
    assert!(
        impact.notes.iter().any(|n| n.contains("stay gone")),
        "{:?}",
        impact.notes
    );
    // Emptied: the other slice's endpoint stays.
    let impact = estimate(
        &update_slice(old, slice("leader-a", "leader", "operator.example.com", &[])),
        &cluster,
    );
    assert_eq!(leader(&impact), (3, 1, 0));
}

#[test]
fn a_controller_managed_slice_is_written_back_but_the_moment_counts() {
    let cluster = model(&[
        service("leader", Some(json!({"app": "pg"}))),
        slice("leader-a", "leader", "endpointslice-controller.k8s.io", &[true]),
    ]);
    let old = slice("leader-a", "leader", "endpointslice-controller.k8s.io", &[true]);
    let new = slice("leader-a", "leader", "endpointslice-controller.k8s.io", &[false]);
    let impact = estimate(&update_slice(old, new), &cluster);
    assert_eq!(leader(&impact), (1, 0, 1));
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("writes the ready pods back")),
        "{:?}",
        impact.notes
    );
}

#[test]
fn without_an_old_object_the_mirrored_slices_say_what_the_service_has() {
    // A what-if brings the new Endpoints only: the mirrored slice is what the Service has now.
    let cluster = model(&[
        service("leader", None),
        slice("leader-m", "leader", MIRRORING, &[true, true]),
    ]);
    let request = review(
        "UPDATE",
        ("", "v1", "endpoints"),
        "Endpoints",
        "db",
        "leader",
        json!({"object": endpoints("leader", &[], json!({}))}),
    );
    let impact = estimate(&request, &cluster);
    assert_eq!(leader(&impact), (2, 0, 1));
}

#[test]
fn a_slice_moved_to_another_service_takes_its_endpoints_along() {
    let cluster = model(&[
        service("leader", None),
        service("standby", None),
        slice("leader-a", "leader", "operator.example.com", &[true]),
    ]);
    let old = slice("leader-a", "leader", "operator.example.com", &[true]);
    let moved = slice("leader-a", "standby", "operator.example.com", &[true]);
    let impact = estimate(&update_slice(old, moved), &cluster);
    assert_eq!(leader(&impact), (1, 0, 1));
    let standby = impact.services.iter().find(|s| s.name == "standby");
    assert_eq!(standby.map(|s| (s.ready_before, s.ready_after)), Some((0, 1)));
}
