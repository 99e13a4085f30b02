//! Where a pending pod may run, as the scheduler's filters decide it for what the suite uses:
//! taints and tolerations, `nodeSelector`, required node affinity (label expressions and the
//! `metadata.name` field a DaemonSet pins its pods with), and cordoned nodes. Among the nodes that
//! pass, the one with the fewest pods of the pod's own controller is chosen (the scheduler's
//! default topology spreading: a ReplicaSet's 4 pods on 3 nodes land 2/1/1, whatever ran there
//! before), then the one the simulation has bound the fewest pods to.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, NodeSelectorRequirement, NodeSelectorTerm, Pod, Taint, Toleration};

fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    if let Some(effect) = toleration.effect.as_deref()
        && !effect.is_empty()
        && effect != taint.effect
    {
        return false;
    }
    match toleration.operator.as_deref() {
        Some("Exists") => toleration
            .key
            .as_deref()
            .is_none_or(|key| key.is_empty() || key == taint.key),
        _ => {
            toleration.key.as_deref() == Some(taint.key.as_str())
                && toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("")
        }
    }
}

fn requirement_holds(requirement: &NodeSelectorRequirement, value: Option<&str>) -> bool {
    let values = requirement.values.as_deref().unwrap_or_default();
    match requirement.operator.as_str() {
        "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
        "NotIn" => value.is_none_or(|v| !values.iter().any(|x| x == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(v), Some(bound)) = (value.and_then(|v| v.parse::<i64>().ok()), values.first()) else {
                return false;
            };
            let Ok(bound) = bound.parse::<i64>() else {
                return false;
            };
            if requirement.operator == "Gt" {
                v > bound
            } else {
                v < bound
            }
        }
        _ => false,
    }
}

fn term_holds(term: &NodeSelectorTerm, node: &Node) -> bool {
    let labels = node.metadata.labels.clone().unwrap_or_default();
    let name = node.metadata.name.as_deref();
    let expressions = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    if expressions.is_empty() && fields.is_empty() {
        return false;
    }
    expressions
        .iter()
        .all(|r| requirement_holds(r, labels.get(&r.key).map(String::as_str)))
        && fields
            .iter()
            .all(|r| r.key == "metadata.name" && requirement_holds(r, name))
}

/// Whether `pod` may run on `node`.
pub fn fits(pod: &Pod, node: &Node) -> bool {
    let Some(spec) = &pod.spec else { return false };
    let node_spec = node.spec.clone().unwrap_or_default();
    if node_spec.unschedulable == Some(true) {
        return false;
    }
    let tolerations = spec.tolerations.as_deref().unwrap_or_default();
    let blocking = node_spec
        .taints
        .unwrap_or_default()
        .into_iter()
        .filter(|taint| taint.effect == "NoSchedule" || taint.effect == "NoExecute");
    for taint in blocking {
        if !tolerations.iter().any(|t| tolerates(t, &taint)) {
            return false;
        }
    }
    let labels = node.metadata.labels.clone().unwrap_or_default();
    let selector: BTreeMap<String, String> = spec.node_selector.clone().unwrap_or_default();
    if selector.iter().any(|(key, value)| labels.get(key) != Some(value)) {
        return false;
    }
    let required = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| a.required_during_scheduling_ignored_during_execution.as_ref());
    match required {
        Some(selector) => selector
            .node_selector_terms
            .iter()
            .any(|term| term_holds(term, node)),
        None => true,
    }
}

/// The node `pod` goes to: among those it fits, the one with the fewest of its controller's pods
/// (`siblings`, by node), then the fewest pods bound so far (`load`), or none.
pub fn choose<'a>(
    pod: &Pod,
    nodes: &'a [Node],
    siblings: &BTreeMap<String, usize>,
    load: &BTreeMap<String, usize>,
) -> Option<&'a Node> {
    nodes.iter().filter(|node| fits(pod, node)).min_by_key(|node| {
        let name = node.metadata.name.clone().unwrap_or_default();
        let count = |counts: &BTreeMap<String, usize>| counts.get(&name).copied().unwrap_or(0);
        (count(siblings), count(load), name)
    })
}

/// The uid of the controller that owns `pod` (its ReplicaSet, StatefulSet, DaemonSet, Job).
pub fn controller_uid(pod: &Pod) -> Option<&str> {
    pod.metadata
        .owner_references
        .as_deref()?
        .iter()
        .find(|owner| owner.controller == Some(true))
        .map(|owner| owner.uid.as_str())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use serde_json::json;

    fn node(name: &str, labels: serde_json::Value, taints: serde_json::Value) -> Node {
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {"taints": taints},
        }))
        .unwrap()
    }

    fn pod(spec: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p"}, "spec": spec})).unwrap()
    }

    const SIM: &str = "e2e.suture.dev/simulated";

    #[test]
    fn a_pod_that_does_not_tolerate_the_simulation_taint_stays_pending() {
        let nodes = vec![node(
            "a",
            json!({}),
            json!([{"key": SIM, "value": "true", "effect": "NoSchedule"}]),
        )];
        let plain = pod(json!({"containers": []}));
        assert!(choose(&plain, &nodes, &BTreeMap::new(), &BTreeMap::new()).is_none());
        let tolerant = pod(json!({"containers": [], "tolerations": [{"key": SIM, "operator": "Exists"}]}));
        assert_eq!(
            choose(&tolerant, &nodes, &BTreeMap::new(), &BTreeMap::new())
                .unwrap()
                .metadata
                .name
                .as_deref(),
            Some("a")
        );
    }

    #[test]
    fn daemonset_pods_go_to_the_node_their_affinity_names() {
        let nodes = vec![node("a", json!({}), json!([])), node("b", json!({}), json!([]))];
        let pinned = pod(json!({"containers": [], "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}
        ]}}}}));
        assert_eq!(
            choose(&pinned, &nodes, &BTreeMap::new(), &BTreeMap::new())
                .unwrap()
                .metadata
                .name
                .as_deref(),
            Some("b")
        );
    }

    #[test]
    fn node_selectors_and_load_decide_among_the_rest() {
        let nodes = vec![
            node("a", json!({"disk": "ssd"}), json!([])),
            node("b", json!({"disk": "ssd"}), json!([])),
            node("c", json!({}), json!([])),
        ];
        let ssd = pod(json!({"containers": [], "nodeSelector": {"disk": "ssd"}}));
        let load = BTreeMap::from([("a".to_owned(), 3)]);
        assert_eq!(
            choose(&ssd, &nodes, &BTreeMap::new(), &load)
                .unwrap()
                .metadata
                .name
                .as_deref(),
            Some("b")
        );
    }

    #[test]
    fn a_controllers_pods_spread_before_the_nodes_load_counts() {
        let nodes = vec![
            node("a", json!({}), json!([])),
            node("b", json!({}), json!([])),
            node("c", json!({}), json!([])),
        ];
        let replica = pod(json!({"containers": []}));
        // Node c has run the most pods; the controller's 4 pods still land 2/1/1.
        let mut load = BTreeMap::from([("a".to_owned(), 10), ("b".to_owned(), 10), ("c".to_owned(), 12)]);
        let mut siblings: BTreeMap<String, usize> = BTreeMap::new();
        for _ in 0..4 {
            let name = choose(&replica, &nodes, &siblings, &load)
                .unwrap()
                .metadata
                .name
                .clone()
                .unwrap();
            *siblings.entry(name.clone()).or_default() += 1;
            *load.entry(name).or_default() += 1;
        }
        let mut spread: Vec<usize> = siblings.values().copied().collect();
        spread.sort_unstable();
        assert_eq!(spread, [1, 1, 2], "{siblings:?}");
    }

    #[test]
    fn the_controller_is_the_owner_marked_controller() {
        let owned: Pod = serde_json::from_value(json!({"metadata": {"name": "p", "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "u-0"},
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "u-1", "controller": true}
        ]}}))
        .unwrap();
        assert_eq!(controller_uid(&owned), Some("u-1"));
        assert_eq!(controller_uid(&pod(json!({"containers": []}))), None);
    }
}
