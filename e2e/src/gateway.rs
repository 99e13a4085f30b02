//! The gateway registered for real: `kubectl suture install --webhook-url` rendered and applied
//! with server-side apply (CRDs, RBAC, TLS Secret, webhook configuration, self-protection policy),
//! and `suture-gateway` run on this host with a kubeconfig holding the install's own
//! ServiceAccount token, so a verb the rendered ClusterRole lacks fails the suite. In the image
//! mode (`SUTURE_E2E_GATEWAY=image`, [`container`]) it runs from its container image instead,
//! with the pod the in-cluster install renders.

pub mod container;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::Api;
use kube::api::PostParams;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::binaries;
use crate::cluster::Cluster;
use crate::control_plane::{Process, free_port, tail};
use crate::kubeconfig::{self, Credentials};
use crate::scene;
use container::{Container, Given, Image, Mode, Pod, Running};

/// The operator identities the suite's install judges (`namespace/name`): two operators, and a
/// third-party one installed in kube-system (judged like any other: only the control plane's own
/// controllers are exempt).
pub const JUDGED: &[&str] = &[
    "e2e-operators/db-operator",
    "e2e-operators/web-operator",
    "kube-system/e2e-storage-operator",
];

/// Installs and starts the gateway judging [`JUDGED`] unless a test already did.
pub async fn ensure(cluster: &mut Cluster) -> anyhow::Result<()> {
    if cluster.gateway.is_none() {
        let gateway = Gateway::install(cluster, JUDGED).await?;
        cluster.gateway = Some(gateway);
    }
    Ok(())
}

/// The gateway's namespace and names, as the install renders them by default.
pub const NAMESPACE: &str = "suture-system";
const NAME: &str = "suture-gateway";
/// The install's ValidatingWebhookConfiguration.
pub const WEBHOOK: &str = NAME;
/// The suite's gateway's name in the shared ledger (its shard is `suture-ledger-` and this).
pub const LEDGER_IDENTITY: &str = "e2e-gateway";

/// A gateway serving the cluster's webhook from this host (a process, or a container on the
/// host's network).
#[derive(Debug)]
pub struct Gateway {
    process: Option<Running>,
    /// Its process id on this host, while it runs.
    pid: Option<u32>,
    /// The pod it runs in, in the image mode (its twins from other builds run on the host).
    pod: Option<Arc<Pod>>,
    /// Its name in the ledger (and, in the image mode, its pod's name).
    identity: String,
    /// The files of this host that flags a test added name (the image mode mounts each at its
    /// path, read-only).
    files: Vec<PathBuf>,
    /// The `suture-gateway` executable: the one built beside the suite unless another build was
    /// given ([`Gateway::judging_twin`], [`Gateway::run_build`]).
    binary: Option<PathBuf>,
    args: Vec<String>,
    dir: PathBuf,
    /// Plain-HTTP address of /healthz, /readyz and /metrics.
    pub metrics: String,
    /// The webhook's base URL, as kube-apiserver calls it (`/validate` is appended).
    pub url: String,
}

/// A token for the ServiceAccount `namespace/name` (TokenRequest, one hour).
pub async fn token(client: &kube::Client, namespace: &str, name: &str) -> anyhow::Result<String> {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let request = TokenRequest {
        spec: TokenRequestSpec {
            expiration_seconds: Some(3600),
            ..TokenRequestSpec::default()
        },
        ..TokenRequest::default()
    };
    let issued = accounts
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .with_context(|| format!("cannot request a token for {namespace}/{name}"))?;
    Ok(issued.status.map(|s| s.token).unwrap_or_default())
}

/// What a ServiceAccount connects with: kube-apiserver's URL, the cluster's CA file and a token.
#[derive(Debug)]
pub struct AccountCredentials {
    /// kube-apiserver's URL.
    pub server: String,
    /// The cluster's CA certificate (a file).
    pub ca: PathBuf,
    /// A token of the ServiceAccount (TokenRequest, one hour).
    pub token: String,
}

/// A kubeconfig file for the ServiceAccount `namespace/name`, written into the run directory.
pub async fn service_account_kubeconfig(
    cluster: &Cluster,
    namespace: &str,
    name: &str,
) -> anyhow::Result<PathBuf> {
    let account = account_credentials(cluster, namespace, name).await?;
    let path = cluster.dir().join(format!("{namespace}-{name}.kubeconfig"));
    kubeconfig::write(
        &path,
        &account.server,
        &account.ca,
        &format!("system:serviceaccount:{namespace}:{name}"),
        &Credentials::Token(account.token),
    )?;
    Ok(path)
}

/// The credentials of the ServiceAccount `namespace/name`.
pub async fn account_credentials(
    cluster: &Cluster,
    namespace: &str,
    name: &str,
) -> anyhow::Result<AccountCredentials> {
    let source = kube::config::Kubeconfig::read_from(&cluster.kubeconfig)?;
    let entry = source
        .clusters
        .first()
        .and_then(|c| c.cluster.clone())
        .ok_or_else(|| anyhow::anyhow!("{} names no cluster", cluster.kubeconfig.display()))?;
    let server = entry.server.unwrap_or_default();
    let ca = match (entry.certificate_authority, entry.certificate_authority_data) {
        (Some(file), _) => PathBuf::from(file),
        (None, Some(data)) => {
            let path = cluster.dir().join("cluster-ca.crt");
            std::fs::write(&path, decode_base64(&data)?)?;
            path
        }
        (None, None) => anyhow::bail!("{} names no CA", cluster.kubeconfig.display()),
    };
    let token = token(&cluster.client, namespace, name).await?;
    Ok(AccountCredentials { server, ca, token })
}

fn decode_base64(text: &str) -> anyhow::Result<Vec<u8>> {
    let value = serde_json::Value::String(text.trim().to_owned());
    let bytes: k8s_openapi::ByteString = serde_json::from_value(value).context("CA data is not base64")?;
    Ok(bytes.0)
}

/// A plain HTTP GET on loopback: the status code and body.
pub async fn http_get(address: &str, path: &str) -> anyhow::Result<(u16, String)> {
    let mut stream = tokio::net::TcpStream::connect(address).await?;
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n").as_bytes())
        .await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}

/// The resource of a decision-log line: `statefulsets`, or `statefulsets/scale` for a
/// subresource.
pub fn decision_resource(entry: &serde_json::Value) -> String {
    let plural = entry["resource"]["resource"].as_str().unwrap_or_default();
    match entry["resource"]["subresource"].as_str() {
        Some(sub) if !sub.is_empty() => format!("{plural}/{sub}"),
        _ => plural.to_owned(),
    }
}

impl Gateway {
    /// Renders and applies the install judging `service_accounts` (`ns/name`), and starts the
    /// gateway on this host with the install's own credentials; returns once it is ready. In the
    /// image mode ([`Mode`]) it runs from its image with the in-cluster install's pod.
    pub async fn install(cluster: &Cluster, service_accounts: &[&str]) -> anyhow::Result<Self> {
        let mode = Mode::from_env()?;
        let dir = cluster.dir().join("gateway");
        std::fs::create_dir_all(&dir)?;
        let port = free_port()?;
        let url = format!("https://{}:{port}", cluster.gateway_host);
        let manifests = dir.join("manifests");
        let manifests_dir = manifests.display().to_string();
        render_install(
            &["--self-signed", "--webhook-url", &url, "-o", &manifests_dir],
            service_accounts,
        )?;
        let applied = scene::kubectl(
            cluster,
            &[
                "apply",
                "--server-side",
                "--field-manager=suture-e2e",
                "-f",
                &manifests.display().to_string(),
            ],
            None,
        )?;
        anyhow::ensure!(applied.contains("serverside-applied"), "apply: {applied}");
        let secret: Secret =
            serde_yaml_ng::from_str(&std::fs::read_to_string(manifests.join("05-tls-secret.yaml"))?)?;
        let data = secret.data.unwrap_or_default();
        for file in ["tls.crt", "tls.key"] {
            let bytes = data
                .get(file)
                .ok_or_else(|| anyhow::anyhow!("the TLS Secret has no {file}"))?;
            std::fs::write(dir.join(file), &bytes.0)?;
        }
        let metrics_port = free_port()?;
        let metrics = format!("127.0.0.1:{metrics_port}");
        // The in-cluster install (no --webhook-url): its Deployment is what a replica in a
        // cluster runs.
        let in_cluster = render_install(&["--self-signed"], service_accounts)?;
        let (mut args, pod) = match mode {
            Mode::Host => {
                let kubeconfig = service_account_kubeconfig(cluster, NAMESPACE, NAME).await?;
                let p = |path: &Path| path.display().to_string();
                let mut args = vec![
                    format!("--listen=0.0.0.0:{port}"),
                    format!("--metrics-listen={metrics}"),
                    format!("--tls-cert={}", p(&dir.join("tls.crt"))),
                    format!("--tls-key={}", p(&dir.join("tls.key"))),
                    format!("--kubeconfig={}", p(&kubeconfig)),
                    "--decision-log=stdout".to_owned(),
                    format!("--protect-namespace={NAMESPACE}"),
                    format!("--protect-deployment={NAME}"),
                    format!("--protect-webhook={NAME}"),
                    format!("--ledger-identity={LEDGER_IDENTITY}"),
                ];
                args.extend(keep_warm_args(&in_cluster)?);
                (args, None)
            }
            Mode::Image(reference) => {
                let tls = dir.join("tls");
                std::fs::create_dir_all(&tls)?;
                for (file, bytes) in &data {
                    std::fs::write(tls.join(file), &bytes.0)?;
                }
                let secret_name = secret.metadata.name.clone().unwrap_or_default();
                let account = account_credentials(cluster, NAMESPACE, NAME).await?;
                let image = Image::prepare(reference.as_deref())?;
                let given = Given {
                    secrets: &[(&secret_name, &tls)],
                    token: &account.token,
                    ca: &account.ca,
                    server: &account.server,
                    dir: &dir,
                };
                let pod = Pod::from_install(&in_cluster, image, &given)?;
                println!(
                    "  the gateway runs from the image {} (podman, host network), as the install renders its pod",
                    pod.image()
                );
                // The rendered arguments, on free ports (the host's network is shared); the
                // ledger identity is the pod's name (POD_NAME).
                let mut args = pod.args.clone();
                container::set_port(&mut args, "--listen", port)?;
                container::set_port(&mut args, "--metrics-listen", metrics_port)?;
                (args, Some(Arc::new(pod)))
            }
        };
        // The suite's one timing change: policy files and certificates polled sooner.
        args.push("--poll-interval=500ms".to_owned());
        let mut gateway = Self {
            process: None,
            pid: None,
            pod,
            identity: LEDGER_IDENTITY.to_owned(),
            files: Vec::new(),
            binary: None,
            args,
            dir,
            metrics,
            url,
        };
        gateway.start().await?;
        Ok(gateway)
    }

    /// A second replica of this gateway, started: the same credentials, certificate and
    /// policies, its own ports and ledger identity `identity` (the webhook still calls this one:
    /// reviews reach the replica when posted to it, [`Self::post_review`]).
    pub async fn replica(&self, identity: &str) -> anyhow::Result<Self> {
        self.replica_with(identity, &[]).await
    }

    /// A second replica as [`Self::replica`], with `flags` (`--name=value`) in its arguments,
    /// each in place of this one's of the same name (a file of this host a flag names is
    /// mounted at its path in the image mode).
    pub async fn replica_with(&self, identity: &str, flags: &[&str]) -> anyhow::Result<Self> {
        let files = container::host_files(flags);
        self.sibling(identity, None, "127.0.0.1", "127.0.0.1", files, |args| {
            for flag in flags {
                set_flag(args, flag);
            }
        })
        .await
    }

    /// A judging gateway from another build (`binary`, e.g. the previous commit's), started with
    /// this one's arguments (credentials, certificate, policy selection), its own ports and
    /// ledger identity `identity`, listening where kube-apiserver reaches this one (`host`): the
    /// baseline a benchmark times beside this build, kept warm as this one is unless `keep_warm`
    /// says otherwise ([`Self::set_keep_warm`]). It runs from its own copy of `binary`
    /// ([`own_copy`]).
    pub async fn judging_twin(
        &self,
        binary: &Path,
        host: &str,
        identity: &str,
        keep_warm: Option<&str>,
    ) -> anyhow::Result<Self> {
        anyhow::ensure!(
            binary.is_file(),
            "the baseline gateway {} is not a file",
            binary.display()
        );
        let copy = own_copy(binary, &self.dir.join(identity))?;
        self.sibling(identity, Some(copy), "0.0.0.0", host, Vec::new(), |args| {
            if let Some(period) = keep_warm {
                set_keep_warm(args, period);
            }
        })
        .await
    }

    /// The binary this gateway runs.
    fn binary(&self) -> anyhow::Result<PathBuf> {
        match &self.binary {
            Some(binary) => Ok(binary.clone()),
            None => binaries::path("suture-gateway"),
        }
    }

    /// A gateway with this one's arguments (then `adjust`ed, naming `files` beside this one's)
    /// but its own ports and ledger identity, started.
    async fn sibling(
        &self,
        identity: &str,
        binary: Option<PathBuf>,
        listen: &str,
        host: &str,
        files: Vec<PathBuf>,
        adjust: impl FnOnce(&mut Vec<String>),
    ) -> anyhow::Result<Self> {
        anyhow::ensure!(
            binary.is_none() || self.pod.is_none(),
            "a gateway from another build runs on the host: not in the image mode ({})",
            container::MODE_VAR
        );
        let dir = self.dir.join(identity);
        std::fs::create_dir_all(&dir)?;
        let port = free_port()?;
        let metrics = format!("127.0.0.1:{}", free_port()?);
        let mut args: Vec<String> = self
            .args
            .iter()
            .filter(|a| {
                !a.starts_with("--listen=")
                    && !a.starts_with("--metrics-listen=")
                    && !a.starts_with("--ledger-identity=")
            })
            .cloned()
            .collect();
        args.extend([
            format!("--listen={listen}:{port}"),
            format!("--metrics-listen={metrics}"),
            format!("--ledger-identity={identity}"),
        ]);
        adjust(&mut args);
        let mut sibling = Self {
            process: None,
            pid: None,
            pod: self.pod.clone(),
            identity: identity.to_owned(),
            files: self.files.iter().cloned().chain(files).collect(),
            binary: binary.or_else(|| self.binary.clone()),
            args,
            dir,
            metrics,
            url: format!("https://{host}:{port}"),
        };
        sibling.start().await?;
        Ok(sibling)
    }

    /// Posts an AdmissionReview to this gateway's `/validate` as kube-apiserver would (the
    /// serving certificate is not verified: a loopback test client), and returns its response.
    pub fn post_review(&self, review: &serde_json::Value) -> anyhow::Result<serde_json::Value> {
        let file = self.dir.join("review.json");
        std::fs::write(&file, serde_json::to_vec(review)?)?;
        let out = Command::new("curl")
            .args([
                "-sS",
                "--insecure",
                "--max-time",
                "10",
                "-H",
                "Content-Type: application/json",
                "--data-binary",
            ])
            .arg(format!("@{}", file.display()))
            .arg(format!("{}/validate", self.url))
            .output()
            .context("curl")?;
        anyhow::ensure!(
            out.status.success(),
            "curl: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout)
            .with_context(|| format!("not a review: {}", String::from_utf8_lossy(&out.stdout)))?;
        Ok(answer["response"].clone())
    }

    /// The gateway's `/metrics` text.
    pub async fn metrics_text(&self) -> anyhow::Result<String> {
        Ok(http_get(&self.metrics, "/metrics").await?.1)
    }

    /// The value of the unlabelled series `series` in the gateway's `/metrics` (0 when absent).
    pub async fn metric(&self, series: &str) -> anyhow::Result<f64> {
        let text = self.metrics_text().await?;
        Ok(text
            .lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or(0.0))
    }

    /// A `--noop` twin of this gateway, started: the same certificate, TLS/HTTP stack and body
    /// handling, answering every review allowed without evaluating (the latency floor of a
    /// webhook hop). It runs from its own copy of the binary ([`own_copy`]).
    pub async fn noop_twin(&self, host: &str) -> anyhow::Result<Self> {
        let dir = self.dir.join("noop");
        let binary = own_copy(&self.binary()?, &dir)?;
        let port = free_port()?;
        let metrics = format!("127.0.0.1:{}", free_port()?);
        let p = |path: &Path| path.display().to_string();
        let args = vec![
            "--noop".to_owned(),
            format!("--listen=0.0.0.0:{port}"),
            format!("--metrics-listen={metrics}"),
            format!("--tls-cert={}", p(&self.dir.join("tls.crt"))),
            format!("--tls-key={}", p(&self.dir.join("tls.key"))),
        ];
        let mut twin = Self {
            process: None,
            pid: None,
            pod: None,
            identity: "noop".to_owned(),
            files: Vec::new(),
            binary: Some(binary),
            args,
            dir,
            metrics,
            url: format!("https://{host}:{port}"),
        };
        twin.start().await?;
        Ok(twin)
    }

    /// Starts (or restarts) the gateway process (or container) and waits for /readyz.
    pub async fn start(&mut self) -> anyhow::Result<()> {
        let running = match &self.pod {
            Some(pod) => Running::Container(Container::run(
                pod,
                &self.identity,
                &self.args,
                &self.files,
                &self.dir,
            )?),
            None => {
                let binary = self.binary()?;
                Running::Host(Process::spawn("suture-gateway", &binary, &self.args, &self.dir)?)
            }
        };
        let process = self.process.insert(running);
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            process.check_alive()?;
            if let Ok((200, _)) = http_get(&self.metrics, "/readyz").await {
                self.pid = process.pid();
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        anyhow::bail!("the gateway was not ready in 60s:\n{}", self.log_tail(40))
    }

    /// The pod the gateway runs in, in the image mode.
    pub fn pod(&self) -> Option<&Pod> {
        self.pod.as_deref()
    }

    /// The arguments the gateway runs with.
    pub fn args(&self) -> &[String] {
        &self.args
    }

    /// The gateway process's id on this host, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The gateway process's resident memory (VmRSS, KiB), while it runs.
    pub fn rss_kib(&self) -> Option<u64> {
        rss_kib(self.pid()?)
    }

    /// Restarts the gateway with `flag` added to its arguments (kept for later restarts).
    pub async fn restart_with(&mut self, flag: &str) -> anyhow::Result<()> {
        self.kill();
        self.args.push(flag.to_owned());
        self.files.extend(container::host_files(&[flag]));
        self.start().await
    }

    /// From its next start, this gateway (and the twins started from it) runs another build of
    /// `suture-gateway` (e.g. the profile-guided release build), from its own copy in this
    /// gateway's directory.
    pub fn run_build(&mut self, binary: &Path) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.pod.is_none(),
            "another build runs on the host: not in the image mode ({})",
            container::MODE_VAR
        );
        anyhow::ensure!(
            binary.is_file(),
            "the gateway build {} is not a file",
            binary.display()
        );
        self.binary = Some(own_copy(binary, &self.dir.join("build"))?);
        Ok(())
    }

    /// From its next start, this gateway rehearses its judged path after `period` idle
    /// (`--keep-warm`; a zero period, e.g. `0s`: never, and the flag is left out, so that a build
    /// older than it starts too). Its `--keep-warm-for` is the gateway's default.
    pub fn set_keep_warm(&mut self, period: &str) {
        set_keep_warm(&mut self.args, period);
    }

    /// The `--keep-warm` period this gateway runs with (none: off).
    pub fn keep_warm(&self) -> Option<&str> {
        self.args.iter().find_map(|arg| arg.strip_prefix("--keep-warm="))
    }

    /// Kills the gateway (a fault test).
    pub fn kill(&mut self) {
        if let Some(mut process) = self.process.take() {
            process.stop();
        }
        self.pid = None;
    }

    /// The end of the gateway's log.
    pub fn log_tail(&self, lines: usize) -> String {
        tail(&self.dir.join("suture-gateway.log"), lines)
    }

    /// Every decision-log line so far (one JSON object per judged request; never object
    /// bodies), oldest first.
    pub fn all_decisions(&self) -> Vec<serde_json::Value> {
        self.log()
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .collect()
    }

    /// The decision-log lines for the object `name` of `resource` (see [`decision_resource`]),
    /// oldest first.
    pub fn decisions(&self, resource: &str, name: &str) -> Vec<serde_json::Value> {
        self.all_decisions()
            .into_iter()
            .filter(|entry| entry["name"] == name && decision_resource(entry) == resource)
            .collect()
    }

    /// The policies that denied the latest judged request (not a dry run) for the object `name`
    /// of `resource`, from the decision log.
    pub fn last_denied_by(&self, resource: &str, name: &str) -> Vec<String> {
        self.decisions(resource, name)
            .into_iter()
            .rev()
            .find(|entry| entry["dryRun"] == false)
            .and_then(|entry| entry.get("deniedBy").cloned())
            .and_then(|denied| serde_json::from_value(denied).ok())
            .unwrap_or_default()
    }

    /// An error if the gateway process has exited (with the end of its log).
    pub fn check_alive(&mut self) -> anyhow::Result<()> {
        match &mut self.process {
            Some(process) => process.check_alive(),
            None => anyhow::bail!("the gateway is not running"),
        }
    }

    /// The `/readyz` status code and its JSON detail.
    pub async fn readiness(&self) -> anyhow::Result<(u16, serde_json::Value)> {
        let (status, body) = http_get(&self.metrics, "/readyz").await?;
        let detail = serde_json::from_str(&body).with_context(|| format!("/readyz answered {body}"))?;
        Ok((status, detail))
    }

    /// The gateway's whole log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("suture-gateway.log")).unwrap_or_default()
    }
}

/// `kubectl suture install` with `args`, judging `service_accounts`: what it printed.
fn render_install(args: &[&str], service_accounts: &[&str]) -> anyhow::Result<String> {
    let mut render = Command::new(binaries::path("kubectl-suture")?);
    render.arg("install").args(args);
    for account in service_accounts {
        render.args(["--service-account", account]);
    }
    let out = render.output()?;
    anyhow::ensure!(
        out.status.success(),
        "kubectl suture install: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).context("the install is not UTF-8")
}

/// The `--keep-warm` arguments of the gateway Deployment in an install's YAML `stream`: the
/// gateway on this host rehearses as a replica in the cluster would.
fn keep_warm_args(stream: &str) -> anyhow::Result<Vec<String>> {
    use serde::Deserialize;
    for document in serde_yaml_ng::Deserializer::from_str(stream) {
        let object = serde_json::Value::deserialize(document).context("the install's YAML")?;
        if object["kind"] != "Deployment" {
            continue;
        }
        let args = object["spec"]["template"]["spec"]["containers"][0]["args"]
            .as_array()
            .ok_or_else(|| anyhow::anyhow!("the gateway Deployment has no args"))?;
        return Ok(args
            .iter()
            .filter_map(serde_json::Value::as_str)
            .filter(|arg| arg.starts_with("--keep-warm"))
            .map(str::to_owned)
            .collect());
    }
    anyhow::bail!("the install renders no Deployment")
}

/// `args` rehearsing after `period` idle: see [`Gateway::set_keep_warm`].
fn set_keep_warm(args: &mut Vec<String>, period: &str) {
    args.retain(|arg| !arg.starts_with("--keep-warm"));
    if !is_zero_period(period) {
        args.push(format!("--keep-warm={period}"));
    }
}

/// `args` with `flag` (`--name=value`) in place of any of the same name.
fn set_flag(args: &mut Vec<String>, flag: &str) {
    let name = flag.split_once('=').map_or(flag, |(name, _)| name);
    args.retain(|arg| arg != name && !arg.strip_prefix(name).is_some_and(|rest| rest.starts_with('=')));
    args.push(flag.to_owned());
}

/// Whether a period as the gateway reads it (`0s`, `0ms`, `0`) is zero.
fn is_zero_period(period: &str) -> bool {
    let number = period.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    number.parse::<f64>().is_ok_and(|value| value == 0.0)
}

/// A process's resident memory (VmRSS, KiB).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// `binary` copied into `dir`, for a benchmark's twin to run from. Processes that run one file
/// share its pages of code, and so each other's cached code lines: a twin run from the judging
/// gateway's own file warmed the code the two have in common (TLS, HTTP, reading the body) for
/// it between its requests, while a baseline build, another file, had no such help and measured
/// slower in every A/A run. A process run from its own copy stands alone, as a deployed gateway
/// does.
pub fn own_copy(binary: &Path, dir: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let copy = dir.canonicalize()?.join("suture-gateway");
    // Compared as the files they name: a copy onto itself would truncate the binary.
    let original = binary
        .canonicalize()
        .with_context(|| format!("cannot find {}", binary.display()))?;
    anyhow::ensure!(
        copy != original,
        "{} would be copied onto itself",
        binary.display()
    );
    // `fs::copy` keeps the permissions: the copy is executable.
    std::fs::copy(binary, &copy)
        .with_context(|| format!("cannot copy {} to {}", binary.display(), copy.display()))?;
    Ok(copy)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn the_rehearsal_arguments_are_read_from_the_rendered_deployment() {
        let stream = "kind: Namespace\nmetadata:\n  name: x\n---\nkind: Deployment\nspec:\n  \
                      template:\n    spec:\n      containers:\n      - args:\n        - --listen=:8443\n        \
                      - --keep-warm=2ms\n        - --keep-warm-for=10s\n";
        assert_eq!(
            keep_warm_args(stream).unwrap(),
            ["--keep-warm=2ms", "--keep-warm-for=10s"]
        );
        assert!(keep_warm_args("kind: Namespace\n").is_err(), "no Deployment");
    }

    #[test]
    fn a_flag_takes_the_place_of_its_namesake_only() {
        let mut args = vec![
            "--keep-warm=2ms".to_owned(),
            "--keep-warm-for=1m".to_owned(),
            "--decision-log=stdout".to_owned(),
        ];
        set_flag(&mut args, "--keep-warm=5ms");
        assert_eq!(
            args,
            ["--keep-warm-for=1m", "--decision-log=stdout", "--keep-warm=5ms"]
        );
        set_keep_warm(&mut args, "0s");
        assert_eq!(args, ["--decision-log=stdout"], "off: no rehearsal flag at all");
    }

    #[test]
    fn a_zero_period_turns_rehearsals_off() {
        for zero in ["0s", "0ms", "0", "0.0s"] {
            assert!(is_zero_period(zero), "{zero}");
        }
        for period in ["2ms", "1s", "0.5s"] {
            assert!(!is_zero_period(period), "{period}");
        }
    }

    #[test]
    fn a_twin_runs_from_its_own_executable_file_with_the_same_bytes() {
        let root = std::env::temp_dir().join(format!("suture-own-copy-{}", std::process::id()));
        let built = root.join("build");
        std::fs::create_dir_all(&built).unwrap();
        let binary = built.join("suture-gateway");
        std::fs::write(&binary, b"\x7fELF and the rest").unwrap();
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();

        let copy = own_copy(&binary, &root.join("noop")).unwrap();

        assert_ne!(copy, binary);
        assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&binary).unwrap());
        let (original, copied) = (binary.metadata().unwrap(), copy.metadata().unwrap());
        assert_ne!(copied.ino(), original.ino(), "a file of its own, not a link");
        assert_eq!(copied.permissions().mode() & 0o111, 0o111, "still executable");
        // A twin whose directory is its binary's, however it is spelled: refused rather than
        // truncated.
        assert!(own_copy(&binary, &built).is_err());
        assert!(own_copy(&binary, &root.join("noop/../build")).is_err());
        assert_eq!(std::fs::read(&binary).unwrap(), b"\x7fELF and the rest");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
