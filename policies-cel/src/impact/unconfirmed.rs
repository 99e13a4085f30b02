//! A StatefulSet member deleted without its node's confirmation: a DELETE with
//! `gracePeriodSeconds: 0` of a pod (not finished) whose Node is unreachable — the node lifecycle
//! controller's `node.kubernetes.io/unreachable` taint, set when the kubelet stops reporting.
//! kube-apiserver removes the object at once; the StatefulSet controller then creates the member
//! again, with the same name and the same claims, while the old containers may still run on the
//! partitioned node, unseen. StatefulSets promise at most one pod per identity, and this is how
//! that promise breaks: two processes writing one volume, two members answering to one name
//! (Kubernetes' "Force Delete StatefulSet Pods" task says to do it only once the node is
//! confirmed down). A pod on a Node that no longer exists (deleted: confirmed gone) or on a
//! reachable one is not counted: its kubelet, or its absence, stops the containers.

use crate::cluster::object::Spec;
use crate::cluster::{ClusterView, ObjectKey};
use crate::impact::effects::Effects;
use crate::impact::report::UnconfirmedDeletion;
use crate::impact::subject::Subject;

/// The taint the node lifecycle controller puts on a Node whose kubelet stopped reporting.
pub const UNREACHABLE_TAINT: &str = "node.kubernetes.io/unreachable";

/// Records the subject (a pod DELETE) when it removes a StatefulSet member whose node has not
/// confirmed it stopped.
pub(crate) fn estimate(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let forced = subject
        .options
        .and_then(|options| options.get("gracePeriodSeconds"))
        .and_then(serde_json::Value::as_i64)
        == Some(0);
    if !forced {
        return;
    }
    let Some(pod) = view.get(&subject.key) else {
        return;
    };
    let Spec::Pod(spec) = &pod.spec else {
        return;
    };
    if spec.finished() {
        return;
    }
    let Some(stateful_set) = pod
        .owners
        .iter()
        .find(|owner| owner.controller && &*owner.kind == "StatefulSet")
    else {
        return;
    };
    let Some(node) = spec.node.as_deref() else {
        return;
    };
    let unreachable = match view.get(&ObjectKey::new("", "Node", "", node)).map(|n| &n.spec) {
        Some(Spec::Node { taints, .. }) => taints.iter().any(|t| &*t.key == UNREACHABLE_TAINT),
        _ => false,
    };
    if !unreachable {
        return;
    }
    effects.unconfirmed.push(UnconfirmedDeletion {
        namespace: subject.key.namespace.as_ref().to_owned(),
        pod: subject.key.name.as_ref().to_owned(),
        node: node.to_owned(),
        stateful_set: stateful_set.name.to_string(),
        claims: spec.claims.iter().map(ToString::to_string).collect(),
    });
    effects.note(format!(
        "pod {}/{} is force-deleted (gracePeriodSeconds 0) while Node {node} is unreachable: StatefulSet {} starts it again while the old one may still run",
        subject.key.namespace, subject.key.name, stateful_set.name
    ));
}
