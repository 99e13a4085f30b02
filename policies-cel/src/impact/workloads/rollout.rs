//! A new pod template rolls out: every pod is replaced (deleted, and `replaced = true`), and the strategy's
//! arithmetic decides how many ready pods are down together at the worst moment.
//!
//! - Deployment RollingUpdate: Kubernetes' `ResolveFenceposts` (maxSurge rounds up, maxUnavailable
//!   rounds down, both 0 → maxUnavailable 1); the controller keeps `replicas - maxUnavailable`
//!   pods available, so at worst the ready pods above that floor are down. Recreate: all at once.
//!   Paused: nothing until resumed.
//! - StatefulSet RollingUpdate: ordinals at or above `partition`, highest first, `maxUnavailable`
//!   (of replicas, rounded down, at least 1) at a time. OnDelete: nothing until pods are deleted.
//! - DaemonSet RollingUpdate: `maxUnavailable` and `maxSurge` of the scheduled pods, rounded up;
//!   a surge keeps every old pod until its replacement is ready. OnDelete: nothing.
//! - ReplicaSet: a new template only applies to pods created later.
//!
//! Pods that are not ready are replaced first and count as down; ready pods are taken in a
//! deterministic order (by name, StatefulSets by descending ordinal).
//!
//! A template the namespace's Pod Security level refuses ([`roll_refused`]): the controller
//! removes what its strategy lets it remove before a new pod is ready, and no new pod comes —
//! a Deployment's old ReplicaSet is scaled down to `replicas - maxUnavailable` (its lowest-ranked
//! pods, as any scale-down), Recreate removes every pod, a StatefulSet its highest updated
//! ordinal(s), a DaemonSet its not-ready pods and `maxUnavailable` ready ones (none with a
//! surge); a paused Deployment, OnDelete and a ReplicaSet remove nothing now.

use crate::cluster::Object;
use crate::cluster::object::{DeploymentStrategy, IntOrPercent, Spec, StatefulSetStrategy};
use crate::impact::consequences::{healthy, scaled};
use crate::impact::effects::Effects;
use crate::impact::workloads::Change;
use crate::impact::workloads::scale::{by_rank, ordinal};

/// Rolls the new template out over `pods` (the pods that remain after any scale-down).
pub(super) fn roll(change: &Change, pods: &[&Object], effects: &mut Effects) {
    let key = &change.current.key;
    let desired = usize::try_from(change.to).unwrap_or(0);
    match &change.desired {
        Spec::Deployment { paused: true, .. } => effects.note(format!(
            "{key} is paused: its new pod template rolls out only once it is resumed"
        )),
        Spec::Deployment { strategy: DeploymentStrategy::Recreate, .. } => {
            let reason = "rollout of a new pod template (Recreate: every old pod stops before new ones start)";
            replace(pods, pods.len(), reason, effects);
        }
        Spec::Deployment { strategy: DeploymentStrategy::RollingUpdate { max_unavailable, max_surge }, .. } => {
            let (unavailable, surge) = fenceposts(*max_surge, *max_unavailable, desired);
            let floor = desired.saturating_sub(unavailable);
            let down = ready_count(pods).saturating_sub(floor);
            let reason = format!(
                "rollout of a new pod template (RollingUpdate: maxUnavailable {unavailable}, maxSurge {surge} of {desired})"
            );
            replace(pods, down, &reason, effects);
        }
        Spec::ReplicaSet { .. } => effects.note(format!(
            "{key}: a ReplicaSet does not replace its pods when its template changes; only pods created later use it"
        )),
        Spec::StatefulSet { strategy: StatefulSetStrategy::OnDelete, .. } => effects.note(format!(
            "{key} (updateStrategy OnDelete): pods take the new template only when they are deleted"
        )),
        Spec::StatefulSet { strategy: StatefulSetStrategy::RollingUpdate { partition, max_unavailable }, .. } => {
            roll_stateful(change, pods, *partition, *max_unavailable, effects);
        }
        Spec::DaemonSet { .. } if change.on_delete => effects.note(format!(
            "{key} (updateStrategy OnDelete): pods take the new template only when they are deleted"
        )),
        Spec::DaemonSet { max_unavailable, max_surge, .. } => roll_daemons(change, pods, *max_unavailable, *max_surge, effects),
        _ => {}
    }
}

/// Whether the new template replaces pods now: not for a paused Deployment, an OnDelete strategy
/// or a ReplicaSet.
pub(super) fn rolls_now(change: &Change) -> bool {
    match &change.desired {
        Spec::Deployment { paused, .. } => !paused,
        Spec::StatefulSet { strategy, .. } => !matches!(strategy, StatefulSetStrategy::OnDelete),
        Spec::DaemonSet { .. } => !change.on_delete,
        _ => false,
    }
}

/// Rolls a new template that PodSecurity admission refuses over `pods`: removes (for good) what
/// the strategy removes before a new pod would be ready; returns the pods removed.
pub(super) fn roll_refused<'a>(
    change: &Change,
    pods: &[&'a Object],
    level: &str,
    effects: &mut Effects,
) -> Vec<&'a Object> {
    let key = &change.current.key;
    let desired = usize::try_from(change.to).unwrap_or(0);
    let removed: Vec<&Object> = match &change.desired {
        Spec::Deployment { paused: true, .. } => {
            effects.note(format!(
                "{key} is paused: its refused pod template rolls out only once it is resumed"
            ));
            Vec::new()
        }
        Spec::Deployment {
            strategy: DeploymentStrategy::Recreate,
            ..
        } => pods.to_vec(),
        Spec::Deployment {
            strategy:
                DeploymentStrategy::RollingUpdate {
                    max_unavailable,
                    max_surge,
                },
            ..
        } => {
            // The old ReplicaSet goes down to what must stay available; the new one never
            // gets a pod to be available with.
            let (unavailable, _) = fenceposts(*max_surge, *max_unavailable, desired);
            by_rank(pods.to_vec(), desired.saturating_sub(unavailable)).0
        }
        Spec::StatefulSet {
            strategy:
                StatefulSetStrategy::RollingUpdate {
                    partition,
                    max_unavailable,
                },
            ..
        } => {
            let (_, mut updated) = stateful_updated(change, pods, *partition);
            updated.truncate(stateful_at_once(change, *max_unavailable));
            updated
        }
        Spec::DaemonSet {
            max_unavailable,
            max_surge,
            ..
        } if !change.on_delete => {
            let scheduled = pods.len();
            if scaled(*max_surge, scheduled, true) > 0 {
                Vec::new()
            } else {
                // Pods not ready go first and use up the budget; ready ones fill the rest.
                let budget = scaled(*max_unavailable, scheduled, true);
                let mut ready_left = budget.saturating_sub(scheduled - ready_count(pods));
                let mut removed = Vec::new();
                for pod in pods {
                    if !healthy(pod) {
                        removed.push(*pod);
                    } else if ready_left > 0 {
                        ready_left -= 1;
                        removed.push(*pod);
                    }
                }
                removed
            }
        }
        // OnDelete, a ReplicaSet: nothing is replaced now; the next pod they create is refused.
        _ => Vec::new(),
    };
    let reason = format!(
        "rollout of a pod template Pod Security level {level} refuses: removed, and no new pod can replace it"
    );
    for pod in &removed {
        effects.delete(pod, reason.clone());
        effects.stop(pod, false, true, reason.clone());
    }
    removed
}

/// Kubernetes' `ResolveFenceposts`: (maxUnavailable, maxSurge) as pod counts of `desired`.
fn fenceposts(max_surge: IntOrPercent, max_unavailable: IntOrPercent, desired: usize) -> (usize, usize) {
    let surge = scaled(max_surge, desired, true);
    let unavailable = scaled(max_unavailable, desired, false);
    if surge == 0 && unavailable == 0 {
        (1, 0)
    } else {
        (unavailable, surge)
    }
}

/// How many StatefulSet members a rolling update replaces at a time: `maxUnavailable` of the
/// replicas, rounded down, at least 1.
fn stateful_at_once(change: &Change, max_unavailable: IntOrPercent) -> usize {
    scaled(max_unavailable, usize::try_from(change.to).unwrap_or(0), false).max(1)
}

/// The first ordinal a rolling update with `partition` replaces, and the pods it replaces,
/// highest ordinal first.
fn stateful_updated<'a>(change: &Change, pods: &[&'a Object], partition: i64) -> (i64, Vec<&'a Object>) {
    let set = &change.current.key;
    let first = change.ordinal_start.saturating_add(partition.max(0));
    let mut updated: Vec<&Object> = pods
        .iter()
        .copied()
        .filter(|p| ordinal(set, p).is_some_and(|n| n >= first))
        .collect();
    updated.sort_by_key(|p| std::cmp::Reverse(ordinal(set, p)));
    (first, updated)
}

/// Ordinals at or above the partition are replaced, highest first, `maxUnavailable` at a time.
fn roll_stateful(
    change: &Change,
    pods: &[&Object],
    partition: i64,
    max_unavailable: IntOrPercent,
    effects: &mut Effects,
) {
    let set = &change.current.key;
    let at_once = stateful_at_once(change, max_unavailable);
    let (first, updated) = stateful_updated(change, pods, partition);
    if partition > 0 {
        effects.note(format!(
            "{set}: partition {partition} keeps ordinals below {first} on the old template"
        ));
    }
    let down = at_once.min(ready_count(&updated));
    let reason = format!(
        "rollout of a new pod template (RollingUpdate: partition {partition}, {at_once} at a time, highest ordinal first)"
    );
    replace(&updated, down, &reason, effects);
}

/// A DaemonSet replaces its pods node by node: `maxUnavailable` at a time, or with a surge.
fn roll_daemons(
    change: &Change,
    pods: &[&Object],
    max_unavailable: IntOrPercent,
    max_surge: IntOrPercent,
    effects: &mut Effects,
) {
    let scheduled = pods.len();
    let surge = scaled(max_surge, scheduled, true);
    let unavailable = scaled(max_unavailable, scheduled, true);
    if surge == 0 && unavailable == 0 {
        effects.note(format!(
            "{}: maxUnavailable and maxSurge are both 0, the rollout does not progress",
            change.current.key
        ));
        return;
    }
    let ready = ready_count(pods);
    // Pods already unavailable use up the budget first (the controller counts them).
    let down = if surge > 0 {
        0
    } else {
        unavailable.saturating_sub(scheduled - ready).min(ready)
    };
    let reason = if surge > 0 {
        format!(
            "rollout of a new pod template (RollingUpdate: maxSurge {surge} of {scheduled} scheduled, old pods stay until replaced)"
        )
    } else {
        format!(
            "rollout of a new pod template (RollingUpdate: maxUnavailable {unavailable} of {scheduled} scheduled)"
        )
    };
    replace(pods, down, &reason, effects);
}

/// Ready pods among `pods`.
fn ready_count(pods: &[&Object]) -> usize {
    pods.iter().filter(|p| healthy(p)).count()
}

/// Replaces every pod of `pods`: those not ready are down anyway, and the first `down` ready
/// ones (in the given order) are down together at the worst moment.
fn replace(pods: &[&Object], down: usize, reason: &str, effects: &mut Effects) {
    let mut taken = 0;
    for pod in pods {
        let at_worst = if healthy(pod) {
            taken += 1;
            taken <= down
        } else {
            true
        };
        // The controller deletes the old pod (its replacement is a new object, even where a
        // StatefulSet gives it the same name).
        effects.delete(pod, reason);
        effects.stop(pod, true, at_worst, reason);
    }
}
