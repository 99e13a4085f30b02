//! Watching a scenario act out: one watch per kind the model holds (in the scenario's namespace,
//! and cluster-wide for the cluster-scoped kinds, kept to the scenario's own objects), merged
//! into one store. From the moment the request is made, every event is a moment whose readings
//! (Services' ready endpoints, workloads' healthy pods, budgets' health) are folded into the
//! lowest seen: a watch delivers every state the API server held, so a transition's worst
//! moment is seen even when it lasts milliseconds.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use futures::StreamExt;
use kube::runtime::{WatchStreamExt, watcher};
use tokio::task::JoinHandle;

use crate::reality::moment::{self, Observed, Owners, Store};
use crate::reality::request::Kind;

/// Which objects belong to a scenario.
#[derive(Debug, Clone)]
pub struct Scope {
    /// Its namespace (every namespaced object in it, and the Namespace itself).
    pub namespace: String,
    /// Cluster-scoped objects it owns, by name (a dedicated Node, a CRD, a cluster-scoped CR).
    pub cluster_objects: Vec<String>,
}

impl Scope {
    fn includes(&self, object: &Observed) -> bool {
        if object.kind.namespaced {
            return object.namespace() == self.namespace;
        }
        match object.kind.kind {
            "Namespace" => object.name() == self.namespace,
            "PersistentVolume" => {
                object.value["spec"]["claimRef"]["namespace"].as_str() == Some(self.namespace.as_str())
                    || self.cluster_objects.iter().any(|n| n == object.name())
            }
            _ => self.cluster_objects.iter().any(|n| n == object.name()),
        }
    }
}

/// The lowest readings since the request, for the objects that existed before it.
#[derive(Debug, Clone, Default)]
pub struct Lowest {
    /// Ready endpoints per Service (0 once the Service is gone).
    pub services: BTreeMap<String, usize>,
    /// Healthy pods per workload.
    pub workloads: BTreeMap<String, usize>,
    /// Budgets seen below `desiredHealthy` and below their healthy pods before the request.
    pub budgets_broken: BTreeSet<String>,
}

/// The readings when the request was made.
#[derive(Debug, Clone, Default)]
pub struct Before {
    pub store: Store,
    pub services: BTreeMap<String, usize>,
    pub workloads: BTreeMap<String, usize>,
    pub budgets: BTreeMap<String, moment::Budget>,
}

#[derive(Debug)]
struct State {
    scope: Scope,
    store: Store,
    owners: Owners,
    synced: BTreeSet<usize>,
    last_change: Instant,
    before: Option<Before>,
    lowest: Lowest,
}

impl State {
    fn apply(&mut self, object: Observed) {
        if !self.scope.includes(&object) {
            return;
        }
        let Some(uid) = object.value["metadata"]["uid"].as_str().map(str::to_owned) else {
            return;
        };
        if let Some(controller) = object.controller() {
            self.owners.insert(uid.clone(), controller);
        }
        self.store.insert(uid, object);
        self.changed();
    }

    fn delete(&mut self, object: &Observed) {
        if let Some(uid) = object.value["metadata"]["uid"].as_str()
            && self.store.remove(uid).is_some()
        {
            self.changed();
        }
    }

    /// Folds this moment's readings into the lowest seen since the request.
    fn changed(&mut self) {
        self.last_change = Instant::now();
        let Some(before) = &self.before else { return };
        let services = moment::service_endpoints(&self.store);
        for (uid, lowest) in &mut self.lowest.services {
            *lowest = (*lowest).min(services.get(uid).copied().unwrap_or(0));
        }
        let workloads = moment::workload_ready(&self.store, &self.owners);
        for (uid, lowest) in &mut self.lowest.workloads {
            *lowest = (*lowest).min(workloads.get(uid).copied().unwrap_or(0));
        }
        for (uid, budget) in moment::budgets(&self.store) {
            let Some(start) = before.budgets.get(&uid) else {
                continue;
            };
            if budget.current_spec && budget.current < budget.desired && budget.current < start.current {
                self.lowest.budgets_broken.insert(uid);
            }
        }
    }
}

/// The watches of one scenario and what they saw.
pub struct Recorder {
    state: Arc<Mutex<State>>,
    streams: usize,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("streams", &self.streams)
            .finish_non_exhaustive()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Recorder {
    /// Starts watching `kinds` for the objects of `scope`.
    pub fn start(client: &kube::Client, scope: Scope, kinds: &[Kind]) -> Self {
        let state = Arc::new(Mutex::new(State {
            store: Store::new(),
            owners: Owners::new(),
            synced: BTreeSet::new(),
            last_change: Instant::now(),
            before: None,
            lowest: Lowest::default(),
            scope: scope.clone(),
        }));
        let streams = kinds.iter().enumerate().map(|(index, kind)| {
            let kind = *kind;
            let api = kind.api(client, &scope.namespace);
            watcher(api, watcher::Config::default())
                .default_backoff()
                .map(move |event| (index, kind, event))
                .boxed()
        });
        let mut merged = futures::stream::select_all(streams);
        let shared = state.clone();
        let task = tokio::spawn(async move {
            while let Some((index, kind, event)) = merged.next().await {
                let mut state = shared.lock().unwrap_or_else(PoisonError::into_inner);
                let observed = |object: kube::api::DynamicObject| {
                    serde_json::to_value(object)
                        .ok()
                        .map(|value| Observed { kind, value })
                };
                match event {
                    Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object)) => {
                        if let Some(object) = observed(object) {
                            state.apply(object);
                        }
                    }
                    Ok(watcher::Event::Delete(object)) => {
                        if let Some(object) = observed(object) {
                            state.delete(&object);
                        }
                    }
                    Ok(watcher::Event::InitDone) => {
                        state.synced.insert(index);
                    }
                    Ok(watcher::Event::Init) | Err(_) => {}
                }
            }
        });
        Self {
            state,
            streams: kinds.len(),
            task,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every watch has listed its objects once.
    pub fn synced(&self) -> bool {
        self.lock().synced.len() == self.streams
    }

    /// The objects now.
    pub fn store(&self) -> Store {
        self.lock().store.clone()
    }

    /// Whether the object of `uid` is still there.
    pub fn holds(&self, uid: &str) -> bool {
        self.lock().store.contains_key(uid)
    }

    /// How long since the scenario's objects last changed.
    pub fn quiet_for(&self) -> std::time::Duration {
        self.lock().last_change.elapsed()
    }

    /// Marks the moment just before the request: the readings every later moment is compared
    /// to.
    pub fn mark_before(&self) -> Before {
        let mut state = self.lock();
        let services = moment::service_endpoints(&state.store);
        let workloads: BTreeMap<String, usize> = moment::workload_ready(&state.store, &state.owners)
            .into_iter()
            .filter(|(uid, _)| {
                state
                    .store
                    .get(uid)
                    .is_some_and(|o| moment::is_workload(o, &state.owners, uid))
            })
            .collect();
        let before = Before {
            store: state.store.clone(),
            budgets: moment::budgets(&state.store),
            services: services.clone(),
            workloads: workloads.clone(),
        };
        state.lowest = Lowest {
            services,
            workloads,
            budgets_broken: BTreeSet::new(),
        };
        state.before = Some(before.clone());
        before
    }

    /// The lowest readings since [`Recorder::mark_before`].
    pub fn lowest(&self) -> Lowest {
        self.lock().lowest.clone()
    }
}
