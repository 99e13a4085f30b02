//! Applying one kind's changes to the shared model: each object projected into its slim form
//! and inserted, deletions removed, and a list replacing the kind's objects at once (objects
//! that were not listed — deleted while the watch was down — leave the model).
//!
//! The write lock is held for one change at a time. Listed objects are projected as they
//! arrive (each under a short lock, for the model's shared strings) and inserted together when
//! the list completes, under one lock, so readers never see half a list.

use std::collections::HashSet;
use std::sync::Arc;

use policies_cel::cluster::{ClusterModel, ClusterView, Object, ObjectKey, project};
use serde_json::Value;

use crate::live::watch::{Change, Sink};
use crate::model::LiveModel;

/// One kind's objects in the model.
#[derive(Debug)]
pub struct ModelSync {
    model: Arc<LiveModel>,
    group: String,
    kind: String,
    /// Objects of the list in progress.
    listed: Option<Vec<Object>>,
}

impl ModelSync {
    /// A sink for the objects of `group`/`kind` (the group is empty for the core group).
    pub fn new(model: Arc<LiveModel>, group: &str, kind: &str) -> Self {
        Self {
            model,
            group: group.to_owned(),
            kind: kind.to_owned(),
            listed: None,
        }
    }

    /// Projects `json` (interning its strings in `model`); logs and skips what cannot be.
    fn project(&self, json: &Value, model: &mut ClusterModel) -> Option<Object> {
        match project(json, model) {
            Ok(object) => Some(object),
            Err(error) => {
                let name = json["metadata"]["name"].as_str().unwrap_or_default();
                let namespace = json["metadata"]["namespace"].as_str().unwrap_or_default();
                tracing::warn!(kind = %self.kind, %namespace, %name, %error,
                    "object skipped: it could not be projected");
                None
            }
        }
    }

    /// Inserts `json`'s object unless the model holds an equal one already: most updates
    /// (a pod's status heartbeat, a restart count) change nothing the projection keeps, and a
    /// replacement costs index updates under the write lock.
    fn apply(&self, json: &Value) {
        let mut model = self.model.write_untouched();
        if let Some(object) = self.project(json, &mut model)
            && model.get(&object.key) != Some(&object)
        {
            model.insert(object);
        }
    }

    /// Applies a completed list: the difference with the model is found under a read lock
    /// (only this watch writes this kind, so it stays valid), then applied under one write
    /// lock — a re-list that changes little holds the write lock for little. Unchanged
    /// objects are dropped after the lock is released.
    fn finish_list(&mut self) {
        let listed = self.listed.take().unwrap_or_default();
        let count = listed.len();
        let (changed, unchanged, gone) = {
            let model = self.model.read_briefly();
            let keys: HashSet<&ObjectKey> = listed.iter().map(|o| &o.key).collect();
            let gone: Vec<ObjectKey> = model
                .of_kind(&self.group, &self.kind)
                .into_iter()
                .map(|o| &o.key)
                .filter(|key| !keys.contains(key))
                .cloned()
                .collect();
            let (changed, unchanged): (Vec<Object>, Vec<Object>) =
                listed.into_iter().partition(|o| model.get(&o.key) != Some(o));
            (changed, unchanged, gone)
        };
        let updated = changed.len();
        let mut model = self.model.write_untouched();
        for key in &gone {
            model.remove(key);
        }
        for object in changed {
            model.insert(object);
        }
        drop(model);
        drop(unchanged);
        tracing::debug!(kind = %self.kind, count, updated, removed = gone.len(), "list applied");
    }

    /// Removes every object of the kind (the kind is no longer served: its CRD was deleted).
    pub fn clear(&mut self) {
        self.listed = None;
        let mut model = self.model.write_untouched();
        let keys: Vec<ObjectKey> = model
            .of_kind(&self.group, &self.kind)
            .into_iter()
            .map(|o| o.key.clone())
            .collect();
        for key in &keys {
            model.remove(key);
        }
    }
}

impl Sink for ModelSync {
    fn change(&mut self, change: Change) {
        match change {
            Change::Listing => self.listed = Some(Vec::new()),
            Change::Listed(json) => match self.listed.as_mut() {
                Some(_) => {
                    let object = self.project(&json, &mut self.model.write_untouched());
                    if let (Some(object), Some(listed)) = (object, self.listed.as_mut()) {
                        listed.push(object);
                    }
                }
                None => self.apply(&json),
            },
            Change::ListDone => self.finish_list(),
            Change::Applied(json) => self.apply(&json),
            Change::Deleted { namespace, name } => {
                let key = ObjectKey::new(&self.group, &self.kind, &namespace, &name);
                self.model.write_untouched().remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn pod(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop", "uid": format!("u-{name}")},
            "spec": {"nodeName": "n1"}})
    }

    fn names(model: &LiveModel) -> Vec<String> {
        let model = model.read();
        let mut names: Vec<String> = model
            .of_kind("", "Pod")
            .iter()
            .map(|o| o.key.name.to_string())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_list_replaces_the_kind_at_once_and_events_follow() {
        let live = Arc::new(LiveModel::new());
        let mut sync = ModelSync::new(live.clone(), "", "Pod");
        // Another kind's objects are left alone by the pods' lists.
        let mut nodes = ModelSync::new(live.clone(), "", "Node");
        nodes.change(Change::Applied(
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
        ));

        sync.change(Change::Listing);
        sync.change(Change::Listed(pod("a")));
        sync.change(Change::Listed(pod("b")));
        assert!(names(&live).is_empty(), "half a list is never visible");
        sync.change(Change::ListDone);
        assert_eq!(names(&live), ["a", "b"]);

        sync.change(Change::Applied(pod("c")));
        sync.change(Change::Deleted {
            namespace: "shop".into(),
            name: "a".into(),
        });
        assert_eq!(names(&live), ["b", "c"]);

        // A re-list: b was deleted while disconnected, d created.
        sync.change(Change::Listing);
        sync.change(Change::Listed(pod("c")));
        sync.change(Change::Listed(pod("d")));
        sync.change(Change::ListDone);
        assert_eq!(names(&live), ["c", "d"]);
        assert_eq!(live.read().of_kind("", "Node").len(), 1);

        sync.clear();
        assert!(names(&live).is_empty());
    }

    #[test]
    fn updates_that_change_nothing_kept_leave_the_object_in_place() {
        let live = Arc::new(LiveModel::new());
        let mut sync = ModelSync::new(live.clone(), "", "Pod");
        let key = ObjectKey::new("", "Pod", "shop", "a");
        let name_of = |live: &LiveModel| live.read().get(&key).unwrap().key.name.clone();
        sync.change(Change::Applied(pod("a")));
        let first = name_of(&live);
        let mut heartbeat = pod("a");
        heartbeat["status"] = json!({"containerStatuses": [{"name": "app", "restartCount": 3}]});
        sync.change(Change::Applied(heartbeat));
        assert!(
            Arc::ptr_eq(&first, &name_of(&live)),
            "an update the projection ignores replaced the object"
        );
        let mut moved = pod("a");
        moved["spec"]["nodeName"] = json!("n2");
        sync.change(Change::Applied(moved));
        assert!(!Arc::ptr_eq(&first, &name_of(&live)));
        assert_eq!(live.read().pods_on_node("n2").len(), 1);
    }

    #[test]
    fn objects_that_cannot_be_projected_are_skipped() {
        let live = Arc::new(LiveModel::new());
        let mut sync = ModelSync::new(live.clone(), "", "Pod");
        sync.change(Change::Applied(pod("a")));
        sync.change(Change::Applied(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "a", "namespace": "shop", "labels": {"x": 1}}})));
        assert_eq!(names(&live), ["a"], "the last good version stays");
        assert_eq!(
            live.age(),
            None,
            "applying changes does not by itself make the model current"
        );
    }
}
