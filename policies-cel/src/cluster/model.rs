//! The cluster model: slim objects with the indexes that make every question of the impact
//! estimate cost what it touches, not what the cluster holds.
//!
//! Filled from snapshot files by the plugin and kept current by watches in the gateway
//! (`insert` replaces an object with the same key, `remove` takes it out; indexes follow).

use std::collections::{HashMap, HashSet};

use crate::cluster::object::{Labels, Object, ObjectKey, Selector, Spec, Text};
use crate::cluster::view::ClusterView;

/// An object's slot in the model.
pub type ObjectId = u32;

/// How many objects of each kind the model holds, for summaries and metrics.
pub type KindCounts = Vec<(String, usize)>;

/// Slim objects and their indexes.
#[derive(Debug, Default)]
pub struct ClusterModel {
    objects: Vec<Option<Object>>,
    free: Vec<ObjectId>,
    by_key: HashMap<ObjectKey, ObjectId>,
    by_uid: HashMap<Text, ObjectId>,
    /// owner uid → objects whose ownerReferences name it.
    dependents: HashMap<Text, Vec<ObjectId>>,
    by_namespace: HashMap<Text, Vec<ObjectId>>,
    /// (group, kind) → objects.
    by_kind: HashMap<(Text, Text), Vec<ObjectId>>,
    pods_by_node: HashMap<Text, Vec<ObjectId>>,
    /// (namespace, label key, label value) → pods.
    pods_by_label: HashMap<(Text, Text, Text), Vec<ObjectId>>,
    /// (namespace, claim name) → pods mounting it.
    pods_by_claim: HashMap<(Text, Text), Vec<ObjectId>>,
    /// (kind, namespace, name) of a ConfigMap or Secret → pods reading it.
    pods_by_config: HashMap<(Text, Text, Text), Vec<ObjectId>>,
    /// (namespace, service) → EndpointSlices.
    slices_by_service: HashMap<(Text, Text), Vec<ObjectId>>,
    /// (namespace, claim name) → the PersistentVolume claimed.
    volume_by_claim: HashMap<(Text, Text), ObjectId>,
    strings: HashSet<Text>,
}

fn push(index: &mut Vec<ObjectId>, id: ObjectId) {
    index.push(id);
}

fn pull<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Vec<ObjectId>>, key: &K, id: ObjectId) {
    if let Some(ids) = map.get_mut(key) {
        ids.retain(|i| *i != id);
        if ids.is_empty() {
            map.remove(key);
        }
    }
}

impl ClusterModel {
    /// An empty model.
    pub fn new() -> Self {
        Self::default()
    }

    /// One shared copy of `s` (label keys, namespaces and node names repeat across objects).
    pub fn intern(&mut self, s: &str) -> Text {
        if let Some(existing) = self.strings.get(s) {
            return existing.clone();
        }
        let text: Text = s.into();
        self.strings.insert(text.clone());
        text
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// True when the model holds nothing.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// Adds `object`, replacing any object with the same key.
    pub fn insert(&mut self, object: Object) {
        if self.by_key.contains_key(&object.key) {
            let key = object.key.clone();
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
        self.by_key.insert(object.key.clone(), id);
        if let Some(uid) = &object.uid {
            self.by_uid.insert(uid.clone(), id);
        }
        self.objects[id as usize] = Some(object);
    }

    /// Removes the object with `key`, returning it.
    pub fn remove(&mut self, key: &ObjectKey) -> Option<Object> {
        let id = self.by_key.remove(key)?;
        let object = self.objects.get_mut(id as usize)?.take()?;
        if let Some(uid) = &object.uid
            && self.by_uid.get(uid) == Some(&id)
        {
            self.by_uid.remove(uid);
        }
        self.index(id, &object, false);
        self.free.push(id);
        Some(object)
    }

    /// Adds (`add`) or removes the index entries of `object`.
    fn index(&mut self, id: ObjectId, object: &Object, add: bool) {
        let key = &object.key;
        let entry = |map: &mut HashMap<(Text, Text), Vec<ObjectId>>, k: (Text, Text)| {
            if add {
                push(map.entry(k).or_default(), id)
            } else {
                pull(map, &k, id)
            }
        };
        entry(&mut self.by_kind, (key.group.clone(), key.kind.clone()));
        for owner in &object.owners {
            if add {
                push(self.dependents.entry(owner.uid.clone()).or_default(), id);
            } else {
                pull(&mut self.dependents, &owner.uid, id);
            }
        }
        if !key.namespace.is_empty() {
            if add {
                push(self.by_namespace.entry(key.namespace.clone()).or_default(), id);
            } else {
                pull(&mut self.by_namespace, &key.namespace, id);
            }
        }
        let ns = key.namespace.clone();
        match &object.spec {
            Spec::Pod(pod) => {
                if let Some(node) = &pod.node {
                    if add {
                        push(self.pods_by_node.entry(node.clone()).or_default(), id);
                    } else {
                        pull(&mut self.pods_by_node, node, id);
                    }
                }
                for (k, v) in &object.labels {
                    let index_key = (ns.clone(), k.clone(), v.clone());
                    if add {
                        push(self.pods_by_label.entry(index_key).or_default(), id);
                    } else {
                        pull(&mut self.pods_by_label, &index_key, id);
                    }
                }
                for claim in &pod.claims {
                    let index_key = (ns.clone(), claim.clone());
                    if add {
                        push(self.pods_by_claim.entry(index_key).or_default(), id);
                    } else {
                        pull(&mut self.pods_by_claim, &index_key, id);
                    }
                }
                let uses = pod
                    .config_maps
                    .iter()
                    .map(|u| ("ConfigMap", u))
                    .chain(pod.secrets.iter().map(|u| ("Secret", u)));
                for (kind, config) in uses {
                    let index_key = (Text::from(kind), ns.clone(), config.name.clone());
                    if add {
                        push(self.pods_by_config.entry(index_key).or_default(), id);
                    } else {
                        pull(&mut self.pods_by_config, &index_key, id);
                    }
                }
            }
            Spec::EndpointSlice {
                service: Some(service),
                ..
            } => {
                let index_key = (ns.clone(), service.clone());
                if add {
                    push(self.slices_by_service.entry(index_key).or_default(), id);
                } else {
                    pull(&mut self.slices_by_service, &index_key, id);
                }
            }
            Spec::PersistentVolume {
                claim: Some((claim_ns, claim)),
                ..
            } => {
                let index_key = (claim_ns.clone(), claim.clone());
                if add {
                    self.volume_by_claim.insert(index_key, id);
                } else if self.volume_by_claim.get(&index_key) == Some(&id) {
                    self.volume_by_claim.remove(&index_key);
                }
            }
            _ => {}
        }
    }

    fn resolve(&self, ids: Option<&Vec<ObjectId>>) -> Vec<&Object> {
        ids.into_iter()
            .flatten()
            .filter_map(|id| self.objects.get(*id as usize)?.as_ref())
            .collect()
    }

    fn object(&self, id: ObjectId) -> Option<&Object> {
        self.objects.get(id as usize)?.as_ref()
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
                (name, ids.len())
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
        self.object(*self.by_key.get(key)?)
    }

    fn by_uid(&self, uid: &str) -> Option<&Object> {
        self.object(*self.by_uid.get(uid)?)
    }

    fn dependents(&self, owner_uid: &str) -> Vec<&Object> {
        self.resolve(self.dependents.get(owner_uid))
    }

    fn in_namespace(&self, namespace: &str) -> Vec<&Object> {
        self.resolve(self.by_namespace.get(namespace))
    }

    fn of_kind(&self, group: &str, kind: &str) -> Vec<&Object> {
        self.resolve(self.by_kind.get(&(Text::from(group), Text::from(kind))))
    }

    fn pods_on_node(&self, node: &str) -> Vec<&Object> {
        self.resolve(self.pods_by_node.get(node))
    }

    fn pods_matching(&self, namespace: &str, selector: &Selector) -> Vec<&Object> {
        let ns: Text = namespace.into();
        // Start from the smallest posting list among the required labels.
        let candidates = selector
            .match_labels
            .iter()
            .map(|(k, v)| self.pods_by_label.get(&(ns.clone(), k.clone(), v.clone())))
            .min_by_key(|ids| ids.map_or(0, Vec::len));
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
        self.resolve(
            self.pods_by_claim
                .get(&(Text::from(namespace), Text::from(claim))),
        )
    }

    fn volume_of_claim(&self, namespace: &str, claim: &str) -> Option<&Object> {
        if let Some(id) = self
            .volume_by_claim
            .get(&(Text::from(namespace), Text::from(claim)))
        {
            return self.object(*id);
        }
        let pvc = self.get(&ObjectKey::new("", "PersistentVolumeClaim", namespace, claim))?;
        match &pvc.spec {
            Spec::PersistentVolumeClaim { volume: Some(volume) } => {
                self.get(&ObjectKey::new("", "PersistentVolume", "", volume))
            }
            _ => None,
        }
    }

    fn pods_reading(&self, kind: &str, namespace: &str, name: &str) -> Vec<&Object> {
        self.resolve(
            self.pods_by_config
                .get(&(Text::from(kind), Text::from(namespace), Text::from(name))),
        )
    }

    fn endpoint_slices(&self, namespace: &str, service: &str) -> Vec<&Object> {
        self.resolve(
            self.slices_by_service
                .get(&(Text::from(namespace), Text::from(service))),
        )
    }

    fn selecting_pod(&self, kind: &str, pod: &Object) -> Vec<&Object> {
        self.resolve(self.by_namespace.get(&pod.key.namespace))
            .into_iter()
            .filter(|o| &*o.key.kind == kind)
            .filter(|o| match &o.spec {
                Spec::Service {
                    selector: Some(labels),
                } => {
                    !labels.is_empty()
                        && labels
                            .iter()
                            .all(|(k, v)| pod.labels.contains(&(k.clone(), v.clone())))
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
    let mut labels: Labels = pairs
        .into_iter()
        .map(|(k, v)| (model.intern(k), model.intern(v)))
        .collect();
    labels.sort();
    labels
}
