//! A Namespace UPDATE that raises its Pod Security enforce level (`impact.podSecurityViolations`):
//! the running pods it refuses keep running, but their controllers cannot replace them. The pods
//! are read by the snapshot loader, so their checks are the ones the model computes when it
//! reads a pod.

use crate::support;

use policies_cel::cluster::ClusterModel;
use policies_cel::cluster::snapshot::SnapshotLoader;
use policies_cel::impact::{Impact, estimate};
use serde_json::{Value, json};
use support::cluster::review;

const ENFORCE: &str = "pod-security.kubernetes.io/enforce";

/// A pod of `namespace` with `spec`, controlled by ReplicaSet `web` unless `owner` says otherwise
/// (`None`: no owner).
fn pod(namespace: &str, name: &str, owner: Option<(&str, &str)>, spec: Value) -> Value {
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": format!("uid-{namespace}-{name}")},
        "spec": spec,
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    });
    if let Some((kind, owner)) = owner {
        pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": kind, "name": owner,
            "uid": format!("uid-{owner}"), "controller": true}]);
    }
    pod
}

fn plain() -> Value {
    json!({"nodeName": "node-a", "containers": [{"name": "app", "image": "app:1"}]})
}

/// A pod spec the restricted level admits.
fn hardened() -> Value {
    json!({"nodeName": "node-a",
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "app", "image": "app:1", "securityContext": {
            "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]})
}

fn namespace(name: &str, labels: &[(&str, &str)]) -> Value {
    let mut all: serde_json::Map<String, Value> =
        labels.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect();
    all.insert("kubernetes.io/metadata.name".into(), json!(name));
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "uid": format!("uid-ns-{name}"), "labels": all}})
}

fn model(objects: Vec<Value>) -> ClusterModel {
    let mut loader = SnapshotLoader::new();
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    loader.add_str("cluster.json", &list.to_string());
    loader.finish().unwrap_or_else(|e| panic!("{e}"))
}

/// An UPDATE of Namespace `name` from `old` labels (`None`: no oldObject, as a what-if) to `new`.
fn relabel(name: &str, old: Option<&[(&str, &str)]>, new: &[(&str, &str)]) -> policies_cel::Request {
    let old = old.map_or(Value::Null, |labels| namespace(name, labels));
    review(
        "UPDATE",
        ("", "v1", "namespaces"),
        "Namespace",
        "",
        name,
        json!({"object": namespace(name, new), "oldObject": old}),
    )
}

fn refused(impact: &Impact) -> Vec<(&str, &str, &str, Vec<&str>)> {
    impact
        .pod_security_violations
        .iter()
        .map(|v| {
            (
                v.pod.as_str(),
                v.controller.as_str(),
                v.level.as_str(),
                v.reasons.iter().map(String::as_str).collect(),
            )
        })
        .collect()
}

#[test]
fn enforcing_restricted_lists_the_running_controlled_pods_that_fail_it() {
    let mut finished = pod("shop", "web-job", Some(("Job", "nightly")), plain());
    finished["status"]["phase"] = json!("Succeeded");
    let mut terminating = pod("shop", "web-0", Some(("ReplicaSet", "web")), plain());
    terminating["metadata"]["deletionTimestamp"] = json!("2026-11-27T10:00:00Z");
    let cluster = model(vec![
        namespace("shop", &[]),
        pod("shop", "web-2", Some(("ReplicaSet", "web")), plain()),
        pod("shop", "web-1", Some(("ReplicaSet", "web")), plain()),
        pod("shop", "api-1", Some(("ReplicaSet", "api")), hardened()),
        pod("shop", "debug", None, plain()),
        pod("shop", "static-node-a", Some(("Node", "node-a")), plain()),
        pod("staging", "web-9", Some(("ReplicaSet", "web")), plain()),
        finished,
        terminating,
    ]);
    let impact = estimate(&relabel("shop", Some(&[]), &[(ENFORCE, "restricted")]), &cluster);
    let reasons = vec![
        "allowPrivilegeEscalation != false",
        "unrestricted capabilities",
        "runAsNonRoot != true",
        "seccompProfile",
    ];
    // Sorted; the hardened pod, another namespace's, a finished and a terminating pod are not
    // listed, nor the pods nothing would replace (a bare pod, a Node's mirror pod).
    assert_eq!(
        refused(&impact),
        vec![
            ("web-1", "ReplicaSet shop/web", "restricted", reasons.clone()),
            ("web-2", "ReplicaSet shop/web", "restricted", reasons),
        ]
    );
    assert!(impact.modelled);
    assert_eq!((impact.summary.deleted, impact.summary.pods_disrupted), (0, 0));
    let notes = impact.notes.join("\n");
    assert!(
        notes.contains(
            "2 running pods without a controller fail Pod Security level restricted in Namespace shop"
        ),
        "{notes}"
    );
    assert!(
        notes.contains("refuses 2 running pods of ReplicaSet shop/web: they keep running"),
        "{notes}"
    );
    // Only PodSecurity's label changed.
    assert!(!notes.contains("NetworkPolicies"), "{notes}");
}

#[test]
fn baseline_refuses_only_what_breaks_baseline_and_pods_already_refused_are_not_counted() {
    let host_network = json!({"nodeName": "node-a", "hostNetwork": true, "containers": [{"name": "agent", "image": "agent:1"}]});
    let host_port = json!({"nodeName": "node-a", "containers": [{"name": "proxy", "image": "proxy:1",
        "ports": [{"containerPort": 8443, "hostPort": 443}]}]});
    let cluster = model(vec![
        pod("edge", "agent-1", Some(("DaemonSet", "agent")), host_network),
        pod("edge", "proxy-1", Some(("ReplicaSet", "proxy")), host_port),
        pod("edge", "web-1", Some(("ReplicaSet", "web")), plain()),
    ]);
    let impact = estimate(&relabel("edge", Some(&[]), &[(ENFORCE, "baseline")]), &cluster);
    assert_eq!(
        refused(&impact),
        vec![
            (
                "agent-1",
                "DaemonSet edge/agent",
                "baseline",
                vec!["host namespaces"]
            ),
            ("proxy-1", "ReplicaSet edge/proxy", "baseline", vec!["hostPort"]),
        ]
    );
    // From baseline to restricted, the pods baseline refused already are none of this request's.
    let impact = estimate(
        &relabel("edge", Some(&[(ENFORCE, "baseline")]), &[(ENFORCE, "restricted")]),
        &cluster,
    );
    let pods: Vec<&str> = refused(&impact).into_iter().map(|r| r.0).collect();
    assert_eq!(pods, ["web-1"]);
}

#[test]
fn lowering_keeping_or_dropping_the_level_refuses_nothing() {
    let cluster = model(vec![
        namespace("shop", &[]),
        pod("shop", "web-1", Some(("ReplicaSet", "web")), plain()),
    ]);
    for (old, new) in [
        (vec![(ENFORCE, "restricted")], vec![(ENFORCE, "baseline")]),
        (vec![(ENFORCE, "restricted")], vec![(ENFORCE, "restricted")]),
        (vec![], vec![(ENFORCE, "privileged")]),
    ] {
        let impact = estimate(&relabel("shop", Some(&old), &new), &cluster);
        assert!(impact.pod_security_violations.is_empty(), "{old:?} -> {new:?}");
        assert!(impact.notes.is_empty(), "{old:?} -> {new:?}: {:?}", impact.notes);
        assert!(impact.modelled);
    }
    let impact = estimate(&relabel("shop", Some(&[(ENFORCE, "restricted")]), &[]), &cluster);
    assert!(impact.pod_security_violations.is_empty());
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("falls back to the cluster's default Pod Security level")),
        "{:?}",
        impact.notes
    );
}

#[test]
fn a_level_podsecurity_does_not_know_is_refused_by_kube_apiserver_itself() {
    let cluster = model(vec![pod("shop", "web-1", Some(("ReplicaSet", "web")), plain())]);
    let impact = estimate(&relabel("shop", Some(&[]), &[(ENFORCE, "Restricted")]), &cluster);
    assert!(impact.pod_security_violations.is_empty());
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("\"Restricted\" is no Pod Security level")
                && n.contains("PodSecurity admission refuses the update")),
        "{:?}",
        impact.notes
    );
}

#[test]
fn a_pinned_version_and_other_label_changes_are_noted() {
    let cluster = model(vec![pod("shop", "web-1", Some(("ReplicaSet", "web")), plain())]);
    let impact = estimate(
        &relabel(
            "shop",
            Some(&[("team", "web")]),
            &[
                ("team", "payments"),
                (ENFORCE, "restricted"),
                ("pod-security.kubernetes.io/enforce-version", "v1.24"),
            ],
        ),
        &cluster,
    );
    assert_eq!(impact.pod_security_violations.len(), 1);
    let notes = impact.notes.join("\n");
    assert!(notes.contains("pins Pod Security version v1.24"), "{notes}");
    assert!(
        notes.contains("NetworkPolicies and webhooks that select namespaces by label are not read"),
        "{notes}"
    );
}

#[test]
fn without_an_old_object_the_level_before_is_the_models() {
    let cluster = model(vec![
        namespace("shop", &[(ENFORCE, "baseline")]),
        pod("shop", "web-1", Some(("ReplicaSet", "web")), plain()),
    ]);
    let impact = estimate(&relabel("shop", None, &[(ENFORCE, "baseline")]), &cluster);
    assert!(impact.pod_security_violations.is_empty(), "{:?}", impact.notes);
    let impact = estimate(&relabel("shop", None, &[(ENFORCE, "restricted")]), &cluster);
    assert_eq!(impact.pod_security_violations.len(), 1);
}
