//! CustomResourceDefinitions and their instances. Deleting a CRD deletes its instances (and
//! what they own), so the model keeps every custom resource's identity and owners: one
//! metadata-only watch per CRD, started when the CRD appears, restarted when its served
//! version or names change, stopped (its instances removed) when it goes.
//!
//! [`CrdSync`] feeds the CRDs themselves into the model and tells the supervisor which
//! instance watches should run ([`Command`]); it registers each new instance watch with the
//! model before the CRD list completes, so readiness also waits for the instances of the CRDs
//! present at start.

use std::collections::BTreeSet;
use std::sync::Arc;

use kube::core::ApiResource;
pub use policies_cel::cluster::api::kinds::instance_resource;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use crate::live::sync::ModelSync;
use crate::live::watch::{Change, Sink};
use crate::model::{Feeds, LiveModel};

/// What the CRD watch asks of the supervisor.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Watch the instances of the CRD `crd` as `resource` (restarting a watch of another
    /// version or names).
    Start { crd: String, resource: ApiResource },
    /// The CRD `crd` is gone: stop watching its instances and remove them.
    Stop { crd: String },
    /// A CRD list completed: stop the instance watches of every CRD not in it.
    Retain(BTreeSet<String>),
}

/// The name of the watch of `crd`'s instances.
pub fn instance_watch_name(crd: &str) -> String {
    format!("{crd} (instances)")
}

/// The CRDs' own objects into the model, and instance watches requested from the supervisor.
#[derive(Debug)]
pub struct CrdSync {
    objects: ModelSync,
    model: Arc<LiveModel>,
    commands: UnboundedSender<Command>,
    /// CRDs of the list in progress.
    listed: Option<BTreeSet<String>>,
}

impl CrdSync {
    pub fn new(model: Arc<LiveModel>, commands: UnboundedSender<Command>) -> Self {
        Self {
            objects: ModelSync::new(model.clone(), "apiextensions.k8s.io", "CustomResourceDefinition"),
            model,
            commands,
            listed: None,
        }
    }

    /// Asks for `crd`'s instance watch; returns the CRD's name.
    fn start(&self, json: &Value) -> Option<String> {
        let (crd, resource) = instance_resource(json)?;
        self.model
            .watch_registered(&instance_watch_name(&crd), Feeds::Model);
        self.send(Command::Start {
            crd: crd.clone(),
            resource,
        });
        Some(crd)
    }

    fn send(&self, command: Command) {
        // The supervisor outlives every watch it started; a closed channel means it is gone.
        let _ = self.commands.send(command);
    }
}

impl Sink for CrdSync {
    fn change(&mut self, change: Change) {
        match &change {
            Change::Listing => self.listed = Some(BTreeSet::new()),
            Change::Listed(json) => {
                if let Some(crd) = self.start(json)
                    && let Some(listed) = self.listed.as_mut()
                {
                    listed.insert(crd);
                }
            }
            Change::ListDone => {
                let listed = self.listed.take().unwrap_or_default();
                self.send(Command::Retain(listed));
            }
            Change::Applied(json) => {
                self.start(json);
            }
            Change::Deleted { name, .. } => self.send(Command::Stop { crd: name.clone() }),
        }
        self.objects.change(change);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use policies_cel::cluster::ClusterView;
    use serde_json::json;

    fn crd(name: &str, versions: Value) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": name},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets"}, "versions": versions}})
    }

    #[test]
    fn lists_and_events_become_commands() {
        let model = Arc::new(LiveModel::new());
        let (commands, mut inbox) = tokio::sync::mpsc::unbounded_channel();
        let mut sync = CrdSync::new(model.clone(), commands);
        let versions = json!([{"name": "v1", "served": true, "storage": true}]);
        sync.change(Change::Listing);
        sync.change(Change::Listed(crd("widgets.example.com", versions)));
        sync.change(Change::ListDone);
        assert!(
            model
                .watch_states()
                .contains_key("widgets.example.com (instances)")
        );
        assert!(
            matches!(inbox.try_recv().unwrap(), Command::Start { crd, .. } if crd == "widgets.example.com")
        );
        assert_eq!(
            inbox.try_recv().unwrap(),
            Command::Retain(BTreeSet::from(["widgets.example.com".to_owned()]))
        );
        assert_eq!(
            model
                .read()
                .of_kind("apiextensions.k8s.io", "CustomResourceDefinition")
                .len(),
            1
        );
        sync.change(Change::Deleted {
            namespace: String::new(),
            name: "widgets.example.com".into(),
        });
        assert_eq!(
            inbox.try_recv().unwrap(),
            Command::Stop {
                crd: "widgets.example.com".into()
            }
        );
        assert!(model.read().is_empty());
    }
}
