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

/// A workload of `kind` (`Deployment`, `StatefulSet`, `DaemonSet`) `web` in `shop` with
/// `replicas` plain pods (ReplicaSet `web-1` between a Deployment and its pods), `extra` merged
/// into its spec.
fn workload(kind: &str, replicas: usize, extra: Value) -> Vec<Value> {
    let template = json!({"metadata": {"labels": {"app": "web"}}, "spec": plain()});
    let mut spec = json!({"selector": {"matchLabels": {"app": "web"}}, "template": template});
    if kind != "DaemonSet" {
        spec["replicas"] = json!(replicas);
    }
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    let object = json!({"apiVersion": "apps/v1", "kind": kind,
        "metadata": {"name": "web", "namespace": "shop", "uid": "uid-web"}, "spec": spec});
    let mut objects = vec![object];
    let owner = if kind == "Deployment" {
        objects.push(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "uid-web-1", "labels": {"app": "web"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "uid-web", "controller": true}]},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": template}}));
        ("ReplicaSet", "web-1")
    } else {
        (kind, "web")
    };
    for n in 0..replicas {
        let name = if kind == "Deployment" {
            format!("web-1-{n}")
        } else {
            format!("web-{n}")
        };
        let mut p = pod("shop", &name, Some(owner), plain());
        p["metadata"]["labels"] = json!({"app": "web"});
        p["metadata"]["ownerReferences"][0]["uid"] = json!(format!("uid-{}", owner.1));
        p["spec"]["nodeName"] = json!(format!("node-{n}"));
        objects.push(p);
    }
    objects
}

/// An UPDATE of the workload `objects[0]` to a pod template with `pod_spec`.
fn roll_to(objects: &[Value], pod_spec: Value) -> policies_cel::Request {
    let old = objects[0].clone();
    let mut new = old.clone();
    new["spec"]["template"]["spec"] = pod_spec;
    let kind = old["kind"].as_str().unwrap_or_default().to_owned();
    let plural = format!("{}s", kind.to_lowercase());
    review(
        "UPDATE",
        ("apps", "v1", &plural),
        &kind,
        "shop",
        "web",
        json!({"object": new, "oldObject": old}),
    )
}

fn privileged() -> Value {
    json!({"containers": [{"name": "app", "image": "app:2", "securityContext": {"privileged": true}}]})
}

fn lost_for_good(impact: &Impact) -> Vec<&str> {
    impact
        .pods
        .iter()
        .filter(|p| !p.replaced)
        .map(|p| p.name.as_str())
        .collect()
}

#[test]
fn a_rollout_the_namespace_level_refuses_removes_what_its_strategy_allows_and_replaces_nothing() {
    let in_baseline = |objects: Vec<Value>| {
        let mut all = vec![namespace("shop", &[(ENFORCE, "baseline")])];
        all.extend(objects);
        all
    };
    // Deployment, 25%/25% of 4: the old ReplicaSet goes down to 3; nothing new comes.
    let objects = workload("Deployment", 4, json!({}));
    let impact = estimate(
        &roll_to(&objects, privileged()),
        &model(in_baseline(objects.clone())),
    );
    assert_eq!(lost_for_good(&impact), ["web-1-0"]);
    assert_eq!((impact.summary.deleted, impact.summary.pods_disrupted), (1, 1));
    assert_eq!(impact.workloads[0].ready_after, 3, "{:?}", impact.workloads);
    let listed: Vec<(&str, &str, &str, Vec<&str>)> = refused(&impact);
    assert_eq!(listed.len(), 4);
    assert_eq!(
        listed[0],
        ("web-1-0", "Deployment shop/web", "baseline", vec!["privileged"])
    );
    assert!(
        impact.notes.iter().any(|n| n
            .contains("fails Pod Security level baseline of Namespace shop (privileged)")
            && n.contains("the rollout removes 1 old pod, which is not replaced, and stalls")),
        "{:?}",
        impact.notes
    );
    // Recreate: every pod goes; the workload is down for good.
    let objects = workload("Deployment", 3, json!({"strategy": {"type": "Recreate"}}));
    let impact = estimate(
        &roll_to(&objects, privileged()),
        &model(in_baseline(objects.clone())),
    );
    assert_eq!(lost_for_good(&impact).len(), 3);
    assert_eq!(impact.summary.workloads_down, 1);
    // maxUnavailable 0: the rollout stalls before removing anything, the pods still count.
    let objects = workload(
        "Deployment",
        3,
        json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}}),
    );
    let impact = estimate(
        &roll_to(&objects, privileged()),
        &model(in_baseline(objects.clone())),
    );
    assert!(impact.pods.is_empty(), "{:?}", impact.pods);
    assert_eq!(refused(&impact).len(), 3);
    // A StatefulSet: its highest ordinal goes and is not created again.
    let objects = workload("StatefulSet", 3, json!({"serviceName": "web"}));
    let impact = estimate(
        &roll_to(&objects, privileged()),
        &model(in_baseline(objects.clone())),
    );
    assert_eq!(lost_for_good(&impact), ["web-2"]);
    // A DaemonSet with a surge creates first: nothing goes.
    let objects = workload(
        "DaemonSet",
        3,
        json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}}),
    );
    let impact = estimate(
        &roll_to(&objects, privileged()),
        &model(in_baseline(objects.clone())),
    );
    assert!(impact.pods.is_empty(), "{:?}", impact.pods);
    assert_eq!(refused(&impact).len(), 3);
}

#[test]
fn a_rollout_the_level_admits_or_a_namespace_without_a_level_rolls_as_usual() {
    let admitted = json!({"containers": [{"name": "app", "image": "app:2",
        "securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE"]}}}]});
    for (labels, spec) in [
        (vec![(ENFORCE, "baseline")], admitted),
        (vec![], privileged()),
        (vec![(ENFORCE, "privileged")], privileged()),
    ] {
        let objects = workload("Deployment", 4, json!({}));
        let mut all = vec![namespace("shop", &labels)];
        all.extend(objects.clone());
        let impact = estimate(&roll_to(&objects, spec), &model(all));
        assert!(impact.pod_security_violations.is_empty(), "{labels:?}");
        // Every pod replaced, none lost for good.
        assert_eq!(impact.pods.len(), 4, "{labels:?}");
        assert!(lost_for_good(&impact).is_empty(), "{labels:?}");
    }
}
