//! A set of the model's objects in key order, each once: what the estimate collects (the pods a
//! request stops, the Services, budgets and workloads over them), looks up and lists. A sorted
//! vector of references: the sets are small and built once per request, and one sort and a
//! binary search are far less code to fetch, when a request finds them out of the caches, than
//! a B-tree map for each kind of key.

use std::cmp::Ordering;

use crate::cluster::{Object, ObjectKey};

/// Objects sorted by key, without repeats.
#[derive(Debug, Default)]
pub(crate) struct ByKey<'a>(Vec<&'a Object>);

impl<'a> ByKey<'a> {
    /// The objects of `objects`, each once (the first of those with one key).
    pub(crate) fn new(objects: impl IntoIterator<Item = &'a Object>) -> Self {
        let mut objects: Vec<&'a Object> = objects.into_iter().collect();
        objects.sort_by(by_key);
        objects.dedup_by(|later, earlier| later.key == earlier.key);
        Self(objects)
    }

    /// True when an object of the set has `key`.
    pub(crate) fn contains(&self, key: &ObjectKey) -> bool {
        self.0.binary_search_by(|object| object.key.cmp(key)).is_ok()
    }

    /// The objects, in key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &'a Object> + '_ {
        self.0.iter().copied()
    }
}

/// One comparison for every sort of the set, so its sort is one piece of code.
fn by_key(a: &&Object, b: &&Object) -> Ordering {
    a.key.cmp(&b.key)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::cluster::{ClusterModel, project};
    use serde_json::json;

    fn pod(model: &mut ClusterModel, namespace: &str, name: &str) -> Object {
        let value = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": format!("{namespace}-{name}")}});
        project(&value, model).unwrap()
    }

    #[test]
    fn objects_are_kept_once_in_key_order_and_found_by_key() {
        let mut model = ClusterModel::new();
        let (b, a, c) = (
            pod(&mut model, "x", "b"),
            pod(&mut model, "x", "a"),
            pod(&mut model, "w", "z"),
        );
        let set = ByKey::new([&b, &a, &b, &c, &a]);
        let names: Vec<String> = set
            .iter()
            .map(|o| format!("{}/{}", o.key.namespace, o.key.name))
            .collect();
        assert_eq!(names, ["w/z", "x/a", "x/b"]);
        assert!(set.contains(&a.key) && set.contains(&c.key));
        let other = pod(&mut model, "x", "c");
        assert!(!set.contains(&other.key));
        assert!(!ByKey::default().contains(&a.key));
    }
}
