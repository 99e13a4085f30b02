//! DELETE of any object, as the garbage collector and the controllers carry it out: the
//! ownerReference cascade with the request's `propagationPolicy` (Orphan stops it; the default
//! depends on the kind and API version), a Namespace's contents, a CRD's instances, a Node's
//! pods and local volumes, a PersistentVolumeClaim's data per its volume's reclaim policy, a
//! bound volume, and a StatefulSet's claims under its retention policy.

use std::collections::HashSet;

use crate::cluster::object::{NODE_LOCAL_TOPOLOGY_KEYS, Spec};
use crate::cluster::{ClusterView, Object, ObjectKey};
use crate::impact::effects::{Effects, HeldVolume};
use crate::impact::subject::Subject;

/// How dependents are treated when their owner is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Propagation {
    Background,
    Foreground,
    Orphan,
}

/// The propagation a DELETE uses: `propagationPolicy`, else the deprecated `orphanDependents`,
/// else the kind's default (Orphan for batch/v1 Jobs, v1 ReplicationControllers and the
/// pre-`apps/v1` workload versions; Background for everything else).
pub(crate) fn propagation(subject: &Subject) -> Propagation {
    let options = subject.options;
    match options
        .and_then(|o| o.get("propagationPolicy"))
        .and_then(|p| p.as_str())
    {
        Some("Orphan") => return Propagation::Orphan,
        Some("Foreground") => return Propagation::Foreground,
        Some("Background") => return Propagation::Background,
        _ => {}
    }
    if let Some(orphan) = options
        .and_then(|o| o.get("orphanDependents"))
        .and_then(|o| o.as_bool())
    {
        return if orphan {
            Propagation::Orphan
        } else {
            Propagation::Background
        };
    }
    let legacy_workload = matches!(
        (subject.group.as_str(), subject.version.as_str()),
        ("extensions", "v1beta1") | ("apps", "v1beta1") | ("apps", "v1beta2")
    );
    match (subject.group.as_str(), &*subject.key.kind) {
        ("batch", "Job") | ("", "ReplicationController") => Propagation::Orphan,
        _ if legacy_workload => Propagation::Orphan,
        _ => Propagation::Background,
    }
}

/// Estimates a DELETE of the subject.
pub(crate) fn delete(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let propagation = propagation(subject);
    delete_with(
        view,
        subject,
        propagation,
        "deleted by the request".to_owned(),
        effects,
    );
}

/// Estimates the deletion of the subject with `propagation` (a DELETE's own, or the one a
/// deletion completed by removing its last finalizer was made with).
pub(crate) fn delete_with(
    view: &dyn ClusterView,
    subject: &Subject,
    propagation: Propagation,
    reason: String,
    effects: &mut Effects,
) {
    let Some(target) = view.get(&subject.key) else {
        effects.note(format!(
            "{} is not in the cluster model: nothing is known to be deleted",
            subject.key
        ));
        return;
    };
    note_dangling_owners(view, target, effects);
    if propagation == Propagation::Orphan {
        effects.note(format!(
            "propagationPolicy Orphan: the dependents of {} are kept",
            subject.key
        ));
    }
    cascade(view, target, propagation, reason, effects);
}

/// Owners that no longer exist, or whose uid now belongs to another object: the requester may be
/// acting on a stale view of the cluster.
pub(crate) fn note_dangling_owners(view: &dyn ClusterView, object: &Object, effects: &mut Effects) {
    for owner in object.owners.iter() {
        if view.by_uid(&owner.uid).is_some() {
            continue;
        }
        let group = owner.api_version.split_once('/').map_or("", |(group, _)| group);
        let namesake = [object.key.namespace.as_ref(), ""]
            .into_iter()
            .find_map(|ns| view.get(&ObjectKey::new(group, &owner.kind, ns, &owner.name)));
        let live_uid = namesake.and_then(|o| o.uid.as_deref()).map(str::to_owned);
        effects.note(match &live_uid {
            Some(live) => format!(
                "{} names owner {} {} with uid {}, but the live {} {} has uid {live}: a stale ownerReference",
                object.key, owner.kind, owner.name, owner.uid, owner.kind, owner.name
            ),
            None => format!(
                "{} names owner {} {} (uid {}), which no longer exists: a stale ownerReference",
                object.key, owner.kind, owner.name, owner.uid
            ),
        });
        effects.stale_owners.push(crate::impact::report::StaleOwner {
            object: crate::impact::report::Target {
                kind: object.key.kind.as_ref().to_owned(),
                namespace: object.key.namespace.as_ref().to_owned(),
                name: object.key.name.as_ref().to_owned(),
            },
            owner_kind: owner.kind.to_string(),
            owner_name: owner.name.to_string(),
            owner_uid: owner.uid.to_string(),
            live_uid,
        });
    }
}

/// Deletes `object` as an operator does (a Background deletion of its own), with its
/// dependents and every consequence of its kind.
pub(crate) fn delete_object(view: &dyn ClusterView, object: &Object, reason: String, effects: &mut Effects) {
    cascade(view, object, Propagation::Background, reason, effects);
}

/// Deletes `object` and, unless orphaned, everything that depends on it.
fn cascade(
    view: &dyn ClusterView,
    object: &Object,
    propagation: Propagation,
    reason: String,
    effects: &mut Effects,
) {
    if !effects.delete(object, reason) {
        return;
    }
    consequences_of_kind(view, object, effects);
    if propagation == Propagation::Orphan {
        return;
    }
    let Some(uid) = &object.uid else { return };
    for dependent in view.dependents(uid) {
        // The garbage collector deletes a dependent once none of its owners remains.
        let other_owner = dependent.owners.iter().find(|o| {
            &o.uid != uid
                && view
                    .by_uid(&o.uid)
                    .is_some_and(|owner| !effects.is_deleted(&owner.key))
        });
        if let Some(owner) = other_owner {
            effects.note(format!(
                "{} is kept: it is also owned by {} {}",
                dependent.key, owner.kind, owner.name
            ));
            continue;
        }
        let reason = format!("owned by {} (garbage collection)", object.key);
        cascade(view, dependent, Propagation::Background, reason, effects);
    }
}

/// Deletes every object of a sweep (a Namespace's contents, a CRD's instances), owners first:
/// the objects no other object of the sweep owns, each with its dependents, then the rest. So a
/// pod is reached through its deleted ReplicaSet (not replaced) whatever order the model holds
/// them in, even when the top of the chain is owned from outside the sweep.
fn sweep(view: &dyn ClusterView, objects: Vec<&Object>, reason: &str, effects: &mut Effects) {
    let inside: HashSet<&str> = objects.iter().filter_map(|o| o.uid.as_deref()).collect();
    let (roots, owned): (Vec<&Object>, Vec<&Object>) = objects
        .into_iter()
        .partition(|object| object.owners.iter().all(|owner| !inside.contains(&*owner.uid)));
    for object in roots.into_iter().chain(owned) {
        cascade(view, object, Propagation::Background, reason.to_owned(), effects);
    }
}

/// The bound volumes that live on a deleted Node's own disks (a required node affinity pinning
/// them to it): their data leaves with the node. An autoscaler (Karpenter, cluster-autoscaler)
/// terminates the machine of a deleted Node, and the local static provisioner's node cleanup
/// deletes the claims of local volumes whose Node is gone; in any case no pod can mount them
/// elsewhere.
fn local_volumes_lost(view: &dyn ClusterView, node: &Object, effects: &mut Effects) {
    let name = &*node.key.name;
    let mut pins: Vec<&str> = node
        .labels
        .iter()
        .filter(|(key, _)| NODE_LOCAL_TOPOLOGY_KEYS.contains(&&**key))
        .map(|(_, value)| &**value)
        .collect();
    pins.push(name);
    pins.sort_unstable();
    pins.dedup();
    for volume in pins.into_iter().flat_map(|pin| view.volumes_pinned_to(pin)) {
        if let Spec::PersistentVolume {
            claim: Some((namespace, claim)),
            ..
        } = &volume.spec
        {
            let reason = format!(
                "local PersistentVolume {} lives on deleted Node {name}",
                volume.key.name
            );
            effects.lose_volume(namespace, claim, Some(&volume.key.name), reason);
        }
    }
}

/// What deleting one object of each kind sets off besides its dependents.
fn consequences_of_kind(view: &dyn ClusterView, object: &Object, effects: &mut Effects) {
    let key = &object.key;
    match &object.spec {
        Spec::Pod(_) => {
            let replaced = object
                .controller()
                .and_then(|c| view.by_uid(&c.uid))
                .is_some_and(|owner| !effects.is_deleted(&owner.key));
            effects.stop(object, replaced, true, "deleted");
        }
        Spec::Namespace => {
            let reason = format!("in deleted Namespace {}", key.name);
            sweep(view, view.in_namespace(&key.name), &reason, effects);
        }
        Spec::CustomResourceDefinition { group, kind, .. } => {
            let reason = format!("instance of deleted CustomResourceDefinition {}", key.name);
            sweep(view, view.of_kind(group, kind), &reason, effects);
        }
        Spec::Node { .. } => {
            for pod in view.pods_on_node(&key.name) {
                let reason = format!("bound to deleted Node {}", key.name);
                cascade(view, pod, Propagation::Background, reason, effects);
            }
            local_volumes_lost(view, object, effects);
        }
        Spec::PersistentVolumeClaim { .. } => claim_deleted(view, object, effects),
        // Their readers are looked for once the whole cascade is known (`config::readers_lost`):
        // a pod deleted by the same request loses nothing.
        Spec::ConfigMap { .. } | Spec::Secret { .. } => effects.deleted_configs.push(key.clone()),
        Spec::PersistentVolume {
            reclaim_delete,
            claim: Some((namespace, name)),
            ..
        } => {
            let reason = if *reclaim_delete {
                format!(
                    "bound PersistentVolume {} deleted (reclaimPolicy Delete)",
                    key.name
                )
            } else {
                format!(
                    "bound PersistentVolume {} deleted; its claim loses the volume",
                    key.name
                )
            };
            effects.lose_volume(namespace, name, Some(&key.name), reason);
        }
        Spec::StatefulSet {
            replicas,
            claim_templates,
            retention,
            ..
        } if retention.delete_when_deleted => {
            for template in claim_templates {
                for ordinal in 0..(*replicas).max(0) {
                    let claim = format!("{template}-{}-{ordinal}", key.name);
                    if let Some(pvc) = view.get(&ObjectKey::new(
                        "",
                        "PersistentVolumeClaim",
                        &key.namespace,
                        &claim,
                    )) {
                        let reason =
                            format!("persistentVolumeClaimRetentionPolicy whenDeleted: Delete of {key}");
                        cascade(view, pvc, Propagation::Background, reason, effects);
                    }
                }
            }
        }
        _ => {}
    }
}

/// A deleted claim loses its data when its volume reclaims with Delete (pvc-protection only
/// delays that until the pods using it stop).
pub(crate) fn claim_deleted(view: &dyn ClusterView, claim: &Object, effects: &mut Effects) {
    let key = &claim.key;
    let users: Vec<&Object> = view
        .pods_using_claim(&key.namespace, &key.name)
        .into_iter()
        .filter(|p| !p.pod().is_some_and(|s| s.finished()))
        .collect();
    if !users.is_empty() {
        let names: Vec<&str> = users.iter().map(|p| &*p.key.name).collect();
        effects.note(format!(
            "{key} is in use by {}: pvc-protection delays its deletion until they stop, it does not save the data",
            names.join(", ")
        ));
    }
    match view.volume_of_claim(&key.namespace, &key.name) {
        Some(volume) => match &volume.spec {
            Spec::PersistentVolume {
                reclaim_delete: true, ..
            } => {
                let reason = format!("released by deleted {key} (reclaimPolicy Delete)");
                if users.is_empty() {
                    effects.delete(volume, reason);
                } else {
                    effects.held_volumes.push(HeldVolume {
                        volume: volume.key.clone(),
                        users: users.iter().map(|p| p.key.clone()).collect(),
                        reason,
                    });
                }
                let reason = format!(
                    "{key} deleted; its PersistentVolume {} reclaims with Delete",
                    volume.key.name
                );
                effects.lose_volume(&key.namespace, &key.name, Some(&volume.key.name), reason);
            }
            _ => effects.note(format!(
                "the data of {key} is kept: PersistentVolume {} reclaims with Retain",
                volume.key.name
            )),
        },
        None => effects.note(format!(
            "{key} has no bound PersistentVolume in the model: no data loss is counted"
        )),
    }
}
