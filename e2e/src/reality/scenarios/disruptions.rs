//! Evictions the API permits, and Node changes on a Node dedicated to the scenario: a NoExecute
//! taint (the taint-eviction controller), cordoning, a label a DaemonSet places its pod by, and a
//! label nothing reads.

use serde_json::json;

use crate::reality::request::{NODE, Request, first_with, named};
use crate::reality::scenario::Scenario;
use crate::reality::scenarios::deletes::{database, web};
use crate::reality::scenarios::yaml::{daemon_set, deployment, on_node, pod, service};
use crate::scene::TOLERATION;
use crate::simulator::{DEDICATED_KEY, TAINT_KEY};

/// The node label the DaemonSet scenario places its pod by.
const AGENT_LABEL: &str = "e2e.suture.dev/agent";

fn evict(selector: &str) -> Request {
    Request::Evict {
        pod: first_with(selector),
    }
}

fn pinned(ns: &str, node: &str) -> String {
    format!(
        "{}{}",
        deployment(ns, "pinned", 2, "", &on_node(node)),
        service(ns, "pinned", "pinned")
    )
}

/// The node scenarios' node name for namespace `ns`.
fn node_of(ns: &str) -> String {
    format!("{ns}-node")
}

/// The eviction and Node scenarios.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "evict/deployment-pod-within-budget",
            "eviction of a Deployment's pod the budget allows",
            evict("app=web"),
        )
        .stage(web),
        Scenario::new(
            "evict/statefulset-member",
            "eviction of a StatefulSet member (maxUnavailable 1)",
            evict("app=db"),
        )
        .stage(|ns| database(ns, 3, "")),
        Scenario::new(
            "evict/bare-pod",
            "eviction of a pod no controller replaces",
            evict("app=solo"),
        )
        .stage(|ns| format!("{}{}", pod(ns, "solo", "solo", ""), service(ns, "solo", "solo"))),
        Scenario::new(
            "node/no-execute-taint",
            "NoExecute taint on a Node: pods not tolerating it are evicted",
            Request::Patch {
                kind: NODE,
                name: named("rl-node-no-execute-taint-node"),
                patch: json!({"spec": {"taints": [
                    {"key": TAINT_KEY, "value": "true", "effect": "NoSchedule"},
                    {"key": DEDICATED_KEY, "value": "rl-node-no-execute-taint", "effect": "NoSchedule"},
                    {"key": "maintenance", "value": "true", "effect": "NoExecute"},
                ]}}),
            },
        )
        .dedicated_node()
        .stage(|ns| pinned(ns, &node_of(ns))),
        Scenario::new(
            "node/cordon",
            "cordon a Node: running pods stay",
            Request::Patch {
                kind: NODE,
                name: named("rl-node-cordon-node"),
                patch: json!({"spec": {"unschedulable": true}}),
            },
        )
        .dedicated_node()
        .stage(|ns| pinned(ns, &node_of(ns))),
        Scenario::new(
            "node/label-a-daemonset-selects-removed",
            "a Node label a DaemonSet's nodeSelector reads, changed: its pod there is deleted",
            Request::Patch {
                kind: NODE,
                name: named("rl-node-label-a-daemonset-selects-removed-node"),
                patch: json!({"metadata": {"labels": {AGENT_LABEL: "no"}}}),
            },
        )
        .dedicated_node()
        .stage(|ns| {
            let placement = format!(
                "nodeSelector: {{{AGENT_LABEL}: \"yes\"}}\n      tolerations: [{TOLERATION}, {{key: {DEDICATED_KEY}, operator: Exists}}]"
            );
            format!("{}{}", daemon_set(ns, "agent", "", &placement), service(ns, "agent", "agent"))
        })
        // Labelled once the DaemonSet exists: its controller then places a pod there.
        .prepare(Request::Patch {
            kind: NODE,
            name: named("rl-node-label-a-daemonset-selects-removed-node"),
            patch: json!({"metadata": {"labels": {AGENT_LABEL: "yes"}}}),
        }),
        Scenario::new(
            "node/label-nothing-reads",
            "a Node label no selector reads: nothing stops",
            Request::Patch {
                kind: NODE,
                name: named("rl-node-label-nothing-reads-node"),
                patch: json!({"metadata": {"labels": {"e2e.suture.dev/rack": "r7"}}}),
            },
        )
        .dedicated_node()
        .stage(|ns| pinned(ns, &node_of(ns))),
    ]
}
