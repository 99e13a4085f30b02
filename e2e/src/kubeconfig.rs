//! Kubeconfig files for the run: the admin's (client certificate), kube-controller-manager's, and
//! a ServiceAccount's (bearer token) — what kubectl, the tests and the gateway connect with.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::json;

/// How a kubeconfig's user authenticates.
#[derive(Debug, Clone)]
pub enum Credentials {
    /// A client certificate and key (files).
    Certificate { cert: PathBuf, key: PathBuf },
    /// A bearer token.
    Token(String),
}

/// Writes a one-context kubeconfig for `server` (trusting the CA file `ca`) to `path`.
pub fn write(
    path: &Path,
    server: &str,
    ca: &Path,
    user: &str,
    credentials: &Credentials,
) -> anyhow::Result<()> {
    let user_entry = match credentials {
        Credentials::Certificate { cert, key } => json!({
            "client-certificate": cert,
            "client-key": key,
        }),
        Credentials::Token(token) => json!({ "token": token }),
    };
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": {"server": server, "certificate-authority": ca}}],
        "users": [{"name": user, "user": user_entry}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": user}}],
        "current-context": "e2e",
    });
    let text = serde_yaml_ng::to_string(&config)?;
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// A client for the kubeconfig at `path`.
pub async fn client(path: &Path) -> anyhow::Result<kube::Client> {
    let kubeconfig = kube::config::Kubeconfig::read_from(path)
        .with_context(|| format!("cannot read the kubeconfig {}", path.display()))?;
    let config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default())
            .await
            .with_context(|| format!("cannot use the kubeconfig {}", path.display()))?;
    Ok(kube::Client::try_from(config)?)
}
