//! Scale-down: which pods go, as the controllers choose them. The ReplicaSet controller (and
//! through it a Deployment) removes the lowest-ranked pods first — unassigned before assigned,
//! Pending before Unknown before Running, not-ready before ready, then pods doubled up on a node
//! with more of the workload's pods; ties are broken by name here, where Kubernetes goes on to
//! readiness time, restarts and age (which the model does not hold). A StatefulSet removes its highest
//! ordinals, and with `persistentVolumeClaimRetentionPolicy.whenScaled: Delete` their claims.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use crate::cluster::object::Phase;
use crate::cluster::{ClusterView, Object, ObjectKey, Spec};
use crate::impact::delete::claim_deleted;
use crate::impact::effects::Effects;
use crate::impact::workloads::Change;

/// How many removed ordinals are looked at for claims beyond those with a pod (bounds the cost
/// of an absurd replica count).
const MAX_PODLESS_ORDINALS: i64 = 1024;

/// Removes the pods the scale-down condemns; returns the pods that stay, sorted by name.
pub(super) fn scale_down<'a>(
    view: &dyn ClusterView,
    change: &Change,
    pods: Vec<&'a Object>,
    effects: &mut Effects,
) -> Vec<&'a Object> {
    let keep = usize::try_from(change.to).unwrap_or(0);
    let stateful = matches!(change.desired, Spec::StatefulSet { .. });
    let (victims, mut survivors) = if stateful {
        by_ordinal(change, pods)
    } else {
        by_rank(pods, keep)
    };
    let reason = format!("scaled down: replicas {} → {}", change.from, change.to);
    for pod in &victims {
        effects.delete(pod, reason.clone());
        effects.stop(pod, false, true, reason.clone());
    }
    if stateful {
        note_stateful_order(change, effects);
        remove_claims(view, change, &victims, effects);
    } else if spans_replica_sets(&survivors, &victims) {
        effects.note(format!(
            "{} has pods in several ReplicaSets: the Deployment controller scales them proportionally; \
             the estimate ranks all its pods together",
            change.current.key
        ));
    }
    survivors.sort_by(|a, b| a.key.name.cmp(&b.key.name));
    survivors
}

/// The ReplicaSet controller's ranking of pods to delete, lowest first (`ActivePodsWithRanks.Less`,
/// its criteria up to co-location: unassigned, Pending before Unknown before Running, not ready,
/// then pods sharing their node with more of the workload's pods), ties by name.
fn removal_rank(pod: &Object, colocated: &BTreeMap<&str, usize>) -> (u8, u8, u8, Reverse<usize>) {
    let Some(spec) = pod.pod() else {
        return (0, 0, 0, Reverse(0));
    };
    let assigned = u8::from(spec.node.is_some());
    let phase = match spec.phase {
        Phase::Unknown => 1,
        Phase::Running => 2,
        _ => 0,
    };
    let on_node = spec
        .node
        .as_deref()
        .and_then(|node| colocated.get(node))
        .copied()
        .unwrap_or(0);
    (assigned, phase, u8::from(spec.ready), Reverse(on_node))
}

/// Splits `pods` into the lowest-ranked surplus over `keep` and the rest.
pub(super) fn by_rank(mut pods: Vec<&Object>, keep: usize) -> (Vec<&Object>, Vec<&Object>) {
    let mut colocated: BTreeMap<&str, usize> = BTreeMap::new();
    for node in pods.iter().filter_map(|p| p.pod()?.node.as_deref()) {
        *colocated.entry(node).or_default() += 1;
    }
    pods.sort_by(|a, b| {
        (removal_rank(a, &colocated), &a.key.name).cmp(&(removal_rank(b, &colocated), &b.key.name))
    });
    let surplus = pods.len().saturating_sub(keep);
    let survivors = pods.split_off(surplus);
    (pods, survivors)
}

/// A StatefulSet pod's ordinal: the `-<n>` suffix after the set's name.
pub(super) fn ordinal(set: &ObjectKey, pod: &Object) -> Option<i64> {
    pod.key
        .name
        .strip_prefix(&*set.name)?
        .strip_prefix('-')?
        .parse()
        .ok()
}

/// Splits a StatefulSet's pods into those whose ordinal leaves `[start, start + to)` and the rest.
fn by_ordinal<'a>(change: &Change, pods: Vec<&'a Object>) -> (Vec<&'a Object>, Vec<&'a Object>) {
    let start = change.ordinal_start;
    let end = start.saturating_add(change.to.max(0));
    let condemned = |pod: &Object| ordinal(&change.current.key, pod).is_some_and(|n| n < start || n >= end);
    let (mut victims, survivors): (Vec<&Object>, Vec<&Object>) = pods.into_iter().partition(|p| condemned(p));
    victims.sort_by_key(|p| std::cmp::Reverse(ordinal(&change.current.key, p)));
    (victims, survivors)
}

/// How a StatefulSet removes its pods.
fn note_stateful_order(change: &Change, effects: &mut Effects) {
    if let Spec::StatefulSet { parallel: false, .. } = change.desired {
        effects.note(format!(
            "{} (podManagementPolicy OrderedReady) removes its pods one at a time, highest ordinal first; \
             the end state is the same",
            change.current.key
        ));
    }
}

/// `whenScaled: Delete` deletes the claims of the removed ordinals (and their data when their
/// volumes reclaim with Delete); `Retain` keeps them.
fn remove_claims(view: &dyn ClusterView, change: &Change, victims: &[&Object], effects: &mut Effects) {
    let Spec::StatefulSet {
        claim_templates,
        retention,
        ..
    } = &change.desired
    else {
        return;
    };
    let set = &change.current.key;
    if claim_templates.is_empty() {
        return;
    }
    if !retention.delete_when_scaled {
        effects.note(format!(
            "{set} keeps the claims of removed ordinals (whenScaled: Retain)"
        ));
        return;
    }
    // Ordinals without a pod (never started, or already gone) lose their claims too.
    let start = change.ordinal_start;
    let first_gone = start.saturating_add(change.to.max(0));
    let end = start
        .saturating_add(change.from.max(0))
        .min(first_gone.saturating_add(MAX_PODLESS_ORDINALS));
    let mut ordinals: BTreeSet<i64> = victims.iter().filter_map(|p| ordinal(set, p)).collect();
    ordinals.extend(first_gone..end);
    let reason = format!("persistentVolumeClaimRetentionPolicy whenScaled: Delete of {set}");
    for template in claim_templates {
        for n in &ordinals {
            let claim = format!("{template}-{}-{n}", set.name);
            if let Some(pvc) = view.get(&ObjectKey::new(
                "",
                "PersistentVolumeClaim",
                &set.namespace,
                &claim,
            )) && effects.delete(pvc, reason.clone())
            {
                claim_deleted(view, pvc, effects);
            }
        }
    }
}

/// True when the pods involved belong to more than one ReplicaSet.
fn spans_replica_sets(survivors: &[&Object], victims: &[&Object]) -> bool {
    let owners: BTreeSet<&str> = survivors
        .iter()
        .chain(victims)
        .filter_map(|p| p.controller())
        .map(|c| &*c.uid)
        .collect();
    owners.len() > 1
}
