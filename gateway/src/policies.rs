//! The policy set the webhook enforces, swapped atomically on reload.
//!
//! Policies come from three sources: the built-in pack (unless disabled), files and directories
//! given on the command line, and — in cluster — SafetyPolicy, ValidatingAdmissionPolicy and
//! ValidatingAdmissionPolicyBinding objects seen by watches; params objects from `--params`
//! files and, in cluster, from watches of the kinds the policies' `paramKind`s name. Any change to a source rebuilds the
//! whole set with the same loader the plugin uses; a set that fails to load is reported and the
//! last good set keeps serving.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use policies_cel::policy::{Action, EvalOptions, LoadError, Loader, PolicySet};
use policies_cel::{KubernetesVersion, pack};

use crate::admission::plans::Plans;

/// Where the enforced policies come from.
#[derive(Debug, Clone, Default)]
pub struct PolicySources {
    /// Include the built-in safety pack.
    pub builtin_pack: bool,
    /// The action every pack policy takes instead of its own (`--pack-action`).
    pub pack_action: Option<Action>,
    /// The Kubernetes version whose CEL environment every policy compiles against.
    pub kubernetes_version: KubernetesVersion,
    /// Policy files or directories, loaded in order.
    pub paths: Vec<PathBuf>,
    /// Params files or directories (objects that `paramRef`s select).
    pub params_paths: Vec<PathBuf>,
    /// Policy objects seen in the cluster, by a stable key (`kind/name`), as JSON documents.
    pub cluster_objects: BTreeMap<String, String>,
    /// Params objects seen in the cluster (of the kinds the policies' `paramKind`s name), by a
    /// stable key (`apiVersion/kind/namespace/name`), as JSON documents.
    pub cluster_params: BTreeMap<String, String>,
    /// Evaluation options applied to the built set (per-request time budget, cost limit).
    pub options: EvalOptions,
}

impl PolicySources {
    /// Loads every source into one set. ValidatingAdmissionPolicies need a binding, as in a
    /// real cluster (no implicit bindings in the webhook).
    pub fn build(&self) -> Result<PolicySet, LoadError> {
        let mut loader = if self.builtin_pack {
            pack::builtin_loader_at(self.kubernetes_version)?
        } else {
            Loader::new().kubernetes_version(self.kubernetes_version)
        };
        loader = loader.implicit_bindings(false);
        for path in &self.paths {
            loader = loader.add_path(path)?;
        }
        for path in &self.params_paths {
            loader = loader.add_params_path(path)?;
        }
        for (key, text) in &self.cluster_objects {
            loader = loader.add_str(&format!("cluster:{key}"), text)?;
        }
        for (key, text) in &self.cluster_params {
            loader = loader.add_params_str(&format!("cluster:{key}"), text)?;
        }
        let mut set = loader.finish()?;
        set.options = self.options;
        if let Some(action) = self.pack_action {
            pack::set_action(&mut set, action);
        }
        Ok(set)
    }
}

/// The outcome of the last reload attempt, for logs, metrics and readiness details.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReloadStatus {
    /// Successful loads since start (the first load counts).
    pub generation: u64,
    /// Failed reloads since start.
    pub failures: u64,
    /// The last failure's message, cleared by the next success.
    pub last_error: Option<String>,
}

/// The enforced set: readers take an `Arc` snapshot per request; reloads swap it atomically.
#[derive(Debug)]
pub struct PolicyStore {
    current: ArcSwap<Enforced>,
    status: Mutex<ReloadStatus>,
}

/// One enforced set, with what a request judged while the model is stale is judged by: the same
/// set without the policies that read `impact` (built once per set, at load).
#[derive(Debug)]
pub struct Enforced {
    pub set: Arc<PolicySet>,
    pub without_impact: Arc<PolicySet>,
    /// The pre-filter's answers for `set`, per kind of request.
    pub plans: Plans,
}

impl Enforced {
    /// `set` and its impact-free part.
    pub fn new(set: PolicySet) -> Self {
        let without_impact = Arc::new(PolicySet {
            policies: set.policies.iter().filter(|p| !p.uses_impact).cloned().collect(),
            bindings: set.bindings.clone(),
            // Shared with `set`, CEL values included (converted at load, never per request).
            params: set.params.clone(),
            implicit_bindings: set.implicit_bindings,
            profiles: set.profiles.clone(),
            options: set.options,
        });
        Self {
            plans: Plans::new(&set),
            set: Arc::new(set),
            without_impact,
        }
    }
}

impl PolicyStore {
    /// A store serving `initial` (generation 1).
    pub fn new(initial: PolicySet) -> Self {
        Self {
            current: ArcSwap::from_pointee(Enforced::new(initial)),
            status: Mutex::new(ReloadStatus {
                generation: 1,
                ..ReloadStatus::default()
            }),
        }
    }

    /// The set to judge one request with.
    pub fn current(&self) -> Arc<PolicySet> {
        Arc::clone(&self.current.load().set)
    }

    /// The set to judge one request with, and its impact-free part, from the same load.
    pub fn enforced(&self) -> Arc<Enforced> {
        self.current.load_full()
    }

    /// Rebuilds from `sources`: on success the new set serves from the next request on; on
    /// failure the last good set keeps serving and the error is recorded and returned.
    pub fn reload(&self, sources: &PolicySources) -> Result<(), LoadError> {
        match sources.build() {
            Ok(set) => {
                self.current.store(Arc::new(Enforced::new(set)));
                let mut status = self.lock_status();
                status.generation += 1;
                status.last_error = None;
                Ok(())
            }
            Err(error) => {
                let mut status = self.lock_status();
                status.failures += 1;
                status.last_error = Some(error.to_string());
                Err(error)
            }
        }
    }

    /// The outcome of the last reload.
    pub fn status(&self) -> ReloadStatus {
        self.lock_status().clone()
    }

    fn lock_status(&self) -> std::sync::MutexGuard<'_, ReloadStatus> {
        self.status
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The sources plus the store they feed: file watchers and cluster watchers edit the sources
/// through it, and every edit rebuilds the whole set once.
#[derive(Debug)]
pub struct PolicyReloader {
    sources: Mutex<PolicySources>,
    store: Arc<PolicyStore>,
}

impl PolicyReloader {
    /// Loads `sources` once; fails when that first load fails (nothing good to serve yet).
    pub fn start(sources: PolicySources) -> Result<Self, LoadError> {
        let store = Arc::new(PolicyStore::new(sources.build()?));
        Ok(Self {
            sources: Mutex::new(sources),
            store,
        })
    }

    /// The store the admission path reads.
    pub fn store(&self) -> &Arc<PolicyStore> {
        &self.store
    }

    /// Rebuilds from the current sources (files changed on disk).
    pub fn reload(&self) -> Result<(), LoadError> {
        let sources = self.lock_sources();
        self.store.reload(&sources)
    }

    /// Edits the cluster's policy objects (a watch event or a re-list) and rebuilds once.
    pub fn update_cluster_objects(
        &self,
        edit: impl FnOnce(&mut BTreeMap<String, String>),
    ) -> Result<(), LoadError> {
        let mut sources = self.lock_sources();
        edit(&mut sources.cluster_objects);
        self.store.reload(&sources)
    }

    /// Edits the cluster's params objects (a watch event or a re-list); `edit` says whether it
    /// changed anything, and only then is the set rebuilt (once). `Ok(true)` when it was.
    pub fn update_cluster_params(
        &self,
        edit: impl FnOnce(&mut BTreeMap<String, String>) -> bool,
    ) -> Result<bool, LoadError> {
        let mut sources = self.lock_sources();
        if !edit(&mut sources.cluster_params) {
            return Ok(false);
        }
        self.store.reload(&sources).map(|()| true)
    }

    fn lock_sources(&self) -> std::sync::MutexGuard<'_, PolicySources> {
        self.sources
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DENY_ALL: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: deny-pods}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  validations: [{expression: "false"}]
"#;

    fn sources_with(dir: &tempfile::TempDir, text: &str) -> PolicySources {
        let path = dir.path().join("policy.yaml");
        std::fs::write(&path, text).unwrap();
        PolicySources {
            paths: vec![path],
            ..PolicySources::default()
        }
    }

    #[test]
    fn a_broken_reload_keeps_the_last_good_set() {
        let dir = tempfile::tempdir().unwrap();
        let sources = sources_with(&dir, DENY_ALL);
        let store = PolicyStore::new(sources.build().unwrap());
        assert_eq!(store.current().policies.len(), 1);

        let broken = sources_with(&dir, "kind: ValidatingAdmissionPolicy\nspec: [");
        let error = store.reload(&broken).unwrap_err().to_string();
        assert!(error.contains("policy.yaml"), "{error}");
        assert_eq!(store.current().policies.len(), 1);
        let status = store.status();
        assert_eq!((status.generation, status.failures), (1, 1));
        assert!(status.last_error.is_some());

        store.reload(&sources_with(&dir, DENY_ALL)).unwrap();
        assert_eq!(store.status().generation, 2);
        assert_eq!(store.status().last_error, None);
    }

    #[test]
    fn cluster_objects_join_the_set_and_leave_it() {
        let reloader = PolicyReloader::start(PolicySources::default()).unwrap();
        assert!(reloader.store().current().policies.is_empty());
        reloader
            .update_cluster_objects(|objects| {
                objects.insert("ValidatingAdmissionPolicy/deny-pods".into(), DENY_ALL.into());
            })
            .unwrap();
        assert_eq!(reloader.store().current().policies.len(), 1);
        reloader
            .update_cluster_objects(|objects| objects.clear())
            .unwrap();
        assert!(reloader.store().current().policies.is_empty());
    }

    #[test]
    fn the_impact_free_part_shares_the_converted_params() {
        let sources = PolicySources {
            cluster_params: BTreeMap::from([(
                "v1/ConfigMap/ops/limits".to_owned(),
                r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"limits","namespace":"ops"}}"#
                    .to_owned(),
            )]),
            ..PolicySources::default()
        };
        let enforced = Enforced::new(sources.build().unwrap());
        let value = enforced.set.params.value(0).unwrap();
        let shared = enforced.without_impact.params.value(0).unwrap();
        assert!(std::ptr::eq(value, shared), "the params were converted twice");
    }

    #[test]
    fn the_builtin_pack_is_included_on_request() {
        let sources = PolicySources {
            builtin_pack: true,
            ..PolicySources::default()
        };
        let set = sources.build().unwrap();
        assert_eq!(set.policies.len(), pack::files().len());
        assert!(!set.implicit_bindings);
        let audited = PolicySources {
            builtin_pack: true,
            pack_action: Some(Action::Audit),
            ..PolicySources::default()
        };
        let set = audited.build().unwrap();
        assert!(set.policies.iter().all(|p| p.actions == [Action::Audit]));
    }
}
