//! The cluster a run uses, taken from outside the repository: `SUTURE_E2E_KUBECONFIG` (any
//! conformant cluster) or `SUTURE_E2E_K8S_BIN` (a directory of kube-apiserver,
//! kube-controller-manager, etcd and kubectl binaries, from which a control plane is started on
//! loopback). With neither the suite skips. One cluster serves the whole run; the node simulator
//! runs beside it.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::control_plane::{Binaries, ControlPlane};
use crate::gateway::Gateway;
use crate::kubeconfig;
use crate::simulator::NodeSimulator;

/// How to run the suite, printed when it skips.
pub const HOW_TO_RUN: &str = "\
set SUTURE_E2E_K8S_BIN to a directory holding kube-apiserver, kube-controller-manager, etcd and \
kubectl (the suite starts its own control plane on loopback), or SUTURE_E2E_KUBECONFIG to a \
conformant cluster's kubeconfig (with SUTURE_E2E_GATEWAY_HOST: an address of this machine its \
kube-apiserver can reach). docs/e2e.md, \"Tested against a real control plane\", says how to get the \
binaries.";

/// Nodes the simulator registers.
const SIMULATED_NODES: usize = 3;

/// The cluster of a run.
pub struct Cluster {
    /// The admin kubeconfig.
    pub kubeconfig: PathBuf,
    /// The kubectl binary.
    pub kubectl: PathBuf,
    /// A client with the admin's credentials (a person: never judged).
    pub client: kube::Client,
    /// The address kube-apiserver calls the gateway at.
    pub gateway_host: String,
    /// The simulated nodes.
    pub simulator: NodeSimulator,
    /// The gateway, once a test installed it (it then serves every later test).
    pub gateway: Option<Gateway>,
    // Dropped after the simulator: stops the processes it started, then removes the run directory.
    control_plane: Option<ControlPlane>,
    dir: tempfile::TempDir,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("kubeconfig", &self.kubeconfig)
            .field("dir", &self.dir.path())
            .finish_non_exhaustive()
    }
}

impl Cluster {
    /// The cluster the environment names, started and ready, or `None` when it names none.
    pub async fn from_env() -> anyhow::Result<Option<Self>> {
        let dir = tempfile::Builder::new()
            .prefix("suture-e2e-")
            .tempdir()
            .context("cannot create the run directory")?;
        let (kubeconfig, kubectl, control_plane, gateway_host) = if let Some(path) =
            std::env::var_os("SUTURE_E2E_KUBECONFIG")
        {
            let kubectl = std::env::var_os("SUTURE_E2E_KUBECTL")
                .map_or_else(|| PathBuf::from("kubectl"), PathBuf::from);
            let host = std::env::var("SUTURE_E2E_GATEWAY_HOST").unwrap_or_else(|_| "127.0.0.1".to_owned());
            (PathBuf::from(path), kubectl, None, host)
        } else if let Some(bin) = std::env::var_os("SUTURE_E2E_K8S_BIN") {
            let binaries = Binaries::in_dir(Path::new(&bin))?;
            let kubectl = binaries.kubectl.clone();
            let plane = ControlPlane::start(binaries, dir.path()).await?;
            (
                plane.admin_kubeconfig.clone(),
                kubectl,
                Some(plane),
                "127.0.0.1".to_owned(),
            )
        } else {
            return Ok(None);
        };
        let client = kubeconfig::client(&kubeconfig).await?;
        let simulator = NodeSimulator::start(client.clone(), SIMULATED_NODES)
            .await
            .context("cannot start the node simulator")?;
        Ok(Some(Self {
            kubeconfig,
            kubectl,
            client,
            gateway_host,
            simulator,
            gateway: None,
            control_plane,
            dir,
        }))
    }

    /// The run directory (PKI, kubeconfigs, every process's log).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The control plane the suite started, if it started one.
    pub fn control_plane(&mut self) -> Option<&mut ControlPlane> {
        self.control_plane.as_mut()
    }

    /// Keeps the run directory after the run (its logs explain a failure).
    pub fn keep_dir(&mut self) -> PathBuf {
        let path = self.dir.path().to_owned();
        self.dir.disable_cleanup(true);
        path
    }
}
