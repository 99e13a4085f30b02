//! Policies from the cluster: SafetyPolicy and OperatorProfile (`suture.dev/v1alpha1`), ValidatingAdmissionPolicy
//! and ValidatingAdmissionPolicyBinding (`admissionregistration.k8s.io/v1`) objects join the
//! enforced set through [`PolicyReloader::update_cluster_objects`], each under the key
//! `Kind/name`, as JSON without status, managedFields, resourceVersion or the last-applied
//! annotation (so a status-only update does not rebuild the set).
//!
//! The three kinds' initial lists are applied as one rebuild, once all three are in (a binding
//! listed before its policy would otherwise fail to load). A binding whose policy exists
//! neither in the cluster nor in the policy files is left out, as kube-apiserver ignores it
//! (deleting a policy before its binding must not wedge every later reload). A rebuild that
//! fails (a broken object) keeps the last good set serving — the reloader's rule — and the
//! error, which names the object's key, is logged and kept in the store's reload status.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use kube::core::ApiResource;
use serde_json::Value;

use crate::live::stable::{Listing, Update, stable_text};
use crate::live::watch::{Change, Sink};
use crate::policies::PolicyReloader;

/// The source-name prefix the reloader gives cluster objects.
const CLUSTER_SOURCE: &str = "cluster:";
const VAP: &str = "ValidatingAdmissionPolicy";
const BINDING: &str = "ValidatingAdmissionPolicyBinding";

/// The policy kinds watched in the cluster.
pub fn resources() -> Vec<ApiResource> {
    let resource = |group: &str, version: &str, kind: &str, plural: &str| ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: format!("{group}/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    };
    vec![
        resource("suture.dev", "v1alpha1", "SafetyPolicy", "safetypolicies"),
        resource("suture.dev", "v1alpha1", "OperatorProfile", "operatorprofiles"),
        resource(
            "admissionregistration.k8s.io",
            "v1",
            VAP,
            "validatingadmissionpolicies",
        ),
        resource(
            "admissionregistration.k8s.io",
            "v1",
            BINDING,
            "validatingadmissionpolicybindings",
        ),
    ]
}

/// One cluster policy object.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    text: String,
    /// A binding's `spec.policyName`.
    binds: Option<String>,
}

#[derive(Debug, Default)]
struct Inner {
    objects: BTreeMap<String, Entry>,
    /// Kinds whose first list is not in yet: no rebuild before they all are.
    unlisted: BTreeSet<String>,
    /// What the reloader was last given.
    given: Option<BTreeMap<String, String>>,
}

/// The cluster's policy objects, shared by the policy watches (one [`PolicySync`] per kind).
#[derive(Debug)]
pub struct ClusterPolicies {
    reloader: Arc<PolicyReloader>,
    inner: Mutex<Inner>,
}

impl ClusterPolicies {
    /// Cluster policies of `kinds` feeding `reloader`; the first rebuild waits for every kind's list.
    pub fn new(reloader: Arc<PolicyReloader>, kinds: &[&str]) -> Arc<Self> {
        Arc::new(Self {
            reloader,
            inner: Mutex::new(Inner {
                unlisted: kinds.iter().map(|k| (*k).to_owned()).collect(),
                ..Inner::default()
            }),
        })
    }

    /// The sink of `kind`'s watch.
    pub fn sink(self: &Arc<Self>, kind: &str) -> PolicySync {
        PolicySync {
            shared: self.clone(),
            kind: kind.to_owned(),
            listing: Listing::default(),
        }
    }

    fn edit(&self, what: &str, f: impl FnOnce(&mut Inner)) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut inner);
        if !inner.unlisted.is_empty() {
            return;
        }
        let effective = self.effective(&inner.objects);
        if inner.given.as_ref() == Some(&effective) {
            return;
        }
        let count = effective.len();
        let result = self
            .reloader
            .update_cluster_objects(|objects| *objects = effective.clone());
        match result {
            Ok(()) => tracing::info!(%what, objects = count, "cluster policies reloaded"),
            Err(error) => tracing::error!(%what, %error,
                "cluster policies failed to load; the last good policy set keeps serving"),
        }
        inner.given = Some(effective);
    }

    /// The objects to load: all but bindings of policies that exist nowhere.
    fn effective(&self, objects: &BTreeMap<String, Entry>) -> BTreeMap<String, String> {
        let current = self.reloader.store().current();
        let exists = |policy: &str| {
            objects.contains_key(&format!("{VAP}/{policy}"))
                || current
                    .policy(policy)
                    .is_some_and(|p| !p.source.file.starts_with(CLUSTER_SOURCE))
        };
        objects
            .iter()
            .filter(|(key, entry)| match &entry.binds {
                Some(policy) if !exists(policy) => {
                    tracing::debug!(binding = %key, %policy, "binding of a policy that does not exist: ignored");
                    false
                }
                _ => true,
            })
            .map(|(key, entry)| (key.clone(), entry.text.clone()))
            .collect()
    }
}

/// One policy kind's watch into [`ClusterPolicies`].
#[derive(Debug)]
pub struct PolicySync {
    shared: Arc<ClusterPolicies>,
    kind: String,
    /// Objects of the list in progress.
    listing: Listing<Entry>,
}

impl PolicySync {
    fn key(&self, name: &str) -> String {
        key(&self.kind, name)
    }
}

fn key(kind: &str, name: &str) -> String {
    format!("{kind}/{name}")
}

/// The key and entry of an object of `kind`, or `None` without a name.
fn entry(kind: &str, json: Value) -> Option<(String, Entry)> {
    let binds = (kind == BINDING)
        .then(|| json["spec"]["policyName"].as_str().map(str::to_owned))
        .flatten();
    let stable = stable_text(json)?;
    Some((
        key(kind, &stable.name),
        Entry {
            text: stable.text,
            binds,
        },
    ))
}

impl Sink for PolicySync {
    fn change(&mut self, change: Change) {
        let kind = self.kind.as_str();
        let Some(update) = self.listing.feed(change, |json| entry(kind, json)) else {
            return;
        };
        match update {
            Update::Listed(listed) => {
                let prefix = self.key("");
                let kind = self.kind.clone();
                self.shared.edit(&format!("{kind} list"), |inner| {
                    inner.objects.retain(|key, _| !key.starts_with(&prefix));
                    inner.objects.extend(listed);
                    inner.unlisted.remove(&kind);
                });
            }
            Update::Applied(key, entry) => {
                self.shared.edit(&key.clone(), |inner| {
                    inner.objects.insert(key, entry);
                });
            }
            Update::Deleted { name, .. } => {
                let key = self.key(&name);
                self.shared.edit(&key, |inner| {
                    inner.objects.remove(&key);
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::policies::PolicySources;
    use serde_json::json;

    fn vap(name: &str, expression: &str) -> Value {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": VAP,
            "metadata": {"name": name, "resourceVersion": "7"},
            "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["pods"]}]},
                "validations": [{"expression": expression}]},
            "status": {"observedGeneration": 1}})
    }

    fn binding(name: &str, policy: &str) -> Value {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": BINDING,
            "metadata": {"name": name}, "spec": {"policyName": policy, "validationActions": ["Deny"]}})
    }

    fn list(sync: &mut PolicySync, objects: Vec<Value>) {
        sync.change(Change::Listing);
        for object in objects {
            sync.change(Change::Listed(object));
        }
        sync.change(Change::ListDone);
    }

    #[test]
    fn the_initial_lists_make_one_rebuild_and_a_broken_object_keeps_the_last_good_set() {
        let reloader = Arc::new(PolicyReloader::start(PolicySources::default()).unwrap());
        let shared = ClusterPolicies::new(reloader.clone(), &[VAP, BINDING]);
        let (mut vaps, mut bindings) = (shared.sink(VAP), shared.sink(BINDING));
        // The binding's list comes first: nothing is loaded until the policies' list is in.
        list(&mut bindings, vec![binding("a-binding", "a")]);
        let store = reloader.store();
        assert_eq!(store.status().generation, 1);
        list(&mut vaps, vec![vap("a", "true"), vap("b", "true")]);
        assert_eq!(store.current().policies.len(), 2);
        assert_eq!(store.current().bindings.len(), 1);
        assert_eq!((store.status().generation, store.status().failures), (2, 0));

        // A status-only update changes nothing.
        let mut touched = vap("a", "true");
        touched["status"] = json!({"observedGeneration": 2});
        touched["metadata"]["resourceVersion"] = json!("8");
        vaps.change(Change::Applied(touched));
        assert_eq!(store.status().generation, 2);

        vaps.change(Change::Applied(vap("c", "this is not CEL (")));
        assert_eq!(store.current().policies.len(), 2);
        let status = store.status();
        assert_eq!(status.failures, 1);
        assert!(status.last_error.unwrap().contains("ValidatingAdmissionPolicy/c"));

        vaps.change(Change::Deleted {
            namespace: String::new(),
            name: "c".into(),
        });
        assert_eq!(store.status().last_error, None);
        // The policy goes before its binding: the binding is ignored, the reload succeeds.
        vaps.change(Change::Deleted {
            namespace: String::new(),
            name: "a".into(),
        });
        assert_eq!(store.current().policies.len(), 1);
        assert!(store.current().bindings.is_empty());
        assert_eq!(store.status().last_error, None);
    }
}
