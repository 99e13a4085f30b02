//! UPDATE of a Node, as the taint-eviction controller carries it out: a `NoExecute` taint the
//! update adds deletes every pod on the node that does not tolerate it (no PodDisruptionBudget
//! is consulted). A DaemonSet does not put the pod back (its pods follow the same tolerations);
//! another live controller replaces it elsewhere. Tolerations are read as the pods record them
//! (DaemonSet pods included). A cordon or a `NoSchedule` taint stops nothing: noted. A label
//! change that stops the node fitting a DaemonSet's nodeSelector or required node affinity makes
//! the DaemonSet controller delete its pod there; other pods keep running (their node affinity
//! is IgnoredDuringExecution).

use crate::cluster::object::{Labels, Selector, Taint, Toleration};
use crate::cluster::{ClusterView, Object, Spec};
use crate::impact::create::{previous, slim};
use crate::impact::effects::Effects;
use crate::impact::subject::Subject;

/// Estimates an UPDATE of the subject Node.
pub(crate) fn estimate(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let Some(new) = slim(subject.object(), "object", effects) else {
        return;
    };
    let old = previous(view, subject, effects);
    if old.is_none() {
        effects.note(format!(
            "{} as it was is unknown: all its taints are treated as new",
            subject.key
        ));
    }
    let (was_unschedulable, old_taints) = old.as_ref().map(node_state).unwrap_or_default();
    let (unschedulable, taints) = node_state(&new);
    let name = &new.key.name;
    if unschedulable && !was_unschedulable {
        effects.note(format!(
            "Node {name} is cordoned: new pods will not land there, running pods stay"
        ));
    }
    let added: Vec<&Taint> = taints.iter().filter(|t| !old_taints.contains(t)).collect();
    for taint in added.iter().filter(|t| &*t.effect != "NoExecute") {
        effects.note(format!(
            "taint {}:{} on Node {name}: new pods will not land there (unless they tolerate it), running pods stay",
            display(taint),
            taint.effect
        ));
    }
    let no_execute: Vec<&Taint> = added.into_iter().filter(|t| &*t.effect == "NoExecute").collect();
    if !no_execute.is_empty() {
        evict(view, name, &no_execute, effects);
    }
    if let Some(old) = &old
        && old.labels != new.labels
    {
        unplace_daemons(view, name, &old.labels, &new.labels, effects);
    }
}

/// A node fits a DaemonSet's placement (any of its terms matches the node's labels; none means
/// every node).
fn fits(placement: &[Selector], labels: &Labels) -> bool {
    placement.is_empty() || placement.iter().any(|term| term.matches(labels))
}

/// The DaemonSet controller deletes its pod from a node whose new labels no longer fit the
/// DaemonSet's nodeSelector or required node affinity (pods of other controllers keep running:
/// IgnoredDuringExecution).
fn unplace_daemons(view: &dyn ClusterView, node: &str, old: &Labels, new: &Labels, effects: &mut Effects) {
    for pod in view.pods_on_node(node) {
        if pod.running_pod().is_none() {
            continue;
        }
        let Some(daemon_set) = pod.controller().and_then(|c| view.by_uid(&c.uid)) else {
            continue;
        };
        let Spec::DaemonSet { placement, .. } = &daemon_set.spec else {
            continue;
        };
        if fits(placement, old) && !fits(placement, new) {
            let reason = format!(
                "Node {node}'s new labels no longer fit {}'s node selection: its pod there is deleted",
                daemon_set.key
            );
            effects.delete(pod, reason.clone());
            effects.stop(pod, false, true, reason);
        }
    }
}

/// Unschedulable flag and taints of a Node.
fn node_state(node: &Object) -> (bool, Vec<Taint>) {
    match &node.spec {
        Spec::Node {
            unschedulable,
            taints,
        } => (*unschedulable, taints.to_vec()),
        _ => (false, Vec::new()),
    }
}

/// `key=value`, or `key` for a taint without value.
fn display(taint: &Taint) -> String {
    match &taint.value {
        Some(value) if !value.is_empty() => format!("{}={value}", taint.key),
        _ => taint.key.to_string(),
    }
}

/// The first of `taints` that `tolerations` do not tolerate.
fn untolerated<'a>(tolerations: &[Toleration], taints: &[&'a Taint]) -> Option<&'a Taint> {
    taints
        .iter()
        .copied()
        .find(|t| !tolerations.iter().any(|tol| tol.tolerates(t)))
}

/// A live controller other than a DaemonSet recreates an evicted pod elsewhere.
fn replaced(view: &dyn ClusterView, pod: &Object) -> bool {
    pod.controller()
        .and_then(|c| view.by_uid(&c.uid))
        .is_some_and(|owner| &*owner.key.kind != "DaemonSet")
}

/// Evicts the pods on `node` that do not tolerate the new `taints`.
fn evict(view: &dyn ClusterView, node: &str, taints: &[&Taint], effects: &mut Effects) {
    let mut tolerating = Vec::new();
    for pod in view.pods_on_node(node) {
        let Some(spec) = pod.pod().filter(|s| !s.finished() && !pod.terminating()) else {
            continue;
        };
        if pod.controller().is_some_and(|c| &*c.kind == "Node") {
            effects.note(format!(
                "static pod {} is not stopped: the kubelet recreates its mirror pod",
                pod.key
            ));
            continue;
        }
        match untolerated(&spec.tolerations, taints) {
            Some(taint) => {
                let reason = format!("evicted by NoExecute taint {}", display(taint));
                effects.delete(pod, reason.clone());
                effects.stop(pod, replaced(view, pod), true, reason);
            }
            None => tolerating.push(pod.key.name.as_ref().to_owned()),
        }
    }
    if !tolerating.is_empty() {
        tolerating.sort();
        effects.note(format!(
            "pods {} on Node {node} tolerate the new NoExecute taint(s): a toleration with tolerationSeconds only \
             delays their eviction (not modelled: they are counted as staying)",
            tolerating.join(", ")
        ));
    }
}
