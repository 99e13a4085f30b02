//! UPDATE of a ConfigMap or Secret that removes keys. Nothing stops now: a running pod keeps
//! the values it started with. A pod that requires a removed key (env `valueFrom` or a volume's
//! `items`, not `optional`) fails on its next start — `CreateContainerConfigError`, or a volume
//! that cannot mount — so each such reference is reported in `brokenReferences`. A pod reading
//! the whole object (`envFrom`, a volume without `items`) only loses the variable or file;
//! an optional reference skips it. Both are noted.
//!
//! A DELETE removes every key, and the object itself: a pod that requires the whole object
//! (`envFrom` or a volume without `items`, not `optional`) fails on its next start too, reported
//! with key `*`.
//!
//! Keys are compared between `oldObject` and `object` (`data` + `binaryData` of a ConfigMap,
//! `data` + `stringData` of a Secret). Secret values are never read.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use crate::cluster::object::ConfigUse;
use crate::cluster::{ClusterView, Object, ObjectKey, Spec};
use crate::impact::effects::Effects;
use crate::impact::report::BrokenReference;
use crate::impact::subject::Subject;

/// Estimates an UPDATE of the subject ConfigMap or Secret.
pub(crate) fn estimate(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let key = &subject.key;
    let Some(old) = old_keys(view, subject) else {
        effects.note(format!(
            "{key} as it was is unknown (no oldObject, not in the model)"
        ));
        return;
    };
    let new = keys_of(&key.kind, subject.object());
    let removed: Vec<String> = old.difference(&new).cloned().collect();
    if removed.is_empty() {
        return;
    }
    let mut readers = running_readers(view, &subject.key);
    readers.sort_by(|a, b| a.key.name.cmp(&b.key.name));
    for pod in &readers {
        check_pod(pod, &key.kind, &key.name, &removed, false, effects);
    }
    note_broken(&subject.key, &removed, effects);
}

/// Estimates a DELETE of the subject ConfigMap or Secret (the cascade is estimated apart).
pub(crate) fn deleted(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    object_deleted(view, &subject.key, effects);
}

/// The running pods that require the ConfigMaps and Secrets the request deletes (directly, by a
/// cascade, or through an operator: a cert-manager Certificate's Secret goes with it), once every
/// deletion is known: a pod the same request deletes loses nothing.
/// Only the request's own target gets a note when no running pod requires it.
pub(crate) fn readers_lost(view: &dyn ClusterView, target: &ObjectKey, effects: &mut Effects) {
    for key in std::mem::take(&mut effects.deleted_configs) {
        let before = effects.broken_references.len();
        if key == *target {
            object_deleted(view, &key, effects);
        } else {
            let notes = effects.notes.len();
            object_deleted(view, &key, effects);
            if effects.broken_references.len() == before {
                effects.notes.truncate(notes);
            }
        }
    }
}

/// The running pods, not deleted by the request, that require the deleted ConfigMap or Secret
/// `key`.
fn object_deleted(view: &dyn ClusterView, key: &ObjectKey, effects: &mut Effects) {
    let mut readers = running_readers(view, key);
    readers.retain(|pod| !effects.is_deleted(&pod.key));
    readers.sort_by(|a, b| a.key.name.cmp(&b.key.name));
    // Every key goes, whatever the request's oldObject lists: the ones that matter are those
    // the readers reference.
    let removed: Vec<String> = readers
        .iter()
        .flat_map(|pod| uses(pod, &key.kind, &key.name))
        .flat_map(|u| u.keys.iter().flatten())
        .map(|k| k.to_string())
        .collect::<BTreeSet<String>>()
        .into_iter()
        .collect();
    for pod in &readers {
        check_pod(pod, &key.kind, &key.name, &removed, true, effects);
    }
    let mut keys = removed;
    keys.push(WHOLE_OBJECT.to_owned());
    note_broken(key, &keys, effects);
}

/// The key reported when a pod requires the whole deleted object.
const WHOLE_OBJECT: &str = "*";

/// Pods, not terminating or finished, that read the ConfigMap or Secret `key`.
fn running_readers<'a>(view: &'a dyn ClusterView, key: &ObjectKey) -> Vec<&'a Object> {
    view.pods_reading(&key.kind, &key.namespace, &key.name)
        .into_iter()
        .filter(|p| p.running_pod().is_some())
        .collect()
}

/// One note per removed key naming the pods that require it.
fn note_broken(key: &ObjectKey, removed: &[String], effects: &mut Effects) {
    let mut any = false;
    for removed_key in removed {
        let pods: Vec<&str> = effects
            .broken_references
            .iter()
            .filter(|b| b.kind == *key.kind && b.name == *key.name && b.key == *removed_key)
            .map(|b| b.pod.as_str())
            .collect();
        if pods.is_empty() {
            continue;
        }
        any = true;
        let note = format!(
            "pods {} require key {removed_key} of {key}, which the change removes: they keep running but fail on \
             their next start (CreateContainerConfigError, or a volume that cannot mount)",
            pods.join(", ")
        );
        effects.note(note);
    }
    if !any {
        effects.note(format!(
            "{key} loses key(s) {}: no running pod requires them",
            removed.join(", ")
        ));
    }
}

/// The key names of a ConfigMap's or Secret's JSON (never its values).
fn keys_of(kind: &str, object: Option<&Json>) -> BTreeSet<String> {
    let fields: [&str; 2] = if kind == "Secret" {
        ["data", "stringData"]
    } else {
        ["data", "binaryData"]
    };
    fields
        .iter()
        .filter_map(|field| object?.get(*field)?.as_object())
        .flat_map(|map| map.keys().cloned())
        .collect()
}

/// The keys before the change: from `oldObject`, else from the model.
fn old_keys(view: &dyn ClusterView, subject: &Subject) -> Option<BTreeSet<String>> {
    if let Some(old) = subject.old_object().filter(|j| !j.is_null()) {
        return Some(keys_of(&subject.key.kind, Some(old)));
    }
    match &view.get(&subject.key)?.spec {
        Spec::ConfigMap { keys } | Spec::Secret { keys } => {
            Some(keys.iter().map(|k| k.to_string()).collect())
        }
        _ => None,
    }
}

/// What `pod` reads from the ConfigMap or Secret `kind` `name`.
fn uses<'a>(pod: &'a Object, kind: &str, name: &str) -> Vec<&'a ConfigUse> {
    let Some(spec) = pod.pod() else { return Vec::new() };
    let all = if kind == "Secret" {
        &spec.secrets
    } else {
        &spec.config_maps
    };
    all.iter().filter(|u| &*u.name == name).collect()
}

/// Records the broken references of `pod` to the `removed` keys (and, when the object itself is
/// `gone`, to the whole object) and notes the harmless ones.
fn check_pod(pod: &Object, kind: &str, name: &str, removed: &[String], gone: bool, effects: &mut Effects) {
    let uses = uses(pod, kind, name);
    let reads = |key: &str, required: bool| {
        uses.iter().any(|u| {
            u.required == required && u.keys.as_ref().is_some_and(|ks| ks.iter().any(|k| &**k == key))
        })
    };
    let mut optional = Vec::new();
    for key in removed {
        if reads(key, true) {
            effects.broken_references.push(BrokenReference {
                namespace: pod.key.namespace.as_ref().to_owned(),
                pod: pod.key.name.as_ref().to_owned(),
                kind: kind.to_owned(),
                name: name.to_owned(),
                key: key.clone(),
            });
        } else if reads(key, false) {
            optional.push(key.as_str());
        }
    }
    if !optional.is_empty() {
        effects.note(format!(
            "pod {} reads key(s) {} of {kind} {}/{name} as optional: they are skipped on its next start",
            pod.key.name,
            optional.join(", "),
            pod.key.namespace
        ));
    }
    let whole = |required: bool| uses.iter().any(|u| u.keys.is_none() && u.required == required);
    if gone && whole(true) {
        effects.broken_references.push(BrokenReference {
            namespace: pod.key.namespace.as_ref().to_owned(),
            pod: pod.key.name.as_ref().to_owned(),
            kind: kind.to_owned(),
            name: name.to_owned(),
            key: WHOLE_OBJECT.to_owned(),
        });
    } else if !gone && whole(true) || whole(false) {
        effects.note(format!(
            "pod {} reads all of {kind} {}/{name} (envFrom or a volume without items): the removed keys \
             disappear from its environment on restart and from the volume on the next kubelet sync",
            pod.key.name, pod.key.namespace
        ));
    }
}
