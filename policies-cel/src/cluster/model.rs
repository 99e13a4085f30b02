//! The cluster model: slim objects with the indexes that make every question of the impact
//! estimate cost what it touches, not what the cluster holds.
//!
//! Filled from snapshot files by the plugin and kept current by watches in the gateway
//! (`insert` replaces an object with the same key, `remove` takes it out; indexes follow).

use std::collections::HashSet;
use std::hash::{BuildHasher, Hash};

use foldhash::fast::RandomState;
use hashbrown::{HashMap, HashTable};

use std::sync::Arc;

use crate::cluster::index::{Classed, Flagged, Index, Pair, Posting, Triple, pull, push};
use crate::cluster::object::{
    ClassKind, ConfigUse, ConfigUses, Labels, Object, ObjectKey, OwnerRef, Owners, PodRequirements, Selector,
    Spec, Text,
};
use crate::cluster::view::ClusterView;

/// An object's slot in the model.
pub type ObjectId = u32;

/// How many objects of each kind the model holds, for summaries and metrics.
pub type KindCounts = Vec<(String, usize)>;

/// Slim objects and their indexes.
#[derive(Debug, Clone, Default)]
pub struct ClusterModel {
    objects: Vec<Option<Object>>,
    free: Vec<ObjectId>,
    hasher: RandomState,
    /// Objects by key; the key hashed is the one in the object (see [`key_hash`]).
    by_key: HashTable<ObjectId>,
    /// Objects by uid, hashed from the object's own uid (the last inserted wins).
    by_uid: HashTable<ObjectId>,
    /// owner uid → objects whose ownerReferences name it.
    dependents: Index<Text>,
    by_namespace: Index<Text>,
    /// (group, kind) → objects.
    by_kind: Index<(Text, Text)>,
    pods_by_node: Index<Text>,
    /// The node a local volume is pinned to (its name or node-local topology value) → volumes.
    volumes_by_node: Index<Text>,
    /// (namespace, label key, label value) → pods.
    pods_by_label: Index<(Text, Text, Text)>,
    /// (namespace, claim name) → pods mounting it.
    pods_by_claim: Index<(Text, Text)>,
    /// (is a Secret, namespace, name) of a ConfigMap or Secret → pods reading it.
    pods_by_config: Index<(bool, Text, Text)>,
    /// (kind, name) of a PriorityClass or RuntimeClass → pods naming it.
    pods_by_class: Index<(ClassKind, Text)>,
    /// (namespace, service) → EndpointSlices.
    slices_by_service: Index<(Text, Text)>,
    /// (namespace, kind) → the Services and PodDisruptionBudgets there: the objects that select
    /// pods, found without walking the namespace's other objects.
    selectors_by_namespace: Index<(Text, Text)>,
    /// What is kept of operators' kinds (`None`: what the built-in catalog's profiles name).
    kept: Option<crate::operators::KeptFields>,
    /// (namespace, claim name) → the PersistentVolume claimed.
    volume_by_claim: HashMap<(Text, Text), ObjectId, RandomState>,
    /// Strings that repeat across objects (label keys and values, namespaces, node names,
    /// kinds, owners...); an object's own name and uid are not kept here.
    strings: HashSet<Text>,
    /// One copy of each distinct label (and annotation, selector) list, see
    /// [`ClusterModel::share_labels`].
    label_sets: HashSet<Labels>,
    /// One copy of each distinct ownerReferences list, see [`ClusterModel::share_owners`].
    owner_lists: HashSet<Owners>,
    /// One copy of each distinct list of a pod's ConfigMap or Secret uses, see
    /// [`ClusterModel::share_config_uses`].
    config_uses: HashSet<ConfigUses>,
    /// One copy of each distinct set of pod requirements, see
    /// [`ClusterModel::share_requirements`].
    pod_requirements: HashSet<Arc<PodRequirements>>,
    /// The pod template fingerprints of workloads, where the loader recorded them
    /// ([`ClusterModel::insert_json`]).
    pod_templates: HashMap<ObjectId, u64, RandomState>,
}

/// The shared copy of `items` in `set`, added when new.
fn share_list<T: Hash + Eq>(set: &mut HashSet<Arc<[T]>>, items: Vec<T>) -> Arc<[T]> {
    if let Some(existing) = set.get(&items[..]) {
        return existing.clone();
    }
    let shared: Arc<[T]> = items.into();
    set.insert(shared.clone());
    shared
}

/// Drops `list` from `set` when the set and `list` itself are its only holders (the object
/// that held it has just left the model).
fn unshare_list<T: Hash + Eq>(set: &mut HashSet<Arc<[T]>>, list: &Arc<[T]>) {
    if Arc::strong_count(list) <= 2 && set.get(&list[..]).is_some_and(|s| Arc::ptr_eq(s, list)) {
        set.remove(&list[..]);
    }
}

/// Drops `item` from `set` when the set and `item` itself are its only holders.
fn unshare_one<T: Hash + Eq>(set: &mut HashSet<Arc<T>>, item: &Arc<T>) {
    if Arc::strong_count(item) <= 2 && set.get(&**item).is_some_and(|s| Arc::ptr_eq(s, item)) {
        set.remove(&**item);
    }
}

/// The hash of an object key, from its parts (so that a key can be looked up from `&str`s).
fn key_hash(hasher: &RandomState, group: &str, kind: &str, namespace: &str, name: &str) -> u64 {
    hasher.hash_one((group, kind, namespace, name))
}

fn object_key_hash(hasher: &RandomState, key: &ObjectKey) -> u64 {
    key_hash(hasher, &key.group, &key.kind, &key.namespace, &key.name)
}

fn slot(objects: &[Option<Object>], id: ObjectId) -> Option<&Object> {
    objects.get(id as usize)?.as_ref()
}

impl ClusterModel {
    /// An empty model.
    pub fn new() -> Self {
        Self::default()
    }

    /// Removes every object and every shared string and list, keeping the room allocated for
    /// them ([`with_scratch_model`](super::with_scratch_model)'s model, emptied after each use).
    pub(crate) fn empty(&mut self) {
        // Every field named: one added later is emptied here too, or the build says so.
        let Self {
            objects,
            free,
            hasher: _,
            by_key,
            by_uid,
            dependents,
            by_namespace,
            by_kind,
            pods_by_node,
            volumes_by_node,
            pods_by_label,
            pods_by_claim,
            pods_by_config,
            pods_by_class,
            slices_by_service,
            selectors_by_namespace,
            kept,
            volume_by_claim,
            strings,
            label_sets,
            owner_lists,
            config_uses,
            pod_requirements,
            pod_templates,
        } = self;
        objects.clear();
        free.clear();
        by_key.clear();
        by_uid.clear();
        for index in [dependents, by_namespace, pods_by_node, volumes_by_node] {
            index.clear();
        }
        for index in [by_kind, pods_by_claim, slices_by_service, selectors_by_namespace] {
            index.clear();
        }
        pods_by_label.clear();
        pods_by_config.clear();
        pods_by_class.clear();
        *kept = None;
        volume_by_claim.clear();
        strings.clear();
        label_sets.clear();
        owner_lists.clear();
        config_uses.clear();
        pod_requirements.clear();
        pod_templates.clear();
    }

    /// How many strings are interned (tests).
    #[cfg(test)]
    pub(crate) fn strings_len(&self) -> usize {
        self.strings.len()
    }

    /// Keeps, of objects inserted from now on, what `profiles` name (by default, what the
    /// built-in catalog names): set it before loading objects.
    pub fn keep_for(&mut self, profiles: &crate::operators::Profiles) {
        self.keep(profiles.kept().clone());
    }

    /// Keeps, of objects inserted from now on, `kept` (objects already in the model keep what
    /// they were projected with until they are inserted again).
    pub fn keep(&mut self, kept: crate::operators::KeptFields) {
        self.kept = Some(kept);
    }

    /// What the model keeps of an object of an operator's kind, when a profile names its kind.
    pub(crate) fn kept_of(
        &self,
        group: &str,
        kind: &str,
        object: &serde_json::Value,
    ) -> Option<serde_json::Value> {
        self.kept
            .as_ref()
            .unwrap_or_else(|| crate::operators::catalog().kept())
            .project(group, kind, object)
    }

    /// One shared copy of `s`, for strings that repeat across objects (label keys and values,
    /// namespaces, node names, kinds, owners). Strings of one object only (its name, its uid)
    /// should go through [`ClusterModel::share`] instead, which does not keep them.
    pub fn intern(&mut self, s: &str) -> Text {
        if let Some(existing) = self.strings.get(s) {
            return existing.clone();
        }
        let text: Text = s.into();
        self.strings.insert(text.clone());
        text
    }

    /// `s` as a string of its own, or the interned copy when one exists already (an object's
    /// uid is then the very string its dependents' ownerReferences hold). Never adds to the
    /// interned strings, so one-off names do not accumulate as objects come and go.
    pub fn share(&self, s: &str) -> Text {
        match self.strings.get(s) {
            Some(existing) => existing.clone(),
            None => s.into(),
        }
    }

    /// One shared copy of a sorted label list (labels, annotations, selectors): pods of one
    /// workload usually carry identical labels. Lists stay while an object of the model holds
    /// them ([`ClusterModel::remove`] drops the last holder's); lists projected but never
    /// inserted stay too, so the set grows with the distinct label lists seen, not with churn.
    pub fn share_labels(&mut self, labels: Vec<(Text, Text)>) -> Labels {
        share_list(&mut self.label_sets, labels)
    }

    /// One shared copy of an ownerReferences list (identical for every pod of a ReplicaSet or
    /// StatefulSet); kept like [`ClusterModel::share_labels`]'s lists.
    pub fn share_owners(&mut self, owners: Vec<OwnerRef>) -> Owners {
        share_list(&mut self.owner_lists, owners)
    }

    /// One shared copy of a pod's (sorted) ConfigMap or Secret uses (identical for the pods of
    /// one workload); kept like [`ClusterModel::share_labels`]'s lists.
    pub fn share_config_uses(&mut self, uses: Vec<ConfigUse>) -> ConfigUses {
        share_list(&mut self.config_uses, uses)
    }

    /// One shared copy of what a pod requires to exist (identical for the pods of one
    /// workload); kept like [`ClusterModel::share_labels`]'s lists.
    pub fn share_requirements(&mut self, requirements: PodRequirements) -> Arc<PodRequirements> {
        if let Some(existing) = self.pod_requirements.get(&requirements) {
            return existing.clone();
        }
        let shared = Arc::new(requirements);
        self.pod_requirements.insert(shared.clone());
        shared
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// True when the model holds nothing.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    fn find_key(&self, group: &str, kind: &str, namespace: &str, name: &str) -> Option<ObjectId> {
        let hash = key_hash(&self.hasher, group, kind, namespace, name);
        let objects = &self.objects;
        self.by_key
            .find(hash, |&id| {
                slot(objects, id).is_some_and(|o| {
                    let key = &o.key;
                    &*key.name == name
                        && &*key.namespace == namespace
                        && &*key.kind == kind
                        && &*key.group == group
                })
            })
            .copied()
    }

    /// Adds `object`, replacing any object with the same key.
    pub fn insert(&mut self, object: Object) {
        let key = &object.key;
        if self
            .find_key(&key.group, &key.kind, &key.namespace, &key.name)
            .is_some()
        {
            let key = key.clone();
            self.remove(&key);
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.objects.push(None);
                (self.objects.len() - 1) as ObjectId
            }
        };
        self.index(id, &object, true);
        let key_hash = object_key_hash(&self.hasher, &object.key);
        let uid_hash = object.uid.as_deref().map(|uid| self.hasher.hash_one(uid));
        self.objects[id as usize] = Some(object);
        let (objects, hasher) = (&self.objects, &self.hasher);
        self.by_key.insert_unique(key_hash, id, |&id| {
            slot(objects, id).map_or(0, |o| object_key_hash(hasher, &o.key))
        });
        if let Some(hash) = uid_hash {
            let uid_of = |id: ObjectId| slot(objects, id).and_then(|o| o.uid.as_deref());
            let uid = uid_of(id);
            match self.by_uid.entry(
                hash,
                |&other| uid_of(other) == uid,
                |&other| uid_of(other).map_or(0, |u| hasher.hash_one(u)),
            ) {
                hashbrown::hash_table::Entry::Occupied(mut entry) => *entry.get_mut() = id,
                hashbrown::hash_table::Entry::Vacant(entry) => {
                    entry.insert(id);
                }
            }
        }
    }

    /// Projects `object` (a Kubernetes object as JSON) and inserts it, replacing any object with
    /// the same key, with the fingerprint of its pod template (see [`template`](super::template):
    /// the model's objects keep no templates, this lets a what-if built from a manifest tell
    /// whether its template changes; it is dropped with the object, or when the object is
    /// replaced).
    /// A workload given without a template — the model's own slim JSON, re-inserted with a
    /// change such as a scale — keeps the fingerprint recorded for the object it replaces.
    pub fn insert_json(&mut self, object: &serde_json::Value) -> Result<(), super::project::ProjectError> {
        let projected = super::project::project(object, self)?;
        let key = projected.key.clone();
        // Fingerprinted once; the recorded one is looked up only for a workload without a template.
        let template = super::template::of_workload(object).or_else(|| {
            super::template::rolls_on_template_change(&key.group, &key.kind)
                .then(|| self.pod_template(&key))
                .flatten()
        });
        self.insert(projected);
        if let Some(template) = template {
            self.set_pod_template_fingerprint(&key, template);
        }
        Ok(())
    }

    /// Records `fingerprint` as the pod template of the object with `key` (one kept across a
    /// replacement of the object that does not carry its template, such as a scale).
    pub fn set_pod_template_fingerprint(&mut self, key: &ObjectKey, fingerprint: u64) {
        if let Some(id) = self.find_key(&key.group, &key.kind, &key.namespace, &key.name) {
            self.pod_templates.insert(id, fingerprint);
        }
    }

    /// The fingerprint of the pod template of the workload with `key`, when recorded.
    pub fn pod_template(&self, key: &ObjectKey) -> Option<u64> {
        let id = self.find_key(&key.group, &key.kind, &key.namespace, &key.name)?;
        self.pod_templates.get(&id).copied()
    }

    /// Removes the object with `key`, returning it.
    pub fn remove(&mut self, key: &ObjectKey) -> Option<Object> {
        let id = self.find_key(&key.group, &key.kind, &key.namespace, &key.name)?;
        self.pod_templates.remove(&id);
        let hash = object_key_hash(&self.hasher, key);
        if let Ok(entry) = self.by_key.find_entry(hash, |&other| other == id) {
            entry.remove();
        }
        let object = self.objects.get_mut(id as usize)?.take()?;
        if let Some(uid) = &object.uid
            && let Ok(entry) = self
                .by_uid
                .find_entry(self.hasher.hash_one(&**uid), |&other| other == id)
        {
            entry.remove();
        }
        self.index(id, &object, false);
        self.free.push(id);
        unshare_list(&mut self.label_sets, &object.labels);
        unshare_list(&mut self.label_sets, &object.annotations);
        unshare_list(&mut self.owner_lists, &object.owners);
        if let Spec::Pod(pod) = &object.spec {
            unshare_list(&mut self.config_uses, &pod.config_maps);
            unshare_list(&mut self.config_uses, &pod.secrets);
            unshare_one(&mut self.pod_requirements, &pod.requires);
        }
        Some(object)
    }

    /// Adds (`add`) or removes the index entries of `object`.
    fn index(&mut self, id: ObjectId, object: &Object, add: bool) {
        let key = &object.key;
        if add {
            push(&mut self.by_kind, (key.group.clone(), key.kind.clone()), id);
        } else {
            pull(&mut self.by_kind, &Pair(&key.group, &key.kind), id);
        }
        for owner in object.owners.iter() {
            if add {
                push(&mut self.dependents, owner.uid.clone(), id);
            } else {
                pull(&mut self.dependents, &*owner.uid, id);
            }
        }
        let ns = &key.namespace;
        if !ns.is_empty() {
            if add {
                push(&mut self.by_namespace, ns.clone(), id);
            } else {
                pull(&mut self.by_namespace, &**ns, id);
            }
        }
        match &object.spec {
            Spec::Pod(pod) => {
                if let Some(node) = &pod.node {
                    if add {
                        push(&mut self.pods_by_node, node.clone(), id);
                    } else {
                        pull(&mut self.pods_by_node, &**node, id);
                    }
                }
                for (k, v) in object.labels.iter() {
                    if add {
                        push(&mut self.pods_by_label, (ns.clone(), k.clone(), v.clone()), id);
                    } else {
                        pull(&mut self.pods_by_label, &Triple(ns, k, v), id);
                    }
                }
                for claim in &pod.claims {
                    if add {
                        push(&mut self.pods_by_claim, (ns.clone(), claim.clone()), id);
                    } else {
                        pull(&mut self.pods_by_claim, &Pair(ns, claim), id);
                    }
                }
                let uses = pod
                    .config_maps
                    .iter()
                    .map(|u| (false, u))
                    .chain(pod.secrets.iter().map(|u| (true, u)));
                for (secret, config) in uses {
                    if add {
                        push(
                            &mut self.pods_by_config,
                            (secret, ns.clone(), config.name.clone()),
                            id,
                        );
                    } else {
                        pull(&mut self.pods_by_config, &Flagged(secret, ns, &config.name), id);
                    }
                }
                let named = [
                    (ClassKind::Priority, &pod.requires.priority_class),
                    (ClassKind::Runtime, &pod.requires.runtime_class),
                ];
                for (kind, class) in named {
                    match class {
                        Some(class) if add => push(&mut self.pods_by_class, (kind, class.clone()), id),
                        Some(class) => pull(&mut self.pods_by_class, &Classed(kind, class), id),
                        None => {}
                    }
                }
            }
            Spec::EndpointSlice {
                service: Some(service),
                ..
            } => {
                if add {
                    push(&mut self.slices_by_service, (ns.clone(), service.clone()), id);
                } else {
                    pull(&mut self.slices_by_service, &Pair(ns, service), id);
                }
            }
            Spec::Service { .. } | Spec::PodDisruptionBudget { .. } if !ns.is_empty() => {
                if add {
                    push(
                        &mut self.selectors_by_namespace,
                        (ns.clone(), key.kind.clone()),
                        id,
                    );
                } else {
                    pull(&mut self.selectors_by_namespace, &Pair(ns, &key.kind), id);
                }
            }
            Spec::PersistentVolume { claim, node, .. } => {
                if let Some((claim_ns, claim)) = claim {
                    let index_key = Pair(claim_ns, claim);
                    if add {
                        self.volume_by_claim.insert((claim_ns.clone(), claim.clone()), id);
                    } else if self.volume_by_claim.get(&index_key) == Some(&id) {
                        self.volume_by_claim.remove(&index_key);
                    }
                }
                if let Some(node) = node {
                    if add {
                        push(&mut self.volumes_by_node, node.clone(), id);
                    } else {
                        pull(&mut self.volumes_by_node, &**node, id);
                    }
                }
            }
            _ => {}
        }
    }

    fn resolve(&self, posting: Option<&Posting>) -> Vec<&Object> {
        posting
            .map_or(&[][..], Posting::ids)
            .iter()
            .filter_map(|id| self.object(*id))
            .collect()
    }

    fn object(&self, id: ObjectId) -> Option<&Object> {
        slot(&self.objects, id)
    }

    /// Object counts per kind, sorted by kind.
    pub fn counts(&self) -> KindCounts {
        let mut counts: Vec<(String, usize)> = self
            .by_kind
            .iter()
            .map(|((group, kind), ids)| {
                let name = if group.is_empty() {
                    kind.to_string()
                } else {
                    format!("{kind}.{group}")
                };
                (name, ids.ids().len())
            })
            .collect();
        counts.sort();
        counts
    }

    /// Every object (in no particular order).
    pub fn iter(&self) -> impl Iterator<Item = &Object> {
        self.objects.iter().flatten()
    }
}

impl ClusterView for ClusterModel {
    fn get(&self, key: &ObjectKey) -> Option<&Object> {
        self.object(self.find_key(&key.group, &key.kind, &key.namespace, &key.name)?)
    }

    fn pod_template(&self, key: &ObjectKey) -> Option<u64> {
        ClusterModel::pod_template(self, key)
    }

    fn by_uid(&self, uid: &str) -> Option<&Object> {
        let objects = &self.objects;
        let id = self.by_uid.find(self.hasher.hash_one(uid), |&id| {
            slot(objects, id).and_then(|o| o.uid.as_deref()) == Some(uid)
        })?;
        self.object(*id)
    }

    fn dependents(&self, owner_uid: &str) -> Vec<&Object> {
        self.resolve(self.dependents.get(owner_uid))
    }

    fn in_namespace(&self, namespace: &str) -> Vec<&Object> {
        self.resolve(self.by_namespace.get(namespace))
    }

    fn of_kind(&self, group: &str, kind: &str) -> Vec<&Object> {
        self.resolve(self.by_kind.get(&Pair(group, kind)))
    }

    fn pods_on_node(&self, node: &str) -> Vec<&Object> {
        self.resolve(self.pods_by_node.get(node))
    }

    fn volumes_pinned_to(&self, node: &str) -> Vec<&Object> {
        self.resolve(self.volumes_by_node.get(node))
    }

    fn pods_matching(&self, namespace: &str, selector: &Selector) -> Vec<&Object> {
        // Start from the smallest posting list among the required labels.
        let candidates = selector
            .match_labels
            .iter()
            .map(|(k, v)| self.pods_by_label.get(&Triple(namespace, k, v)))
            .min_by_key(|ids| ids.map_or(0, |p| p.ids().len()));
        let pods: Vec<&Object> = match candidates {
            Some(ids) => self.resolve(ids),
            None => self
                .in_namespace(namespace)
                .into_iter()
                .filter(|o| o.pod().is_some())
                .collect(),
        };
        pods.into_iter().filter(|p| selector.matches(&p.labels)).collect()
    }

    fn pods_using_claim(&self, namespace: &str, claim: &str) -> Vec<&Object> {
        self.resolve(self.pods_by_claim.get(&Pair(namespace, claim)))
    }

    fn volume_of_claim(&self, namespace: &str, claim: &str) -> Option<&Object> {
        if let Some(id) = self.volume_by_claim.get(&Pair(namespace, claim)) {
            return self.object(*id);
        }
        let pvc = self.object(self.find_key("", "PersistentVolumeClaim", namespace, claim)?)?;
        match &pvc.spec {
            Spec::PersistentVolumeClaim { volume: Some(volume) } => {
                self.object(self.find_key("", "PersistentVolume", "", volume)?)
            }
            _ => None,
        }
    }

    fn pods_reading(&self, kind: &str, namespace: &str, name: &str) -> Vec<&Object> {
        let secret = match kind {
            "ConfigMap" => false,
            "Secret" => true,
            _ => return Vec::new(),
        };
        self.resolve(self.pods_by_config.get(&Flagged(secret, namespace, name)))
    }

    fn pods_of_class(&self, kind: ClassKind, name: &str) -> Vec<&Object> {
        self.resolve(self.pods_by_class.get(&Classed(kind, name)))
    }

    fn endpoint_slices(&self, namespace: &str, service: &str) -> Vec<&Object> {
        self.resolve(self.slices_by_service.get(&Pair(namespace, service)))
    }

    fn selecting_pod(&self, kind: &str, pod: &Object) -> Vec<&Object> {
        self.resolve(self.selectors_by_namespace.get(&Pair(&pod.key.namespace, kind)))
            .into_iter()
            .filter(|o| match &o.spec {
                Spec::Service {
                    selector: Some(labels),
                    ..
                } => {
                    !labels.is_empty()
                        && labels
                            .iter()
                            .all(|(k, v)| pod.labels.iter().any(|(pk, pv)| pk == k && pv == v))
                }
                Spec::PodDisruptionBudget { selector, .. } => selector.matches(&pod.labels),
                _ => false,
            })
            .collect()
    }

    fn object_count(&self) -> usize {
        self.len()
    }
}

/// Labels as a sorted list of shared strings.
pub fn labels_from<'a>(
    model: &mut ClusterModel,
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Labels {
    let mut labels: Vec<(Text, Text)> = pairs
        .into_iter()
        .map(|(k, v)| (model.intern(k), model.intern(v)))
        .collect();
    labels.sort();
    model.share_labels(labels)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::cluster::project;
    use serde_json::json;

    fn pod(model: &mut ClusterModel, name: &str, uid: &str) -> Object {
        let value = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop", "uid": uid, "labels": {"app": "web"}},
            "spec": {"nodeName": "node-a"}});
        project(&value, model).unwrap()
    }

    #[test]
    fn inserting_json_records_the_template_and_a_slim_copy_keeps_it() {
        let mut model = ClusterModel::new();
        let deployment = |image: &str| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": image}]}}}})
        };
        let key = ObjectKey::new("apps", "Deployment", "shop", "web");
        model.insert_json(&deployment("web:1")).unwrap();
        let first = model.pod_template(&key).unwrap();
        // The model's own slim JSON, scaled: no template in it, the recorded one stays.
        let mut slim = crate::cluster::json::to_json(model.get(&key).unwrap());
        slim["spec"]["replicas"] = json!(3);
        model.insert_json(&slim).unwrap();
        assert_eq!(model.pod_template(&key), Some(first));
        // A new template replaces it; an object that cannot be projected changes nothing.
        model.insert_json(&deployment("web:2")).unwrap();
        assert_ne!(model.pod_template(&key), Some(first));
        assert!(model.insert_json(&json!({"kind": "Pod"})).is_err());
        assert_eq!(model.len(), 1);
    }

    #[test]
    fn replacing_and_removing_keep_every_index_right() {
        let mut model = ClusterModel::new();
        for i in 0..100 {
            let object = pod(&mut model, &format!("web-{i}"), &format!("u-{i}"));
            model.insert(object);
        }
        // Replacing an object (same key, new uid) drops its old uid.
        let object = pod(&mut model, "web-7", "u-7b");
        model.insert(object);
        assert_eq!(model.len(), 100);
        assert!(model.by_uid("u-7").is_none());
        assert_eq!(&*model.by_uid("u-7b").unwrap().key.name, "web-7");
        let key = ObjectKey::new("", "Pod", "shop", "web-3");
        assert_eq!(model.remove(&key).unwrap().uid.as_deref(), Some("u-3"));
        assert!(model.get(&key).is_none() && model.by_uid("u-3").is_none());
        assert_eq!(model.pods_on_node("node-a").len(), 99);
        let selector = Selector {
            match_labels: Labels::from([("app".into(), "web".into())]),
            expressions: Box::default(),
        };
        assert_eq!(model.pods_matching("shop", &selector).len(), 99);
        assert_eq!(model.counts(), vec![("Pod".to_owned(), 99)]);
        // Pods' own names and uids are not interned: churn does not grow the string set.
        assert!(!model.strings.contains("web-5") && !model.strings.contains("u-5"));
    }

    #[test]
    fn the_services_and_budgets_selecting_a_pod_follow_replacements_and_removals() {
        let mut model = ClusterModel::new();
        let selecting = |kind: &str, namespace: &str, name: &str, app: &str| {
            let (api, spec) = match kind {
                "Service" => ("v1", json!({"selector": {"app": app}})),
                _ => (
                    "policy/v1",
                    json!({"selector": {"matchLabels": {"app": app}}, "minAvailable": 1}),
                ),
            };
            json!({"apiVersion": api, "kind": kind,
                "metadata": {"name": name, "namespace": namespace}, "spec": spec})
        };
        let web = pod(&mut model, "web-0", "u-0");
        model.insert(web.clone());
        for (kind, namespace, name, app) in [
            ("Service", "shop", "web", "web"),
            ("Service", "shop", "admin", "admin"),
            ("Service", "other", "web", "web"),
            ("PodDisruptionBudget", "shop", "web", "web"),
        ] {
            model.insert_json(&selecting(kind, namespace, name, app)).unwrap();
        }
        let names = |model: &ClusterModel, kind: &str| -> Vec<String> {
            model
                .selecting_pod(kind, &web)
                .iter()
                .map(|o| o.key.to_string())
                .collect()
        };
        assert_eq!(names(&model, "Service"), ["Service shop/web"]);
        assert_eq!(
            names(&model, "PodDisruptionBudget"),
            ["PodDisruptionBudget shop/web"]
        );
        // The Service now selects other pods; the budget is gone; another Service comes.
        model
            .insert_json(&selecting("Service", "shop", "web", "api"))
            .unwrap();
        model.remove(&ObjectKey::new("policy", "PodDisruptionBudget", "shop", "web"));
        model
            .insert_json(&selecting("Service", "shop", "web-internal", "web"))
            .unwrap();
        assert_eq!(names(&model, "Service"), ["Service shop/web-internal"]);
        assert!(names(&model, "PodDisruptionBudget").is_empty());
        model.remove(&ObjectKey::new("", "Service", "shop", "web-internal"));
        assert!(names(&model, "Service").is_empty());
    }
}
