//! Load balancers torn down with their external addresses (`impact.releasedAddresses`): a
//! `type: LoadBalancer` Service deleted (by the request or its cascade) or changed to another
//! type, in the `edge` scene (a public IP and an internal cloud hostname).

use crate::support;

use policies_cel::cluster::ClusterModel;
use policies_cel::cluster::snapshot::SnapshotLoader;
use policies_cel::impact::{Impact, estimate};
use serde_json::{Value as Json, json};
use support::cluster::*;

fn edge() -> ClusterModel {
    let mut loader = SnapshotLoader::new();
    loader.add_str(
        "edge.yaml",
        include_str!("../../../testdata/clusters/edge/snapshot.yaml"),
    );
    loader.finish().unwrap_or_else(|e| panic!("{e}"))
}

fn released(impact: &Impact) -> Vec<(String, Vec<String>)> {
    impact
        .released_addresses
        .iter()
        .map(|r| (r.service.clone(), r.addresses.clone()))
        .collect()
}

fn service(kind: &str, with_status: bool) -> Json {
    let mut service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "edge-proxy", "namespace": "ingress"},
        "spec": {"type": kind, "selector": {"app.kubernetes.io/name": "edge-proxy"}, "ports": [{"port": 443}]}});
    if with_status {
        service["status"] = json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.10"}]}});
    }
    service
}

fn update_to(kind: &str) -> policies_cel::Request {
    review(
        "UPDATE",
        ("", "v1", "services"),
        "Service",
        "ingress",
        "edge-proxy",
        json!({"oldObject": service("LoadBalancer", true), "object": service(kind, kind == "LoadBalancer")}),
    )
}

#[test]
fn deleting_a_load_balancer_releases_its_addresses() {
    let model = edge();
    let direct = delete(("", "v1", "services"), "Service", "ingress", "edge-proxy", None);
    assert_eq!(
        released(&estimate(&direct, &model)),
        vec![("edge-proxy".to_owned(), vec!["203.0.113.10".to_owned()])]
    );
    // Through a cascade: the Namespace takes both load balancers, not the ClusterIP Service.
    let namespace = delete(("", "v1", "namespaces"), "Namespace", "", "ingress", None);
    let impact = estimate(&namespace, &model);
    let mut services: Vec<String> = released(&impact).into_iter().map(|(s, _)| s).collect();
    services.sort();
    assert_eq!(services, ["edge-internal", "edge-proxy"]);
    // A Service that is no load balancer has no address to lose.
    let plain = delete(("", "v1", "services"), "Service", "ingress", "edge-metrics", None);
    assert!(estimate(&plain, &model).released_addresses.is_empty());
}

#[test]
fn a_load_balancer_changed_to_another_type_is_torn_down() {
    let model = edge();
    for kind in ["ClusterIP", "NodePort"] {
        let impact = estimate(&update_to(kind), &model);
        assert_eq!(released(&impact).len(), 1, "{kind}");
        assert!(
            impact.released_addresses[0]
                .reason
                .contains(&format!("changed to type {kind}")),
            "{:?}",
            impact.released_addresses
        );
        // Its endpoints stay: only the address goes.
        assert_eq!(impact.summary.services_without_endpoints, 0, "{kind}");
    }
    // Still a load balancer (a new port): nothing is released.
    assert!(
        estimate(&update_to("LoadBalancer"), &model)
            .released_addresses
            .is_empty()
    );
}
