//! The node simulator, the only simulated part of the end-to-end suite: Nodes with renewed
//! Leases, the scheduler's binding and the kubelet's pod status and termination, and a volume
//! provisioner. Everything else — garbage collection, namespace deletion, workload controllers,
//! EndpointSlices, disruption budgets, PV binding — is the real controllers' work.

mod nodes;
mod placement;
mod pods;
mod volumes;

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use futures::{Stream, StreamExt};
use kube::runtime::watcher;
use tokio::task::JoinHandle;

pub use nodes::{DEDICATED_KEY, TAINT_KEY};
pub use pods::READY_ANNOTATION;
pub use volumes::PROVISIONER;

/// Every object `api` lists or sees applied, for ever: watch errors (an API server restarting)
/// are retried by the watcher after a short pause, so a simulation loop never ends.
fn applied<K>(api: kube::Api<K>, config: watcher::Config) -> impl Stream<Item = K>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + 'static,
{
    watcher(api, config).filter_map(|event| async move {
        match event {
            Ok(watcher::Event::Apply(object) | watcher::Event::InitApply(object)) => Some(object),
            Ok(_) => None,
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                None
            }
        }
    })
}

/// The simulated nodes (name → host IP), shared by the simulation's loops: nodes added while it
/// runs are simulated from then on.
pub(crate) type Registry = Arc<RwLock<BTreeMap<String, String>>>;

/// The names in `registry` (a poisoned lock still holds the names).
pub(crate) fn names(registry: &Registry) -> Vec<String> {
    let nodes = registry.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    nodes.keys().cloned().collect()
}

/// A running simulation; dropping it stops its tasks (the Nodes stay).
pub struct NodeSimulator {
    client: kube::Client,
    /// The nodes registered at the start (`sim-0`...), in order.
    initial: Vec<String>,
    registry: Registry,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for NodeSimulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeSimulator")
            .field("nodes", &names(&self.registry))
            .finish_non_exhaustive()
    }
}

impl NodeSimulator {
    /// Registers `count` nodes (`sim-0`...) and starts simulating them.
    pub async fn start(client: kube::Client, count: usize) -> anyhow::Result<Self> {
        let registry = Registry::default();
        let mut initial = Vec::new();
        for index in 0..count {
            let name = format!("sim-{index}");
            let ip = nodes::register(&client, &name, index, None).await?;
            registry
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(name.clone(), ip);
            initial.push(name);
        }
        let tasks = vec![
            tokio::spawn(nodes::keep_alive(client.clone(), registry.clone())),
            tokio::spawn(pods::run(client.clone(), registry.clone())),
            tokio::spawn(volumes::provision(client.clone())),
            tokio::spawn(volumes::reclaim(client.clone())),
        ];
        Ok(Self {
            client,
            initial,
            registry,
            tasks,
        })
    }

    /// The nodes registered at the start.
    pub fn nodes(&self) -> &[String] {
        &self.initial
    }

    /// Registers one more node, `name`, carrying a NoSchedule taint `dedicated_to` (key
    /// `e2e.suture.dev/dedicated`) when given, so that only pods tolerating it land there, and
    /// simulates it from now on.
    pub async fn add_node(&self, name: &str, dedicated_to: Option<&str>) -> anyhow::Result<()> {
        let index = names(&self.registry).len();
        let ip = nodes::register(&self.client, name, index, dedicated_to).await?;
        self.registry
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(name.to_owned(), ip);
        Ok(())
    }
}

impl NodeSimulator {
    /// Cuts `name` off, as a network partition would: its Lease is no longer renewed and its pods
    /// are no longer tended (none is finished, however it is deleted). The real node lifecycle
    /// controller then marks the Node unreachable after its grace period.
    pub fn partition(&self, name: &str) {
        self.registry
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(name);
    }
}

impl Drop for NodeSimulator {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}
