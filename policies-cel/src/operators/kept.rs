//! What the cluster model keeps of the objects of operators' kinds: their name, namespace,
//! labels and finalizers, and the fields their profiles name (`keep:`), so that a deletion
//! reached by a cascade, and an intent, can be read without the object's full body.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

/// The fields kept per (group, kind), and per finalizer for the profiles of a pattern (an
/// object of any kind carrying the finalizer is kept).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeptFields(Arc<Kept>);

#[derive(Debug, Clone, Default, PartialEq)]
struct Kept {
    by_kind: HashMap<(String, String), Vec<Vec<String>>>,
    by_finalizer: Vec<(String, Vec<Vec<String>>)>,
}

fn add_paths(paths: &mut Vec<Vec<String>>, more: &[Vec<String>]) {
    for path in more {
        if !paths.contains(path) {
            paths.push(path.clone());
        }
    }
}

/// True when `finalizer` is `own` or `own/...`.
fn names(own: &str, finalizer: &str) -> bool {
    finalizer == own
        || finalizer
            .strip_prefix(own)
            .is_some_and(|rest| rest.starts_with('/'))
}

impl KeptFields {
    /// The fields of `profiles`' kinds (every profile of a kind adds its paths).
    pub fn of<'a>(profiles: impl IntoIterator<Item = &'a crate::operators::Profile>) -> Self {
        let mut kept = Kept::default();
        for profile in profiles {
            if profile.is_pattern() {
                for finalizer in &profile.finalizers {
                    match kept.by_finalizer.iter_mut().find(|(f, _)| f == finalizer) {
                        Some((_, paths)) => add_paths(paths, &profile.keep),
                        None => kept.by_finalizer.push((finalizer.clone(), profile.keep.clone())),
                    }
                }
                continue;
            }
            let paths = kept
                .by_kind
                .entry((profile.group.clone(), profile.kind.clone()))
                .or_default();
            add_paths(paths, &profile.keep);
        }
        Self(Arc::new(kept))
    }

    /// True when objects of `group`/`kind` are kept whatever their finalizers.
    pub fn keeps(&self, group: &str, kind: &str) -> bool {
        !self.0.by_kind.is_empty() && self.0.by_kind.contains_key(&(group.to_owned(), kind.to_owned()))
    }

    /// The paths kept of an object of `group`/`kind`: its kind's, or those of the patterns whose
    /// finalizers it carries.
    fn paths_of(&self, group: &str, kind: &str, object: &Value) -> Option<Vec<Vec<String>>> {
        if let Some(paths) = self.0.by_kind.get(&(group.to_owned(), kind.to_owned())) {
            return Some(paths.clone());
        }
        if self.0.by_finalizer.is_empty() {
            return None;
        }
        let finalizers = object.get("metadata")?.get("finalizers")?.as_array()?;
        let mut paths = None;
        for finalizer in finalizers.iter().filter_map(Value::as_str) {
            for (own, own_paths) in &self.0.by_finalizer {
                if names(own, finalizer) {
                    add_paths(paths.get_or_insert_with(Vec::new), own_paths);
                }
            }
        }
        paths
    }

    /// What the model keeps of `object` (of `group`/`kind`), or `None` when its kind is not kept.
    /// A custom object carrying a finalizer is kept whatever the profiles (its identity and
    /// finalizers): an operator acts on its deletion, and the estimate says whether any profile
    /// explains what it does.
    pub fn project(&self, group: &str, kind: &str, object: &Value) -> Option<Value> {
        let paths = match self.paths_of(group, kind, object) {
            Some(paths) => paths,
            None if custom_with_finalizers(group, kind, object) => Vec::new(),
            None => return None,
        };
        let mut kept = Map::new();
        for field in ["apiVersion", "kind"] {
            if let Some(value) = object.get(field) {
                kept.insert(field.to_owned(), value.clone());
            }
        }
        let mut metadata = Map::new();
        for field in ["name", "namespace", "labels", "finalizers", "deletionTimestamp"] {
            if let Some(value) = object.get("metadata").and_then(|m| m.get(field)) {
                metadata.insert(field.to_owned(), value.clone());
            }
        }
        kept.insert("metadata".to_owned(), Value::Object(metadata));
        for path in &paths {
            copy_path(object, &mut kept, path);
        }
        Some(Value::Object(kept))
    }
}

/// True for an object of a kind Kubernetes does not define that carries a finalizer.
fn custom_with_finalizers(group: &str, kind: &str, object: &Value) -> bool {
    crate::cluster::object::builtin_group(kind) != Some(group)
        && object
            .get("metadata")
            .and_then(|m| m.get("finalizers"))
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty())
}

/// Copies the value at `path` in `from` into `into`, creating the maps on the way.
fn copy_path(from: &Value, into: &mut Map<String, Value>, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let Some(value) = path.iter().try_fold(from, |value, key| value.get(key)) else {
        return;
    };
    let mut at = into;
    for key in parents {
        let entry = at.entry(key.clone()).or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(next) = entry else {
            return;
        };
        at = next;
    }
    at.insert(last.clone(), value.clone());
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn split(paths: &[&str]) -> Vec<Vec<String>> {
        paths
            .iter()
            .map(|p| p.split('.').map(str::to_owned).collect())
            .collect()
    }

    fn kept(paths: &[&str]) -> KeptFields {
        let mut kept = Kept::default();
        kept.by_kind
            .insert(("keda.sh".to_owned(), "ScaledObject".to_owned()), split(paths));
        KeptFields(Arc::new(kept))
    }

    #[test]
    fn a_pattern_keeps_any_kind_carrying_its_finalizer() {
        let kept = KeptFields(Arc::new(Kept {
            by_kind: HashMap::new(),
            by_finalizer: vec![(
                "finalizer.managedresource.crossplane.io".to_owned(),
                split(&["spec.deletionPolicy"]),
            )],
        }));
        let managed = json!({"kind": "Bucket", "metadata": {"name": "b",
            "finalizers": ["finalizer.managedresource.crossplane.io"]}, "spec": {"deletionPolicy": "Delete", "forProvider": {}}});
        assert_eq!(
            kept.project("s3.aws.upbound.io", "Bucket", &managed).unwrap()["spec"],
            json!({"deletionPolicy": "Delete"})
        );
        let plain =
            json!({"kind": "Bucket", "metadata": {"name": "b"}, "spec": {"deletionPolicy": "Delete"}});
        assert!(kept.project("s3.aws.upbound.io", "Bucket", &plain).is_none());
        // Another finalizer: kept as any custom object with a finalizer is, without the fields.
        let other = json!({"kind": "Bucket", "metadata": {"name": "b", "finalizers": ["other"]}, "spec": {"deletionPolicy": "Delete"}});
        assert!(
            kept.project("s3.aws.upbound.io", "Bucket", &other)
                .unwrap()
                .get("spec")
                .is_none()
        );
    }

    #[test]
    fn keeps_identity_and_the_named_fields_only() {
        let object = json!({
            "apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
            "metadata": {"name": "web", "namespace": "shop", "uid": "u", "labels": {"a": "b"},
                         "annotations": {"secret-ish": "x"}},
            "spec": {"scaleTargetRef": {"name": "web"}, "minReplicaCount": 0, "triggers": [{"type": "cron"}]},
            "status": {"health": {}}
        });
        let projected = kept(&["spec.scaleTargetRef", "spec.minReplicaCount", "spec.absent"])
            .project("keda.sh", "ScaledObject", &object)
            .unwrap();
        assert_eq!(
            projected,
            json!({
                "apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
                "metadata": {"name": "web", "namespace": "shop", "labels": {"a": "b"}},
                "spec": {"scaleTargetRef": {"name": "web"}, "minReplicaCount": 0}
            })
        );
    }

    #[test]
    fn other_kinds_are_not_kept_unless_custom_with_a_finalizer() {
        let kept = kept(&["spec"]);
        assert!(kept.project("apps", "Deployment", &json!({})).is_none());
        let widget = json!({"kind": "Widget", "metadata": {"name": "w", "finalizers": ["widgets.example.com/cleanup"]}, "spec": {"size": 3}});
        assert_eq!(
            kept.project("widgets.example.com", "Widget", &widget).unwrap(),
            json!({"kind": "Widget", "metadata": {"name": "w", "finalizers": ["widgets.example.com/cleanup"]}})
        );
        let plain = json!({"kind": "Widget", "metadata": {"name": "w"}});
        assert!(kept.project("widgets.example.com", "Widget", &plain).is_none());
        let pvc = json!({"kind": "PersistentVolumeClaim", "metadata": {"name": "c", "finalizers": ["kubernetes.io/pvc-protection"]}});
        assert!(kept.project("", "PersistentVolumeClaim", &pvc).is_none());
        assert!(!kept.keeps("keda.sh", "ScaledJob"));
        assert!(kept.keeps("keda.sh", "ScaledObject"));
    }
}
