//! CREATE of a workload or a Service, as the controllers take it over:
//!
//! - a ReplicaSet adopts the pods without a controller that its selector matches and deletes
//!   the excess over its replicas (the lowest-ranked first, as `getPodsToDelete` ranks them);
//! - a StatefulSet adopts only the orphans named `<set>-<ordinal>` and deletes those at an
//!   ordinal of `replicas` or more;
//! - a Deployment adopts orphan ReplicaSets, never pods (its ReplicaSets add `pod-template-hash`
//!   to the selector);
//! - a Service starts routing traffic to the ready pods it selects: no harm, only noted.
//!
//! Pods that already have a controller, are terminating or have finished are never adopted.
//!
//! The helpers [`slim`] and [`previous`] read the request's objects for every rule that needs
//! them.

use serde_json::Value as Json;

use crate::cluster::object::{Labels, Phase, Selector};
use crate::cluster::{ClusterView, Object, Spec, project, with_scratch_model};
use crate::impact::consequences::ready_selected;
use crate::impact::effects::Effects;
use crate::impact::subject::Subject;

/// The request's `object` or `oldObject` as a slim object with Kubernetes' defaults; `None`
/// (with a note) when it is missing or cannot be read.
pub(super) fn slim(json: Option<&Json>, what: &str, effects: &mut Effects) -> Option<Object> {
    let Some(json) = json.filter(|j| !j.is_null()) else {
        effects.note(format!(
            "the request carries no {what}: its effect is not estimated"
        ));
        return None;
    };
    match with_scratch_model(|model| project(json, model)) {
        Ok(object) => Some(object),
        Err(error) => {
            effects.note(format!(
                "the request's {what} cannot be read ({error}): its effect is not estimated"
            ));
            None
        }
    }
}

/// The subject as it is before an UPDATE: the request's `oldObject`, else the model's copy.
pub(super) fn previous(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) -> Option<Object> {
    match subject.old_object().filter(|j| !j.is_null()) {
        Some(_) => slim(subject.old_object(), "oldObject", effects),
        None => view.get(&subject.key).cloned(),
    }
}

/// Estimates a CREATE of a ReplicaSet, StatefulSet, Deployment or Service.
pub(crate) fn estimate(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let Some(created) = slim(subject.object(), "object", effects) else {
        return;
    };
    match &created.spec {
        Spec::ReplicaSet { replicas, selector } => replica_set(view, &created, *replicas, selector, effects),
        Spec::StatefulSet {
            replicas, selector, ..
        } => stateful_set(view, &created, *replicas, selector, effects),
        Spec::Deployment { selector, .. } => deployment(view, &created, selector, effects),
        Spec::Service { selector, .. } => service(view, &created, selector.as_ref(), effects),
        _ => effects.note(format!(
            "{} is not a workload or Service: no effect is counted",
            created.key
        )),
    }
}

/// Pods a new controller with `selector` adopts: matching, without a controller, still active.
fn orphans<'a>(view: &'a dyn ClusterView, namespace: &str, selector: &Selector) -> Vec<&'a Object> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut pods: Vec<&Object> = view
        .pods_matching(namespace, selector)
        .into_iter()
        .filter(|p| p.controller().is_none() && p.running_pod().is_some())
        .collect();
    pods.sort_by(|a, b| a.key.name.cmp(&b.key.name));
    pods
}

fn names(pods: &[&Object]) -> String {
    pods.iter().map(|p| &*p.key.name).collect::<Vec<_>>().join(", ")
}

/// Deletes an adopted pod the new controller does not want.
fn remove(pod: &Object, reason: String, effects: &mut Effects) {
    effects.delete(pod, reason.clone());
    effects.stop(pod, false, true, reason);
}

/// The order in which a ReplicaSet deletes pods (`ActivePodsWithRanks`, first deleted first):
/// unscheduled before scheduled, Pending before Unknown before Running, not ready before ready.
fn deletion_rank(pod: &Object) -> (bool, u8, bool) {
    let Some(spec) = pod.pod() else {
        return (false, 0, false);
    };
    let phase = match spec.phase {
        Phase::Pending => 0,
        Phase::Unknown => 1,
        _ => 2,
    };
    (spec.node.is_some(), phase, spec.ready)
}

/// A new ReplicaSet adopts orphans and deletes the excess over `replicas`.
fn replica_set(
    view: &dyn ClusterView,
    rs: &Object,
    replicas: i64,
    selector: &Selector,
    effects: &mut Effects,
) {
    let mut adopted = orphans(view, &rs.key.namespace, selector);
    if adopted.is_empty() {
        return;
    }
    let wanted = usize::try_from(replicas.max(0)).unwrap_or(usize::MAX);
    effects.note(format!(
        "new {} adopts {} pod(s) without a controller ({}) and keeps {}",
        rs.key,
        adopted.len(),
        names(&adopted),
        wanted.min(adopted.len())
    ));
    if adopted.len() <= wanted {
        return;
    }
    // Stable sort: equal ranks keep name order.
    adopted.sort_by_key(|p| deletion_rank(p));
    let excess = adopted.len() - wanted;
    for pod in adopted.into_iter().take(excess) {
        remove(
            pod,
            format!("adopted and removed by new ReplicaSet {}", rs.key.name),
            effects,
        );
    }
}

/// The ordinal of `pod` when it is named `<set>-<ordinal>` (`getParentNameAndOrdinal`).
fn ordinal(set: &str, pod: &Object) -> Option<u64> {
    let suffix = pod.key.name.strip_prefix(set)?.strip_prefix('-')?;
    if suffix.is_empty() || !suffix.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    suffix.parse().ok()
}

/// A new StatefulSet adopts the orphans named as its members and deletes those at an ordinal of
/// `replicas` or more.
fn stateful_set(
    view: &dyn ClusterView,
    set: &Object,
    replicas: i64,
    selector: &Selector,
    effects: &mut Effects,
) {
    let candidates = orphans(view, &set.key.namespace, selector);
    if candidates.is_empty() {
        return;
    }
    let (members, strangers): (Vec<&Object>, Vec<&Object>) = candidates
        .into_iter()
        .partition(|p| ordinal(&set.key.name, p).is_some());
    if !strangers.is_empty() {
        effects.note(format!(
            "pods {} match the selector of new {} but are not named {}-<ordinal>: they are not adopted",
            names(&strangers),
            set.key,
            set.key.name
        ));
    }
    if members.is_empty() {
        return;
    }
    effects.note(format!(
        "new {} adopts {} pod(s) without a controller ({}); those of another revision are replaced by its \
         update strategy",
        set.key,
        members.len(),
        names(&members)
    ));
    let wanted = u64::try_from(replicas.max(0)).unwrap_or(0);
    for pod in members {
        if let Some(n) = ordinal(&set.key.name, pod).filter(|n| *n >= wanted) {
            let reason = format!(
                "adopted and removed by new StatefulSet {} (ordinal {n} ≥ replicas {wanted})",
                set.key.name
            );
            remove(pod, reason, effects);
        }
    }
}

/// A new Deployment adopts orphan ReplicaSets its selector matches, not pods.
fn deployment(view: &dyn ClusterView, deployment: &Object, selector: &Selector, effects: &mut Effects) {
    let pods = orphans(view, &deployment.key.namespace, selector);
    if !pods.is_empty() {
        effects.note(format!(
            "pods {} match the selector of new {} but are not adopted: its ReplicaSets select pod-template-hash too",
            names(&pods),
            deployment.key
        ));
    }
    if selector.is_empty() {
        return;
    }
    let adopted: Vec<&Object> = view
        .in_namespace(&deployment.key.namespace)
        .into_iter()
        .filter(|o| &*o.key.kind == "ReplicaSet" && o.controller().is_none() && !o.terminating())
        .filter(|o| selector.matches(&o.labels))
        .collect();
    for rs in adopted {
        effects.note(format!(
            "new {} adopts {}: if their pod templates differ, the rollout replaces its pods",
            deployment.key, rs.key
        ));
    }
}

/// A new Service routes traffic to the ready pods it selects.
fn service(view: &dyn ClusterView, service: &Object, selector: Option<&Labels>, effects: &mut Effects) {
    let Some(labels) = selector.filter(|l| !l.is_empty()) else {
        effects.note(format!(
            "new {} has no selector: its endpoints are managed by hand",
            service.key
        ));
        return;
    };
    let ready = ready_selected(view, &service.key.namespace, labels).len();
    effects.note(format!(
        "new {} starts routing traffic to {ready} ready pod(s)",
        service.key
    ));
}
