//! [`Layered`]: a view of the cluster model plus objects it has not caught up with yet — what
//! the request itself says exists (a DELETE's `oldObject`) when the model, fed by watches, lags
//! behind the API server. Each query answers from both layers, so the added objects are found
//! by every index (uid, owner, namespace, selector) exactly as the model's own are.

use crate::cluster::object::{ClassKind, Object, ObjectKey, Selector};
use crate::cluster::{ClusterModel, ClusterView};

/// `base` with the objects of `added` on top. The added objects are expected not to be in
/// `base` (a key in both is answered from `base`).
pub struct Layered<'a> {
    base: &'a dyn ClusterView,
    added: ClusterModel,
}

impl<'a> Layered<'a> {
    /// `base` with `added`'s objects.
    pub fn new(base: &'a dyn ClusterView, added: ClusterModel) -> Self {
        Self { base, added }
    }
}

impl std::fmt::Debug for Layered<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Layered")
            .field("base_objects", &self.base.object_count())
            .field("added", &self.added.len())
            .finish()
    }
}

/// Both layers' answers to a query that lists objects.
fn both<'v>(mut base: Vec<&'v Object>, added: Vec<&'v Object>) -> Vec<&'v Object> {
    base.extend(added);
    base
}

impl ClusterView for Layered<'_> {
    fn get(&self, key: &ObjectKey) -> Option<&Object> {
        self.base.get(key).or_else(|| self.added.get(key))
    }

    fn by_uid(&self, uid: &str) -> Option<&Object> {
        self.base.by_uid(uid).or_else(|| self.added.by_uid(uid))
    }

    fn dependents(&self, owner_uid: &str) -> Vec<&Object> {
        both(self.base.dependents(owner_uid), self.added.dependents(owner_uid))
    }

    fn in_namespace(&self, namespace: &str) -> Vec<&Object> {
        both(
            self.base.in_namespace(namespace),
            self.added.in_namespace(namespace),
        )
    }

    fn of_kind(&self, group: &str, kind: &str) -> Vec<&Object> {
        both(self.base.of_kind(group, kind), self.added.of_kind(group, kind))
    }

    fn pods_on_node(&self, node: &str) -> Vec<&Object> {
        both(self.base.pods_on_node(node), self.added.pods_on_node(node))
    }

    fn volumes_pinned_to(&self, node: &str) -> Vec<&Object> {
        both(
            self.base.volumes_pinned_to(node),
            self.added.volumes_pinned_to(node),
        )
    }

    fn pods_matching(&self, namespace: &str, selector: &Selector) -> Vec<&Object> {
        both(
            self.base.pods_matching(namespace, selector),
            self.added.pods_matching(namespace, selector),
        )
    }

    fn pods_using_claim(&self, namespace: &str, claim: &str) -> Vec<&Object> {
        both(
            self.base.pods_using_claim(namespace, claim),
            self.added.pods_using_claim(namespace, claim),
        )
    }

    fn volume_of_claim(&self, namespace: &str, claim: &str) -> Option<&Object> {
        self.base
            .volume_of_claim(namespace, claim)
            .or_else(|| self.added.volume_of_claim(namespace, claim))
    }

    fn pods_reading(&self, kind: &str, namespace: &str, name: &str) -> Vec<&Object> {
        both(
            self.base.pods_reading(kind, namespace, name),
            self.added.pods_reading(kind, namespace, name),
        )
    }

    fn pods_of_class(&self, kind: ClassKind, name: &str) -> Vec<&Object> {
        both(
            self.base.pods_of_class(kind, name),
            self.added.pods_of_class(kind, name),
        )
    }

    fn endpoint_slices(&self, namespace: &str, service: &str) -> Vec<&Object> {
        both(
            self.base.endpoint_slices(namespace, service),
            self.added.endpoint_slices(namespace, service),
        )
    }

    fn selecting_pod(&self, kind: &str, pod: &Object) -> Vec<&Object> {
        both(
            self.base.selecting_pod(kind, pod),
            self.added.selecting_pod(kind, pod),
        )
    }

    fn object_count(&self) -> usize {
        self.base.object_count() + self.added.len()
    }

    fn pod_template(&self, key: &ObjectKey) -> Option<u64> {
        self.base.pod_template(key)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::cluster::project;
    use serde_json::json;

    fn insert(model: &mut ClusterModel, value: serde_json::Value) {
        let object = project(&value, model).unwrap();
        model.insert(object);
    }

    #[test]
    fn an_added_owner_is_found_by_uid_and_its_dependents_by_the_base() {
        let mut base = ClusterModel::new();
        insert(
            &mut base,
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "db-0", "namespace": "data", "uid": "p0", "labels": {"app": "db"},
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "s1", "controller": true}]},
                "spec": {"nodeName": "n1"}}),
        );
        let mut added = ClusterModel::new();
        insert(
            &mut added,
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": {"name": "db", "namespace": "data", "uid": "s1"},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "db"}}}}),
        );
        let view = Layered::new(&base, added);
        let key = ObjectKey::new("apps", "StatefulSet", "data", "db");
        assert_eq!(view.get(&key).unwrap().uid.as_deref(), Some("s1"));
        assert_eq!(&*view.by_uid("s1").unwrap().key.name, "db");
        assert_eq!(view.dependents("s1").len(), 1);
        assert_eq!(view.in_namespace("data").len(), 2);
        assert_eq!(view.object_count(), 2);
        assert!(view.by_uid("nobody").is_none());
    }

    #[test]
    fn the_base_s_pod_template_fingerprints_show_through() {
        let mut base = ClusterModel::new();
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [{"name": "c", "image": "i:1"}]}}}});
        base.insert_json(&deployment).unwrap();
        let view = Layered::new(&base, ClusterModel::new());
        let key = ObjectKey::new("apps", "Deployment", "shop", "web");
        assert!(view.pod_template(&key).is_some());
        assert_eq!(view.pod_template(&key), base.pod_template(&key));
    }
}
