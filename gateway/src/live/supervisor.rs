//! Starting and keeping every watch: the built-in kinds, the cluster's policy objects, one
//! instance watch per CustomResourceDefinition as CRDs come and go, and one watch per kind the
//! policies take params of, as the policy set changes. The built-in kinds and the CRD instances
//! register as feeding the model, the policy objects and params as feeding the policy set
//! ([`Feeds`]); readiness also waits for the params watches of the policy set found once every
//! list is in (the first heartbeat after that starts them). Custom resources are watched whole
//! where an OperatorProfile of the serving set reads their fields, else by their metadata; when
//! the profiles change what they keep, the heartbeat lists them again.
//!
//! A one-second heartbeat marks the model current while every watch feeding the model is synced
//! and healthy (kube-runtime consumes bookmarks internally, so between events that is what
//! "current" can rest on; a connection that died silently is noticed within the watch timeout
//! plus 5 s, and then the age grows). A failing policy or params watch leaves the model current:
//! the last good policy set keeps serving, and the failure shows in `/readyz`, the metrics and
//! the logs.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use kube::core::{ApiResource, DynamicObject, PartialObjectMeta};
use policies_cel::operators::KeptFields;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::live::LiveConfig;
use crate::live::crds::{Command, CrdSync, instance_watch_name};
use crate::live::kinds::{self, resource_name as watch_name};
use crate::live::params::Params;
use crate::live::policies::{self, ClusterPolicies};
use crate::live::sync::ModelSync;
use crate::live::watch::{self, Watch};
use crate::model::{Feeds, LiveModel};
use crate::policies::PolicyReloader;

/// How often the model is marked current while every watch feeding it is healthy.
const HEARTBEAT: Duration = Duration::from_secs(1);

/// What readiness waits for until the params watches of the first complete policy set are
/// registered: the cluster's policies (and the CRDs custom param kinds resolve through) are
/// known only once their lists are in.
const PARAMS_HOLD: &str = "the params watches of the policy set";

/// A spawned watch, aborted when dropped (when `run`'s future is dropped).
#[derive(Debug)]
pub(crate) struct Task {
    name: String,
    handle: Option<JoinHandle<()>>,
    reported: bool,
}

impl Task {
    pub(crate) fn spawn(name: String, watch: impl Future<Output = ()> + Send + 'static) -> Self {
        Self {
            name,
            handle: Some(tokio::spawn(watch)),
            reported: false,
        }
    }

    /// Aborts the watch and waits until it has stopped touching the model.
    pub(crate) async fn stop(mut self) {
        if let Some(handle) = self.handle.take() {
            handle.abort();
            let _ = handle.await;
        }
    }

    fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(JoinHandle::is_finished)
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        if let Some(handle) = &self.handle {
            handle.abort();
        }
    }
}

/// Keeps `model` (and, with `config.watch_policies`, the cluster's policy objects in
/// `policies`) current until the future is dropped. Watch errors are retried with backoff and
/// never end it; readiness ([`LiveModel::is_ready`]) flips once every initial list is in.
pub async fn run(
    client: kube::Client,
    model: Arc<LiveModel>,
    policies: Arc<PolicyReloader>,
    config: LiveConfig,
) -> anyhow::Result<()> {
    let timeout = config.watch_timeout_secs;
    let builtin = kinds::builtin();
    let policy_kinds = if config.watch_policies {
        policies::resources()
    } else {
        Vec::new()
    };
    // Register every watch before any starts, so readiness cannot flip early; the params
    // watches follow the policy set, so readiness also waits for the first reconcile after
    // every list is in.
    model.readiness_held(PARAMS_HOLD);
    for resource in &builtin {
        model.watch_registered(&watch_name(resource), Feeds::Model);
    }
    for resource in &policy_kinds {
        model.watch_registered(&watch_name(resource), Feeds::Policies);
    }

    let (commands, mut inbox) = mpsc::unbounded_channel();
    let mut tasks = Vec::new();
    for resource in builtin {
        let name = watch_name(&resource);
        let watch = Watch::<DynamicObject>::all(client.clone(), name.clone(), resource.clone(), timeout);
        let future = if resource == kinds::crd() {
            let sink = CrdSync::new(model.clone(), commands.clone());
            boxed(watch::run(watch, model.clone(), sink))
        } else {
            let sink = ModelSync::new(model.clone(), &resource.group, &resource.kind);
            boxed(watch::run(watch, model.clone(), sink))
        };
        tasks.push(Task::spawn(name, future));
    }
    let kinds: Vec<&str> = policy_kinds.iter().map(|r| r.kind.as_str()).collect();
    let cluster_policies = ClusterPolicies::new(policies.clone(), &kinds);
    for resource in policy_kinds {
        let name = watch_name(&resource);
        let sink = cluster_policies.sink(&resource.kind);
        let mut watch = Watch::<DynamicObject>::all(client.clone(), name.clone(), resource, timeout);
        if let Some(selector) = &config.policy_selector {
            watch.config = watch.config.labels(selector);
        }
        tasks.push(Task::spawn(name, watch::run(watch, model.clone(), sink)));
    }
    tracing::info!(watches = tasks.len(), "live model: watches started");

    let mut params = Params::new(client.clone(), model.clone(), policies.clone(), timeout);
    params.reconcile().await;
    let mut instances = Instances {
        client,
        model: model.clone(),
        timeout,
        running: HashMap::new(),
        kept: policies.store().current().profiles.kept().clone(),
    };
    model.write_untouched().keep(instances.kept.clone());
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    let mut announced = false;
    let mut params_held = true;
    loop {
        tokio::select! {
            Some(command) = inbox.recv() => instances.handle(command).await,
            _ = heartbeat.tick() => {
                // Every list in before the reconcile: it sees the cluster's policies and CRDs.
                let listed = params_held && model.watches_synced();
                params.reconcile().await;
                if listed {
                    params_held = false;
                    model.readiness_released(PARAMS_HOLD);
                }
                model.touch_if_current();
                instances.follow_profiles(&policies.store().current().profiles).await;
                if !announced && model.is_ready() {
                    announced = true;
                    tracing::info!(objects = model.read_briefly().len(), "live model: the initial lists are in");
                }
                let running = instances.running.values_mut().map(|(_, t)| t).chain(params.tasks());
                for task in tasks.iter_mut().chain(running) {
                    if task.is_finished() && !task.reported {
                        task.reported = true;
                        let feeds = model.watch_failed(&task.name, "watch task ended unexpectedly".into());
                        tracing::error!(watch = %task.name, %feeds, effect = feeds.while_failing(),
                            "watch task ended unexpectedly");
                    }
                }
            }
        }
    }
}

fn boxed(
    future: impl Future<Output = ()> + Send + 'static,
) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(future)
}

/// The instance watches of the CRDs in the cluster, by CRD name.
struct Instances {
    client: kube::Client,
    model: Arc<LiveModel>,
    timeout: u32,
    running: HashMap<String, (ApiResource, Task)>,
    /// What the model keeps of operators' kinds: the fields the profiles of the serving set
    /// name (the catalog's, and those of OperatorProfiles from files or the cluster).
    kept: KeptFields,
}

impl Instances {
    async fn handle(&mut self, command: Command) {
        match command {
            Command::Start { crd, resource } => {
                if self
                    .running
                    .get(&crd)
                    .is_some_and(|(running, _)| *running == resource)
                {
                    return;
                }
                self.stop(&crd, false).await;
                let name = instance_watch_name(&crd);
                self.model.watch_registered(&name, Feeds::Model);
                let sink = ModelSync::new(self.model.clone(), &resource.group, &resource.kind);
                // The kinds an OperatorProfile reads fields of (an Application's inventory, a
                // ScaledObject's range) are watched whole; the model keeps those fields alone.
                // Every other custom resource: its metadata.
                let whole = self.kept.keeps(&resource.group, &resource.kind);
                tracing::info!(%crd, version = %resource.version, whole, "watching custom resources");
                let future = if whole {
                    let watch = Watch::<DynamicObject>::all(
                        self.client.clone(),
                        name.clone(),
                        resource.clone(),
                        self.timeout,
                    );
                    boxed(watch::run(watch, self.model.clone(), sink))
                } else {
                    let watch = Watch::<PartialObjectMeta<DynamicObject>>::all(
                        self.client.clone(),
                        name.clone(),
                        resource.clone(),
                        self.timeout,
                    );
                    boxed(watch::run(watch, self.model.clone(), sink))
                };
                let task = Task::spawn(name, future);
                self.running.insert(crd, (resource, task));
            }
            Command::Stop { crd } => self.stop(&crd, true).await,
            Command::Retain(listed) => {
                let gone: Vec<String> = self
                    .running
                    .keys()
                    .filter(|crd| !listed.contains(*crd))
                    .cloned()
                    .collect();
                for crd in gone {
                    self.stop(&crd, true).await;
                }
            }
        }
    }

    /// Follows the serving set's profiles: when what they keep changes (an OperatorProfile
    /// applied, changed or deleted), the model keeps the new fields from now on and every
    /// custom resource is listed again, whole where a profile now reads its fields.
    async fn follow_profiles(&mut self, profiles: &policies_cel::operators::Profiles) {
        if *profiles.kept() == self.kept {
            return;
        }
        self.kept = profiles.kept().clone();
        self.model.write_untouched().keep(self.kept.clone());
        let running: Vec<(String, ApiResource)> = self
            .running
            .iter()
            .map(|(crd, (resource, _))| (crd.clone(), resource.clone()))
            .collect();
        tracing::info!(
            watches = running.len(),
            "OperatorProfiles keep other fields: custom resources are listed again"
        );
        for (crd, resource) in running {
            self.stop(&crd, false).await;
            self.handle(Command::Start { crd, resource }).await;
        }
    }

    /// Stops `crd`'s instance watch and removes its instances from the model; with `forget`,
    /// the watch also leaves the health report.
    async fn stop(&mut self, crd: &str, forget: bool) {
        let name = instance_watch_name(crd);
        if let Some((resource, task)) = self.running.remove(crd) {
            task.stop().await;
            ModelSync::new(self.model.clone(), &resource.group, &resource.kind).clear();
            tracing::info!(%crd, "stopped watching custom resources");
        }
        if forget {
            self.model.watch_forgotten(&name);
        }
    }
}
