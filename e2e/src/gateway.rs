//! The gateway registered for real: `kubectl suture install --webhook-url` rendered and applied
//! with server-side apply (CRDs, RBAC, TLS Secret, webhook configuration, self-protection policy),
//! and `suture-gateway` run on this host with a kubeconfig holding the install's own
//! ServiceAccount token, so a verb the rendered ClusterRole lacks fails the suite.

use std::path::{Path, PathBuf};
use std::process::Command;
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

/// A gateway serving the cluster's webhook from this host.
#[derive(Debug)]
pub struct Gateway {
    process: Option<Process>,
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

/// A kubeconfig file for the ServiceAccount `namespace/name`, written into `dir`.
pub async fn service_account_kubeconfig(
    cluster: &Cluster,
    namespace: &str,
    name: &str,
) -> anyhow::Result<PathBuf> {
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
    let path = cluster.dir().join(format!("{namespace}-{name}.kubeconfig"));
    kubeconfig::write(
        &path,
        &server,
        &ca,
        &format!("system:serviceaccount:{namespace}:{name}"),
        &Credentials::Token(token),
    )?;
    Ok(path)
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
    /// gateway on this host with the install's own credentials; returns once it is ready.
    pub async fn install(cluster: &Cluster, service_accounts: &[&str]) -> anyhow::Result<Self> {
        let dir = cluster.dir().join("gateway");
        std::fs::create_dir_all(&dir)?;
        let port = free_port()?;
        let url = format!("https://{}:{port}", cluster.gateway_host);
        let manifests = dir.join("manifests");
        let mut render = Command::new(binaries::path("kubectl-suture")?);
        render
            .args(["install", "--self-signed", "--webhook-url", &url, "-o"])
            .arg(&manifests);
        for account in service_accounts {
            render.args(["--service-account", account]);
        }
        let out = render.output()?;
        anyhow::ensure!(
            out.status.success(),
            "kubectl suture install: {}",
            String::from_utf8_lossy(&out.stderr)
        );
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
        let kubeconfig = service_account_kubeconfig(cluster, NAMESPACE, NAME).await?;
        let metrics = format!("127.0.0.1:{}", free_port()?);
        let p = |path: &Path| path.display().to_string();
        let args = vec![
            format!("--listen=0.0.0.0:{port}"),
            format!("--metrics-listen={metrics}"),
            format!("--tls-cert={}", p(&dir.join("tls.crt"))),
            format!("--tls-key={}", p(&dir.join("tls.key"))),
            format!("--kubeconfig={}", p(&kubeconfig)),
            "--decision-log=stdout".to_owned(),
            format!("--protect-namespace={NAMESPACE}"),
            format!("--protect-deployment={NAME}"),
            format!("--protect-webhook={NAME}"),
            "--poll-interval=500ms".to_owned(),
            format!("--ledger-identity={LEDGER_IDENTITY}"),
        ];
        let mut gateway = Self {
            process: None,
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
        self.sibling(identity, None, "127.0.0.1", "127.0.0.1").await
    }

    /// A judging gateway from another build (`binary`, e.g. the previous commit's), started with
    /// this one's arguments (credentials, certificate, policy selection), its own ports and
    /// ledger identity `identity`, listening where kube-apiserver reaches this one (`host`): the
    /// baseline a benchmark times beside this build. It runs from its own copy of `binary`
    /// ([`own_copy`]).
    pub async fn judging_twin(&self, binary: &Path, host: &str, identity: &str) -> anyhow::Result<Self> {
        anyhow::ensure!(
            binary.is_file(),
            "the baseline gateway {} is not a file",
            binary.display()
        );
        let copy = own_copy(binary, &self.dir.join(identity))?;
        self.sibling(identity, Some(copy), "0.0.0.0", host).await
    }

    /// The binary this gateway runs.
    fn binary(&self) -> anyhow::Result<PathBuf> {
        match &self.binary {
            Some(binary) => Ok(binary.clone()),
            None => binaries::path("suture-gateway"),
        }
    }

    /// A gateway with this one's arguments but its own ports and ledger identity, started.
    async fn sibling(
        &self,
        identity: &str,
        binary: Option<PathBuf>,
        listen: &str,
        host: &str,
    ) -> anyhow::Result<Self> {
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
        let mut sibling = Self {
            process: None,
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
            binary: Some(binary),
            args,
            dir,
            metrics,
            url: format!("https://{host}:{port}"),
        };
        twin.start().await?;
        Ok(twin)
    }

    /// Starts (or restarts) the gateway process and waits for /readyz.
    pub async fn start(&mut self) -> anyhow::Result<()> {
        let binary = self.binary()?;
        let process = Process::spawn("suture-gateway", &binary, &self.args, &self.dir)?;
        self.process = Some(process);
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Some(process) = &mut self.process {
                process.check_alive()?;
            }
            if let Ok((200, _)) = http_get(&self.metrics, "/readyz").await {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        anyhow::bail!("the gateway was not ready in 60s:\n{}", self.log_tail(40))
    }

    /// The gateway process's id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(Process::id)
    }

    /// The gateway process's resident memory (VmRSS, KiB), while it runs.
    pub fn rss_kib(&self) -> Option<u64> {
        rss_kib(self.pid()?)
    }

    /// Kills the gateway (a fault test).
    /// Restarts the gateway with `flag` added to its arguments (kept for later restarts).
    pub async fn restart_with(&mut self, flag: &str) -> anyhow::Result<()> {
        self.kill();
        self.args.push(flag.to_owned());
        self.start().await
    }

    /// From its next start, this gateway (and the twins started from it) runs another build of
    /// `suture-gateway` (e.g. the profile-guided release build), from its own copy in this
    /// gateway's directory.
    pub fn run_build(&mut self, binary: &Path) -> anyhow::Result<()> {
        anyhow::ensure!(
            binary.is_file(),
            "the gateway build {} is not a file",
            binary.display()
        );
        self.binary = Some(own_copy(binary, &self.dir.join("build"))?);
        Ok(())
    }

    pub fn kill(&mut self) {
        if let Some(mut process) = self.process.take() {
            process.stop();
        }
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
