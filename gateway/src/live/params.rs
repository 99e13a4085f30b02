//! Params objects from the cluster: a policy with a `paramKind` (a ValidatingAdmissionPolicy, a
//! SafetyPolicy — the built-in pack's `SafetyPackParams`) reads its params from objects of that
//! kind, which in a cluster live in the cluster. For every kind the enforced set's policies
//! name, one watch feeds its objects — with their values, Secrets and ConfigMaps included, since
//! policies read them — into [`PolicyReloader::update_cluster_params`], under the key
//! `apiVersion/kind/namespace/name`. The supervisor reconciles the watches with the set's kinds
//! every heartbeat ([`Params::reconcile`]): a kind no policy names any more stops, and its
//! objects leave the set. A kind the gateway cannot resolve to a resource (a CRD not in the
//! model yet) is retried at the next heartbeat. A params watch feeds the policy set
//! ([`Feeds::Policies`]): readiness waits for its first list, but its failures leave the cluster
//! model current (the last good set keeps serving).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::Arc;

use kube::core::{ApiResource, DynamicObject};
use policies_cel::ClusterView;
use policies_cel::cluster::api::kinds;
use policies_cel::cluster::{ClusterModel, Spec};
use policies_cel::pack::params::SafetyPackParams;
use policies_cel::policy::PolicySet;

use crate::live::stable::{Listing, Update, stable_text};
use crate::live::strip::Values;
use crate::live::watch::{self, Change, Sink, Watch};
use crate::model::{Feeds, LiveModel};
use crate::policies::PolicyReloader;

/// A kind policies take params of: (apiVersion, kind).
pub type ParamKind = (String, String);

/// The param kinds the set's policies name.
pub fn needed(set: &PolicySet) -> BTreeSet<ParamKind> {
    set.policies
        .iter()
        .filter_map(|policy| policy.param_kind.clone())
        .collect()
}

/// The resource to watch `kind` through: a built-in kind the model knows (ConfigMap, Secret,
/// ...), the pack's SafetyPackParams, or a custom resource whose CRD is in `model`.
pub fn resource(kind: &ParamKind, model: &ClusterModel) -> Option<ApiResource> {
    let (api_version, kind) = kind;
    let known = kinds::builtin()
        .into_iter()
        .chain([ApiResource::erase::<SafetyPackParams>(&())])
        .find(|r| r.api_version == *api_version && r.kind == *kind);
    if known.is_some() {
        return known;
    }
    let (group, version) = api_version.split_once('/')?;
    model
        .of_kind("apiextensions.k8s.io", "CustomResourceDefinition")
        .into_iter()
        .find_map(|crd| match &crd.spec {
            Spec::CustomResourceDefinition {
                group: crd_group,
                kind: crd_kind,
                plural,
                ..
            } if **crd_group == *group && **crd_kind == **kind => Some(ApiResource {
                group: group.to_owned(),
                version: version.to_owned(),
                api_version: api_version.clone(),
                kind: kind.clone(),
                plural: plural.to_string(),
            }),
            _ => None,
        })
}

/// The name a params watch is reported under.
pub fn watch_name(kind: &ParamKind) -> String {
    format!("{} {} (params)", kind.1, kind.0)
}

/// One param kind's watch into the reloader. It rebuilds the set only when the kind's objects
/// change (a status-only update or an identical re-list rebuilds nothing): the reloader's
/// sources hold the objects, compared there.
#[derive(Debug)]
pub struct ParamsSync {
    reloader: Arc<PolicyReloader>,
    /// `apiVersion/kind/`: the keys of this kind's objects.
    prefix: String,
    /// Objects of the list in progress.
    listing: Listing<String>,
}

impl ParamsSync {
    pub fn new(reloader: Arc<PolicyReloader>, kind: &ParamKind) -> Self {
        Self {
            reloader,
            prefix: format!("{}/{}/", kind.0, kind.1),
            listing: Listing::default(),
        }
    }

    fn key(&self, namespace: &str, name: &str) -> String {
        key(&self.prefix, namespace, name)
    }

    /// Applies `edit` to the cluster's params (it says whether anything changed); the set is
    /// rebuilt when something did.
    fn edit(&self, what: &str, edit: impl FnOnce(&mut BTreeMap<String, String>) -> bool) {
        match self.reloader.update_cluster_params(edit) {
            Ok(true) => tracing::info!(%what, "params reloaded"),
            Ok(false) => {}
            Err(error) => tracing::error!(%what, %error,
                "params failed to load; the last good policy set keeps serving"),
        }
    }

    /// Removes every object of this kind from the set.
    pub fn clear(&self) {
        let prefix = self.prefix.clone();
        let result = self.reloader.update_cluster_params(|params| {
            let before = params.len();
            params.retain(|key, _| !key.starts_with(&prefix));
            params.len() != before
        });
        if let Err(error) = result {
            tracing::error!(%prefix, %error, "params failed to load after a kind was dropped");
        }
    }
}

fn key(prefix: &str, namespace: &str, name: &str) -> String {
    format!("{prefix}{namespace}/{name}")
}

/// The objects of `params` whose keys start with `prefix` (all of one kind), in key order.
fn of_kind<'a>(
    params: &'a BTreeMap<String, String>,
    prefix: &'a str,
) -> impl Iterator<Item = (&'a String, &'a String)> {
    params
        .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
        .take_while(move |(key, _)| key.starts_with(prefix))
}

impl Sink for ParamsSync {
    fn change(&mut self, change: Change) {
        let prefix = self.prefix.as_str();
        let entry = |json| stable_text(json).map(|s| (key(prefix, &s.namespace, &s.name), s.text));
        let Some(update) = self.listing.feed(change, entry) else {
            return;
        };
        match update {
            Update::Listed(listed) => {
                let prefix = self.prefix.clone();
                self.edit(&format!("{prefix}* list"), |params| {
                    if of_kind(params, &prefix).eq(listed.iter()) {
                        return false;
                    }
                    params.retain(|key, _| !key.starts_with(&prefix));
                    params.extend(listed);
                    true
                });
            }
            Update::Applied(key, text) => self.edit(&key.clone(), |params| {
                if params.get(&key) == Some(&text) {
                    return false;
                }
                params.insert(key, text);
                true
            }),
            Update::Deleted { namespace, name } => {
                let key = self.key(&namespace, &name);
                self.edit(&key, |params| params.remove(&key).is_some());
            }
        }
    }
}

/// The running params watches, by kind.
pub(crate) struct Params {
    client: kube::Client,
    model: Arc<LiveModel>,
    reloader: Arc<PolicyReloader>,
    timeout: u32,
    running: HashMap<ParamKind, crate::live::supervisor::Task>,
}

impl Params {
    pub(crate) fn new(
        client: kube::Client,
        model: Arc<LiveModel>,
        reloader: Arc<PolicyReloader>,
        timeout: u32,
    ) -> Self {
        Self {
            client,
            model,
            reloader,
            timeout,
            running: HashMap::new(),
        }
    }

    /// Starts a watch for each kind the enforced set names and stops the others.
    pub(crate) async fn reconcile(&mut self) {
        let needed = needed(&self.reloader.store().current());
        let gone: Vec<ParamKind> = self
            .running
            .keys()
            .filter(|k| !needed.contains(*k))
            .cloned()
            .collect();
        for kind in gone {
            if let Some(task) = self.running.remove(&kind) {
                task.stop().await;
                ParamsSync::new(self.reloader.clone(), &kind).clear();
                self.model.watch_forgotten(&watch_name(&kind));
                tracing::info!(api_version = %kind.0, kind = %kind.1, "stopped watching params");
            }
        }
        for kind in needed {
            if self.running.contains_key(&kind) {
                continue;
            }
            let resource = resource(&kind, &self.model.read_briefly());
            let Some(resource) = resource else {
                tracing::debug!(api_version = %kind.0, kind = %kind.1, "param kind not served yet");
                continue;
            };
            let name = watch_name(&kind);
            self.model.watch_registered(&name, Feeds::Policies);
            let mut watch =
                Watch::<DynamicObject>::all(self.client.clone(), name.clone(), resource, self.timeout);
            watch.values = Values::Keep;
            let sink = ParamsSync::new(self.reloader.clone(), &kind);
            tracing::info!(api_version = %kind.0, kind = %kind.1, "watching params");
            let task =
                crate::live::supervisor::Task::spawn(name, watch::run(watch, self.model.clone(), sink));
            self.running.insert(kind, task);
        }
    }

    /// The running watches, for the supervisor's health check.
    pub(crate) fn tasks(&mut self) -> impl Iterator<Item = &mut crate::live::supervisor::Task> {
        self.running.values_mut()
    }
}

impl std::fmt::Debug for Params {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Params")
            .field("running", &self.running.keys().collect::<Vec<_>>())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::PolicySources;
    use serde_json::json;

    #[test]
    fn only_a_real_change_rebuilds_the_set() {
        let reloader = Arc::new(PolicyReloader::start(PolicySources::default()).unwrap());
        let kind = ("v1".to_owned(), "ConfigMap".to_owned());
        let mut sync = ParamsSync::new(reloader.clone(), &kind);
        let limits = |max: &str, status: &str| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "limits", "namespace": "ops", "resourceVersion": status},
                "data": {"max": max}, "status": {"seen": status}})
        };
        let generation = || reloader.store().status().generation;
        sync.change(Change::Applied(limits("5", "1")));
        assert_eq!(generation(), 2);
        sync.change(Change::Applied(limits("5", "2")));
        assert_eq!(generation(), 2, "a status-only update rebuilt the set");
        sync.change(Change::Applied(limits("6", "3")));
        assert_eq!(generation(), 3);
        assert_eq!(reloader.store().current().params[0]["data"]["max"], "6");
        sync.change(Change::Deleted {
            namespace: "ops".into(),
            name: "limits".into(),
        });
        assert!(reloader.store().current().params.is_empty());
    }

    #[test]
    fn an_identical_relist_rebuilds_nothing_and_other_kinds_stay() {
        let reloader = Arc::new(PolicyReloader::start(PolicySources::default()).unwrap());
        let config_maps = ("v1".to_owned(), "ConfigMap".to_owned());
        let secrets = ("v1".to_owned(), "Secret".to_owned());
        let object = |kind: &str, name: &str, version: &str| {
            json!({"apiVersion": "v1", "kind": kind,
                "metadata": {"name": name, "namespace": "ops", "resourceVersion": version}})
        };
        let list = |sync: &mut ParamsSync, objects: Vec<serde_json::Value>| {
            sync.change(Change::Listing);
            for object in objects {
                sync.change(Change::Listed(object));
            }
            sync.change(Change::ListDone);
        };
        let generation = || reloader.store().status().generation;
        let mut secret_sync = ParamsSync::new(reloader.clone(), &secrets);
        secret_sync.change(Change::Applied(object("Secret", "token", "1")));
        let mut sync = ParamsSync::new(reloader.clone(), &config_maps);
        list(
            &mut sync,
            vec![object("ConfigMap", "a", "1"), object("ConfigMap", "b", "1")],
        );
        assert_eq!(generation(), 3);
        assert_eq!(reloader.store().current().params.len(), 3);
        list(
            &mut sync,
            vec![object("ConfigMap", "b", "2"), object("ConfigMap", "a", "2")],
        );
        assert_eq!(generation(), 3, "an identical re-list rebuilt the set");
        list(&mut sync, vec![object("ConfigMap", "b", "3")]);
        assert_eq!(generation(), 4);
        let names: Vec<_> = reloader
            .store()
            .current()
            .params
            .iter()
            .map(|p| p["metadata"]["name"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(names, ["b", "token"]);
        sync.change(Change::Deleted {
            namespace: "ops".into(),
            name: "gone".into(),
        });
        assert_eq!(generation(), 4, "deleting an unknown object rebuilt the set");
        sync.clear();
        assert_eq!(reloader.store().current().params.len(), 1);
    }
}
