//! A real control plane started from binaries the caller provides (`SUTURE_E2E_K8S_BIN`): etcd,
//! kube-apiserver and kube-controller-manager with every default controller, on loopback, with a
//! PKI of its own. Nothing here builds Kubernetes: it only runs what it is given.

mod certs;
mod process;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;

pub use certs::Pki;
pub use process::{Process, tail};

use crate::kubeconfig::{self, Credentials};

/// The binaries a control plane is started from.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// `kube-apiserver`.
    pub apiserver: PathBuf,
    /// `kube-controller-manager`.
    pub controller_manager: PathBuf,
    /// `etcd`.
    pub etcd: PathBuf,
    /// `kubectl`.
    pub kubectl: PathBuf,
}

impl Binaries {
    /// The four binaries in `dir`, or an error naming the ones missing.
    pub fn in_dir(dir: &Path) -> anyhow::Result<Self> {
        let find = |name: &str| -> anyhow::Result<PathBuf> {
            let path = dir.join(name);
            anyhow::ensure!(
                path.exists(),
                "SUTURE_E2E_K8S_BIN={}: no `{name}` there",
                dir.display()
            );
            Ok(path)
        };
        Ok(Self {
            apiserver: find("kube-apiserver")?,
            controller_manager: find("kube-controller-manager")?,
            etcd: find("etcd")?,
            kubectl: find("kubectl")?,
        })
    }
}

/// A free TCP port on loopback (bound and released: the component binds it right after).
pub fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// kube-apiserver's `/readyz`: every check passed.
async fn readyz(client: &kube::Client) -> anyhow::Result<()> {
    let request = http::Request::get("/readyz").body(Vec::new())?;
    let text = client.request_text(request).await?;
    anyhow::ensure!(text.trim() == "ok", "readyz: {text}");
    Ok(())
}

/// A running control plane. Dropping it stops every process it started.
#[derive(Debug)]
pub struct ControlPlane {
    binaries: Binaries,
    dir: PathBuf,
    pki: Pki,
    apiserver_port: u16,
    etcd_port: u16,
    // Stopped in reverse order of start by `Drop` (the fields drop in declaration order).
    controller_manager: Option<Process>,
    apiserver: Option<Process>,
    etcd: Option<Process>,
    /// The admin kubeconfig (`system:masters`).
    pub admin_kubeconfig: PathBuf,
}

impl ControlPlane {
    /// Starts etcd, kube-apiserver and kube-controller-manager in `dir` and waits until the API
    /// is ready and the controllers are at work (the `default` ServiceAccount exists).
    pub async fn start(binaries: Binaries, dir: &Path) -> anyhow::Result<Self> {
        let pki = certs::generate(dir).context("cannot generate the control plane's PKI")?;
        let apiserver_port = free_port()?;
        let etcd_port = free_port()?;
        let server = format!("https://127.0.0.1:{apiserver_port}");
        let admin_kubeconfig = dir.join("admin.kubeconfig");
        kubeconfig::write(
            &admin_kubeconfig,
            &server,
            &pki.ca,
            "admin",
            &Credentials::Certificate {
                cert: pki.admin.cert.clone(),
                key: pki.admin.key.clone(),
            },
        )?;
        kubeconfig::write(
            &dir.join("controller-manager.kubeconfig"),
            &server,
            &pki.ca,
            "system:kube-controller-manager",
            &Credentials::Certificate {
                cert: pki.controller_manager.cert.clone(),
                key: pki.controller_manager.key.clone(),
            },
        )?;
        let mut plane = Self {
            binaries,
            dir: dir.to_owned(),
            pki,
            apiserver_port,
            etcd_port,
            controller_manager: None,
            apiserver: None,
            etcd: None,
            admin_kubeconfig,
        };
        plane.start_etcd()?;
        plane.start_apiserver().await?;
        plane.start_controller_manager()?;
        plane.wait_for_controllers().await?;
        Ok(plane)
    }

    /// The directory holding the PKI, kubeconfigs and every component's log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The API server's URL.
    pub fn server(&self) -> String {
        format!("https://127.0.0.1:{}", self.apiserver_port)
    }

    /// The CA file clients trust.
    pub fn ca(&self) -> &Path {
        &self.pki.ca
    }

    /// The binaries it runs (kubectl among them).
    pub fn binaries(&self) -> &Binaries {
        &self.binaries
    }

    fn start_etcd(&mut self) -> anyhow::Result<()> {
        let peer = free_port()?;
        let client = format!("http://127.0.0.1:{}", self.etcd_port);
        let peer = format!("http://127.0.0.1:{peer}");
        let args = vec![
            format!("--data-dir={}", self.dir.join("etcd").display()),
            format!("--listen-client-urls={client}"),
            format!("--advertise-client-urls={client}"),
            format!("--listen-peer-urls={peer}"),
            format!("--initial-advertise-peer-urls={peer}"),
            format!("--initial-cluster=default={peer}"),
            "--name=default".to_owned(),
            "--log-level=warn".to_owned(),
            "--logger=zap".to_owned(),
        ];
        self.etcd = Some(Process::spawn("etcd", &self.binaries.etcd, &args, &self.dir)?);
        Ok(())
    }

    fn apiserver_args(&self) -> Vec<String> {
        let p = |path: &Path| path.display().to_string();
        vec![
            format!("--etcd-servers=http://127.0.0.1:{}", self.etcd_port),
            format!("--secure-port={}", self.apiserver_port),
            "--bind-address=127.0.0.1".to_owned(),
            "--advertise-address=127.0.0.1".to_owned(),
            // The apiserver cannot publish 127.0.0.1 as the `kubernetes` Service's endpoint.
            "--endpoint-reconciler-type=none".to_owned(),
            format!("--tls-cert-file={}", p(&self.pki.apiserver.cert)),
            format!("--tls-private-key-file={}", p(&self.pki.apiserver.key)),
            format!("--client-ca-file={}", p(&self.pki.ca)),
            format!("--service-account-key-file={}", p(&self.pki.service_account_pub)),
            format!(
                "--service-account-signing-key-file={}",
                p(&self.pki.service_account_key)
            ),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local".to_owned(),
            "--service-cluster-ip-range=10.0.0.0/24".to_owned(),
            "--authorization-mode=RBAC".to_owned(),
            "--allow-privileged=true".to_owned(),
            format!("--cert-dir={}", self.dir.join("apiserver-certs").display()),
            "--profiling=false".to_owned(),
        ]
    }

    async fn start_apiserver(&mut self) -> anyhow::Result<()> {
        let args = self.apiserver_args();
        self.apiserver = Some(Process::spawn(
            "kube-apiserver",
            &self.binaries.apiserver,
            &args,
            &self.dir,
        )?);
        self.wait_for_apiserver(Duration::from_secs(120)).await
    }

    /// Kills kube-apiserver and starts it again on the same port and storage (a fault test).
    pub async fn restart_apiserver(&mut self) -> anyhow::Result<()> {
        if let Some(mut process) = self.apiserver.take() {
            process.stop();
        }
        self.start_apiserver().await
    }

    async fn wait_for_apiserver(&mut self, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        let mut last = String::new();
        // A client connects on its first request: one serves every poll.
        let client = kubeconfig::client(&self.admin_kubeconfig).await?;
        while Instant::now() < deadline {
            for process in [&mut self.etcd, &mut self.apiserver].into_iter().flatten() {
                process.check_alive()?;
            }
            match readyz(&client).await {
                Ok(()) => return Ok(()),
                Err(error) => last = format!("{error:#}"),
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        anyhow::bail!(
            "kube-apiserver not ready after {timeout:?} ({last}); see {}",
            self.dir.join("kube-apiserver.log").display()
        )
    }

    fn start_controller_manager(&mut self) -> anyhow::Result<()> {
        let p = |path: &Path| path.display().to_string();
        let kubeconfig = p(&self.dir.join("controller-manager.kubeconfig"));
        let args = vec![
            format!("--kubeconfig={kubeconfig}"),
            format!("--authentication-kubeconfig={kubeconfig}"),
            format!("--authorization-kubeconfig={kubeconfig}"),
            "--use-service-account-credentials=true".to_owned(),
            format!(
                "--service-account-private-key-file={}",
                p(&self.pki.service_account_key)
            ),
            format!("--root-ca-file={}", p(&self.pki.ca)),
            "--controllers=*".to_owned(),
            "--leader-elect=false".to_owned(),
            "--bind-address=127.0.0.1".to_owned(),
            format!("--secure-port={}", free_port()?),
            "--service-cluster-ip-range=10.0.0.0/24".to_owned(),
            // Quick reactions keep the suite short; the semantics are the controllers' own.
            "--concurrent-gc-syncs=20".to_owned(),
        ];
        self.controller_manager = Some(Process::spawn(
            "kube-controller-manager",
            &self.binaries.controller_manager,
            &args,
            &self.dir,
        )?);
        Ok(())
    }

    async fn wait_for_controllers(&mut self) -> anyhow::Result<()> {
        use k8s_openapi::api::core::v1::ServiceAccount;
        let client = kubeconfig::client(&self.admin_kubeconfig).await?;
        let accounts: kube::Api<ServiceAccount> = kube::Api::namespaced(client, "default");
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if let Some(process) = &mut self.controller_manager {
                process.check_alive()?;
            }
            if accounts.get_opt("default").await?.is_some() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        anyhow::bail!(
            "kube-controller-manager did not create the default ServiceAccount in 120s; see {}",
            self.dir.join("kube-controller-manager.log").display()
        )
    }

    /// Every component's process, for liveness checks.
    pub fn check_alive(&mut self) -> anyhow::Result<()> {
        for process in [&mut self.etcd, &mut self.apiserver, &mut self.controller_manager]
            .into_iter()
            .flatten()
        {
            process.check_alive()?;
        }
        Ok(())
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        for process in [&mut self.controller_manager, &mut self.apiserver, &mut self.etcd] {
            if let Some(process) = process.as_mut() {
                process.stop();
            }
        }
    }
}
