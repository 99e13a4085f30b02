//! The deletion of a PriorityClass or RuntimeClass that running pods name
//! (`impact.lostClasses`): the pods keep running, but their controllers cannot replace any of
//! them until the class exists again.

use std::sync::Arc;

use crate::support;

use policies_cel::cluster::object::{Phase, PodRequirements};
use policies_cel::cluster::{Object, Spec};
use policies_cel::impact::{Impact, estimate};
use serde_json::json;
use support::cluster::*;

/// A running pod of `namespace` naming the classes given, controlled by ReplicaSet `web` when
/// `controlled`.
fn naming(
    namespace: &str,
    name: &str,
    priority: Option<&str>,
    runtime: Option<&str>,
    controlled: bool,
) -> Object {
    let mut p = pod(namespace, name, "node-a", true);
    if let Spec::Pod(spec) = &mut p.spec {
        spec.requires = Arc::new(PodRequirements {
            priority_class: priority.map(Into::into),
            runtime_class: runtime.map(Into::into),
            ..PodRequirements::default()
        });
    }
    if controlled {
        p = owned_by(p, &replicaset(namespace, "web", 3, "web"));
    }
    p
}

fn delete_class(
    resource: (&str, &str, &str),
    kind: &str,
    name: &str,
    old: serde_json::Value,
) -> policies_cel::Request {
    review(
        "DELETE",
        resource,
        kind,
        "",
        name,
        json!({"object": null, "oldObject": old}),
    )
}

fn delete_priority_class(name: &str, global_default: bool) -> policies_cel::Request {
    delete_class(
        ("scheduling.k8s.io", "v1", "priorityclasses"),
        "PriorityClass",
        name,
        json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name, "uid": "pc-1"}, "value": 1000, "globalDefault": global_default}),
    )
}

fn delete_runtime_class(name: &str) -> policies_cel::Request {
    delete_class(
        ("node.k8s.io", "v1", "runtimeclasses"),
        "RuntimeClass",
        name,
        json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name, "uid": "rc-1"}, "handler": "runsc"}),
    )
}

fn lost(impact: &Impact) -> Vec<(&str, &str, &str, &str, &str)> {
    impact
        .lost_classes
        .iter()
        .map(|l| {
            (
                l.namespace.as_str(),
                l.pod.as_str(),
                l.kind.as_str(),
                l.class.as_str(),
                l.controller.as_str(),
            )
        })
        .collect()
}

#[test]
fn deleting_a_priority_class_lists_the_running_controlled_pods_naming_it_in_every_namespace() {
    let mut finished = naming("shop", "web-job", Some("critical"), None, true);
    if let Spec::Pod(spec) = &mut finished.spec {
        spec.phase = Phase::Succeeded;
    }
    let mut terminating = naming("shop", "web-0", Some("critical"), None, true);
    terminating.deletion_timestamp = std::num::NonZeroI64::new(1_764_000_000);
    let cluster = model(vec![
        naming("shop", "web-2", Some("critical"), None, true),
        naming("shop", "web-1", Some("critical"), Some("gvisor"), true),
        naming("staging", "web-9", Some("critical"), None, true),
        naming("shop", "api-1", Some("standard"), None, true),
        naming("shop", "debug", Some("critical"), None, false),
        finished,
        terminating,
    ]);
    let impact = estimate(&delete_priority_class("critical", false), &cluster);
    // A PriorityClass is cluster-wide: every namespace's pods; sorted; a finished, a
    // terminating pod and another class's are not listed, nor a pod nothing would replace.
    assert_eq!(
        lost(&impact),
        vec![
            (
                "shop",
                "web-1",
                "PriorityClass",
                "critical",
                "ReplicaSet shop/web"
            ),
            (
                "shop",
                "web-2",
                "PriorityClass",
                "critical",
                "ReplicaSet shop/web"
            ),
            (
                "staging",
                "web-9",
                "PriorityClass",
                "critical",
                "ReplicaSet staging/web"
            ),
        ]
    );
    assert!(impact.modelled);
    assert_eq!((impact.summary.deleted, impact.summary.pods_disrupted), (0, 0));
    let notes = impact.notes.join("\n");
    assert!(
        notes.contains("1 running pod without a controller names PriorityClass critical"),
        "{notes}"
    );
    assert!(
        notes.contains("named by 3 running pods of ReplicaSet shop/web, ReplicaSet staging/web"),
        "{notes}"
    );
    assert!(!notes.contains("global default"), "{notes}");
}

#[test]
fn the_two_kinds_of_class_are_kept_apart() {
    let cluster = model(vec![
        naming("shop", "web-1", None, Some("gvisor"), true),
        naming("shop", "web-2", Some("gvisor"), None, true),
    ]);
    let impact = estimate(&delete_runtime_class("gvisor"), &cluster);
    assert_eq!(
        lost(&impact),
        vec![("shop", "web-1", "RuntimeClass", "gvisor", "ReplicaSet shop/web")]
    );
    let impact = estimate(&delete_priority_class("gvisor", false), &cluster);
    assert_eq!(
        lost(&impact),
        vec![("shop", "web-2", "PriorityClass", "gvisor", "ReplicaSet shop/web")]
    );
}

#[test]
fn the_global_default_priority_class_says_what_its_defaulted_pods_get() {
    let cluster = model(vec![naming("shop", "web-1", Some("everyday"), None, true)]);
    let impact = estimate(&delete_priority_class("everyday", true), &cluster);
    assert_eq!(lost(&impact).len(), 1);
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("global default") && n.contains("get priority 0 instead of being refused")),
        "{:?}",
        impact.notes
    );
}

#[test]
fn the_class_index_follows_pods_leaving_the_model() {
    let web_1 = naming("shop", "web-1", Some("critical"), None, true);
    let key = web_1.key.clone();
    let mut cluster = model(vec![web_1, naming("shop", "web-2", Some("critical"), None, true)]);
    assert!(cluster.remove(&key).is_some());
    // A pod naming no class takes the freed slot: an index entry left behind by the removal
    // would now list it.
    cluster.insert(naming("shop", "batch-1", None, None, true));
    let impact = estimate(&delete_priority_class("critical", false), &cluster);
    assert_eq!(
        lost(&impact),
        vec![(
            "shop",
            "web-2",
            "PriorityClass",
            "critical",
            "ReplicaSet shop/web"
        )]
    );
    // A class no running pod names loses nothing and says nothing.
    let impact = estimate(&delete_priority_class("batch-low", false), &cluster);
    assert!(impact.lost_classes.is_empty());
    assert!(impact.notes.is_empty(), "{:?}", impact.notes);
}

#[test]
fn a_class_many_workloads_name_is_summed_up_in_its_note() {
    let pods: Vec<Object> = (0..7)
        .map(|i| naming(&format!("team-{i}"), "web-1", Some("shared"), None, true))
        .collect();
    let impact = estimate(&delete_priority_class("shared", false), &model(pods));
    assert_eq!(impact.lost_classes.len(), 7);
    assert!(
        impact.notes.iter().any(|n| n.contains(
            "of ReplicaSet team-0/web, ReplicaSet team-1/web, ReplicaSet team-2/web, ReplicaSet team-3/web, ReplicaSet team-4/web and 2 more:"
        )),
        "{:?}",
        impact.notes
    );
}
