//! What the rules decide a request does (objects deleted, pods stopped, volumes lost), before
//! [`consequences`](super::consequences) works out what that means for Services, PDBs,
//! workloads and quorums.
//!
//! The sets are ordered, not hashed: a request touches a handful of objects (SipHash of an
//! `ObjectKey`'s four strings cost more than comparing them), and iteration is deterministic.

use std::collections::{BTreeMap, BTreeSet};

use crate::cluster::{Object, ObjectKey};
use crate::impact::report::{BrokenReference, PdbEffect, ServiceEffect, VolumeLoss};

/// A pod the request stops.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stop {
    pub pod: ObjectKey,
    /// A controller will create a replacement (rollouts, evictions of managed pods).
    pub replaced: bool,
    /// Down at the change's worst moment (all of a deletion; `maxUnavailable` of a rollout).
    pub at_worst: bool,
    pub reason: String,
}

/// When a volume's data goes, and whose it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loss {
    /// Destroyed by the request's own consequences.
    Now,
    /// A Released volume kept by reclaimPolicy Retain, destroyed now.
    Released,
    /// Destroyed later, when its claim is deleted.
    Scheduled,
}

/// The direct effects of one request.
#[derive(Debug, Default)]
pub(crate) struct Effects {
    pub deleted: Vec<(ObjectKey, String)>,
    deleted_keys: BTreeSet<ObjectKey>,
    pub stops: Vec<Stop>,
    stop_index: BTreeMap<ObjectKey, usize>,
    pub volumes: Vec<VolumeLoss>,
    volume_keys: BTreeSet<(String, String)>,
    pub notes: Vec<String>,
    /// Stale ownerReferences of deleted objects.
    pub stale_owners: Vec<crate::impact::report::StaleOwner>,
    /// StatefulSet members deleted without their node's confirmation.
    pub unconfirmed: Vec<crate::impact::report::UnconfirmedDeletion>,
    /// Running pods whose ServiceAccount the request deletes.
    pub lost_service_accounts: Vec<crate::impact::report::LostServiceAccount>,
    /// Running pods whose PriorityClass or RuntimeClass the request deletes.
    pub lost_classes: Vec<crate::impact::report::LostClass>,
    /// Running pods a raised Pod Security enforce level refuses.
    pub pod_security: Vec<crate::impact::report::PodSecurityViolation>,
    /// Load balancer addresses released by an UPDATE (deleted Services are found in `deleted`).
    pub released_addresses: Vec<crate::impact::report::ReleasedAddress>,
    /// Ready pods a workload settles at when a rule knows better than "before minus stopped"
    /// (a scale-down settles at the new replica count).
    pub settles_at: BTreeMap<ObjectKey, usize>,
    /// Service numbers a rule works out itself, when the Service itself changes (a new selector
    /// moves it to other pods, which stopped pods cannot express). Reported instead of the
    /// numbers derived from stopped pods, and counted the same way.
    pub service_overrides: Vec<ServiceEffect>,
    /// PodDisruptionBudget numbers a rule works out itself, when the budget itself is created or
    /// changed (violated from the start). Reported instead of derived ones, counted the same way.
    pub pdb_overrides: Vec<PdbEffect>,
    /// Resources outside the cluster operators destroy (OperatorProfiles).
    pub external: Vec<crate::impact::report::ExternalResource>,
    /// Objects declaring the request's change intended (OperatorProfiles' intents).
    pub intended: Vec<crate::impact::report::IntendedBy>,
    /// ConfigMaps and Secrets deleted, whose running readers are found once every deletion is
    /// known ([`config::readers_lost`](super::config::readers_lost)).
    pub deleted_configs: Vec<ObjectKey>,
    /// Running pods' references to ConfigMap/Secret keys the request removes.
    pub broken_references: Vec<BrokenReference>,
    /// No rule of the estimate covers the request (see `Impact::modelled`).
    pub unmodelled: bool,
    /// The object the request changes, which the rule needs as the model holds it, is not in
    /// the model (see `Impact::missing`).
    pub missing: Option<ObjectKey>,
    /// What the request is, when a rule words it better than its verb and target (`action`,
    /// `activity` of the report): an UPDATE that removes a last finalizer completes a deletion.
    pub described_as: Option<(String, String)>,
    /// Volumes whose deleted claim pvc-protection holds for the pods still using it: deleted
    /// only if the request stops all those pods too ([`Effects::release_held_volumes`]).
    pub held_volumes: Vec<HeldVolume>,
}

/// A volume released by a deleted claim that running pods still mount.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HeldVolume {
    pub volume: ObjectKey,
    pub users: Vec<ObjectKey>,
    pub reason: String,
}

impl Effects {
    /// Records the ready endpoints a rule works out itself for Service `namespace/name`
    /// (reported instead of the numbers derived from stopped pods).
    pub fn service_figures(&mut self, namespace: &str, name: &str, ready_before: usize, ready_after: usize) {
        self.service_overrides.push(ServiceEffect {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            ready_before,
            ready_after,
            unserved_ports: Vec::new(),
        });
    }

    /// Records that Service `namespace/name`, with `ready_before` ready endpoints now, is left
    /// serving none of `ports` (replacing any numbers recorded for it before).
    pub fn unserved_ports(&mut self, namespace: &str, name: &str, ready_before: usize, ports: Vec<String>) {
        self.service_overrides
            .retain(|s| s.namespace != namespace || s.name != name);
        self.service_overrides.push(ServiceEffect {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            ready_before,
            ready_after: 0,
            unserved_ports: ports,
        });
    }

    /// Records that `object` disappears; false when it was already recorded.
    pub fn delete(&mut self, object: &Object, reason: impl Into<String>) -> bool {
        if !self.deleted_keys.insert(object.key.clone()) {
            return false;
        }
        self.deleted.push((object.key.clone(), reason.into()));
        true
    }

    /// Deletes the held volumes whose every user the request stops; the others stay until
    /// their pods stop (their data loss is counted all the same).
    pub fn release_held_volumes(&mut self) {
        let held = std::mem::take(&mut self.held_volumes);
        for volume in held {
            if volume.users.iter().all(|pod| self.stop_index.contains_key(pod))
                && self.deleted_keys.insert(volume.volume.clone())
            {
                self.deleted.push((volume.volume, volume.reason));
            }
        }
    }

    /// True when `key` is already recorded as deleted.
    pub fn is_deleted(&self, key: &ObjectKey) -> bool {
        self.deleted_keys.contains(key)
    }

    /// Records that `pod` stops. A later record of the same pod keeps the harsher reading
    /// (not replaced, down at the worst moment).
    pub fn stop(&mut self, pod: &Object, replaced: bool, at_worst: bool, reason: impl Into<String>) {
        if let Some(&index) = self.stop_index.get(&pod.key) {
            let existing = &mut self.stops[index];
            existing.replaced &= replaced;
            existing.at_worst |= at_worst;
            return;
        }
        self.stop_index.insert(pod.key.clone(), self.stops.len());
        self.stops.push(Stop {
            pod: pod.key.clone(),
            replaced,
            at_worst,
            reason: reason.into(),
        });
    }

    /// Records that the data of `namespace/claim` is lost.
    pub fn lose_volume(
        &mut self,
        namespace: &str,
        claim: &str,
        volume: Option<&str>,
        reason: impl Into<String>,
    ) {
        self.lose_volume_when(namespace, claim, volume, reason, Loss::Now);
    }

    /// Records a volume whose data is lost, saying when (see [`Loss`]).
    pub fn lose_volume_when(
        &mut self,
        namespace: &str,
        claim: &str,
        volume: Option<&str>,
        reason: impl Into<String>,
        loss: Loss,
    ) {
        if self.volume_keys.insert((namespace.to_owned(), claim.to_owned())) {
            self.volumes.push(VolumeLoss {
                namespace: namespace.to_owned(),
                claim: claim.to_owned(),
                volume: volume.map(str::to_owned),
                reason: reason.into(),
                in_use_by: Vec::new(),
                stateful_set: None,
                released: loss == Loss::Released,
                scheduled: loss == Loss::Scheduled,
            });
        }
    }

    /// The object the rule needs as the model holds it, `key`, is not there, and the request
    /// carries no copy of it though kube-apiserver has it (a `scale`: it is judged only for an
    /// object that exists): nothing is counted for it (`what` says what that means for the
    /// request), and the estimate says so (`Impact::missing`).
    pub fn subject_missing(&mut self, key: &ObjectKey, what: &str) {
        self.note(format!("{key} is not in the cluster model: {what}"));
        self.missing = Some(key.clone());
    }

    /// Adds a note about an assumption or gap.
    pub fn note(&mut self, note: impl Into<String>) {
        let note = note.into();
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }
}
