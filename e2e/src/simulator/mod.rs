//! The node simulator, the only simulated part of the end-to-end suite: Nodes with renewed
//! Leases, the scheduler's binding and the kubelet's pod status and termination, and a volume
//! provisioner. Everything else — garbage collection, namespace deletion, workload controllers,
//! EndpointSlices, disruption budgets, PV binding — is the real controllers' work.

mod nodes;
mod placement;
mod pods;
mod volumes;

use futures::{Stream, StreamExt};
use kube::runtime::watcher;
use tokio::task::JoinHandle;

pub use nodes::TAINT_KEY;
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

/// A running simulation; dropping it stops its tasks (the Nodes stay).
#[derive(Debug)]
pub struct NodeSimulator {
    nodes: Vec<String>,
    tasks: Vec<JoinHandle<()>>,
}

impl NodeSimulator {
    /// Registers `count` nodes (`sim-0`...) and starts simulating them.
    pub async fn start(client: kube::Client, count: usize) -> anyhow::Result<Self> {
        let mut names = Vec::new();
        for index in 0..count {
            let name = format!("sim-{index}");
            nodes::register(&client, &name, index).await?;
            names.push(name);
        }
        let addresses = names
            .iter()
            .enumerate()
            .map(|(index, name)| (name.clone(), format!("10.99.0.{}", index + 1)))
            .collect();
        let tasks = vec![
            tokio::spawn(nodes::keep_alive(client.clone(), names.clone())),
            tokio::spawn(pods::run(client.clone(), addresses)),
            tokio::spawn(volumes::provision(client.clone())),
            tokio::spawn(volumes::reclaim(client)),
        ];
        Ok(Self { nodes: names, tasks })
    }

    /// The simulated nodes' names.
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }
}

impl Drop for NodeSimulator {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}
