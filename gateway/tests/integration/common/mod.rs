//! Shared helpers: start a real gateway in-process on loopback (port 0, `--self-signed`, fast
//! polling) and talk to it over HTTPS with a client that trusts the generated CA.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use suture_gateway::config::Config;
use suture_gateway::run::{Hooks, Running, start};

pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// A path under the repository root.
pub fn repo(path: &str) -> PathBuf {
    Path::new(REPO).join(path)
}

/// The shared fixtures directory (`../shared` next to the repository), when present.
pub fn shared(path: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared")
        .join(path);
    if dir.exists() {
        Some(dir)
    } else {
        println!("skipped: {} is absent", dir.display());
        None
    }
}

/// A gateway running in this process and a client for it.
pub struct Gateway {
    pub running: Running,
    pub client: reqwest::Client,
    pub ca_pem: String,
}

impl Gateway {
    /// Starts a gateway with `--self-signed` on loopback plus `args`.
    pub async fn start(args: &[&str]) -> Self {
        Self::start_with(args, Hooks::default()).await
    }

    pub async fn start_with(args: &[&str], hooks: Hooks) -> Self {
        let mut argv = vec!["suture-gateway"];
        if !args.contains(&"--tls-cert") {
            argv.push("--self-signed");
        }
        argv.extend([
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--decision-log",
            "off",
            "--poll-interval",
            "50ms",
            "--shutdown-grace",
            "5s",
        ]);
        argv.extend_from_slice(args);
        let database = repo("testdata/clusters/database");
        let database = database.to_str().unwrap().to_owned();
        if !args.contains(&"--cluster") && !args.contains(&"--noop") {
            argv.push("--cluster");
            argv.push(&database);
        }
        let config = <Config as clap::Parser>::try_parse_from(&argv).unwrap();
        let running = start(config, hooks).await.expect("the gateway starts");
        let ca_pem = running
            .self_signed
            .as_ref()
            .map(|pair| pair.ca_pem.clone())
            .unwrap_or_default();
        let client = if ca_pem.is_empty() {
            client(&[])
        } else {
            client(&[&ca_pem])
        };
        Self {
            running,
            client,
            ca_pem,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.running.webhook_addr.port())
    }

    pub fn ops_url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.running.metrics_addr.port())
    }

    /// POSTs `body` to /validate; returns the HTTP status and the JSON answer.
    pub async fn post(&self, body: impl Into<reqwest::Body>) -> (u16, serde_json::Value) {
        post_with(&self.client, &self.url("/validate"), body).await
    }

    /// POSTs a review file.
    pub async fn post_file(&self, path: &Path) -> (u16, serde_json::Value) {
        self.post(std::fs::read(path).unwrap()).await
    }

    /// GETs an operations path (plain HTTP): status and body.
    pub async fn ops(&self, path: &str) -> (u16, String) {
        let response = reqwest::get(self.ops_url(path)).await.unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    pub async fn readiness(&self) -> serde_json::Value {
        serde_json::from_str(&self.ops("/readyz").await.1).unwrap()
    }
}

/// A client trusting `cas`.
pub fn client(cas: &[&str]) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .tls_info(true)
        .timeout(Duration::from_secs(10));
    for ca in cas {
        builder = builder.add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap());
    }
    builder.build().unwrap()
}

pub async fn post_with(
    client: &reqwest::Client,
    url: &str,
    body: impl Into<reqwest::Body>,
) -> (u16, serde_json::Value) {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (status, json)
}

/// Retries `check` until it holds or `timeout` passes.
pub async fn eventually<F, Fut>(timeout: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let started = Instant::now();
    while started.elapsed() < timeout {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Writes `text` to `path` atomically (write + rename), as config-map updates do.
pub fn write_atomically(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// A minimal AdmissionReview for `operation` on a pod.
pub fn pod_review(uid: &str, operation: &str, namespace: &str, name: &str) -> String {
    serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "name": name,
            "namespace": namespace,
            "operation": operation,
            "userInfo": {"username": "tester", "groups": ["system:authenticated"]},
            "object": null,
            "oldObject": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}},
            "dryRun": false
        }
    })
    .to_string()
}
