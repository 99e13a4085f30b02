//! The Kubernetes client, resolved as kubectl resolves it: `--kubeconfig FILE`, else
//! `$KUBECONFIG`, else `~/.kube/config`, with `--context` choosing a context; in a pod with none
//! of these, its service account. `--request-timeout` bounds every request.

use std::path::PathBuf;

use anyhow::Context as _;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::live::args::KubeArgs;

/// Where the client's credentials come from, when any can be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// A kubeconfig file named by `--kubeconfig`.
    File(PathBuf),
    /// The default kubeconfig (`$KUBECONFIG` or `~/.kube/config`), which exists.
    Default,
    /// The service account of the pod this runs in.
    InCluster,
}

/// The credentials live mode would use, or `None` when there is no kubeconfig (no flag, no
/// `$KUBECONFIG` file, no `~/.kube/config`) and this is not a pod.
pub fn credentials(args: &KubeArgs) -> Option<Credentials> {
    if let Some(path) = &args.kubeconfig {
        return Some(Credentials::File(path.clone()));
    }
    if args.context.is_some() || default_kubeconfig_exists() {
        return Some(Credentials::Default);
    }
    std::env::var_os("KUBERNETES_SERVICE_HOST").map(|_| Credentials::InCluster)
}

/// True when `$KUBECONFIG` names an existing file, or (without `$KUBECONFIG`) `~/.kube/config`
/// exists.
fn default_kubeconfig_exists() -> bool {
    match std::env::var_os("KUBECONFIG") {
        Some(paths) if !paths.is_empty() => std::env::split_paths(&paths).any(|p| p.is_file()),
        _ => std::env::var_os("HOME")
            .map(|home| PathBuf::from(home).join(".kube").join("config"))
            .is_some_and(|p| p.is_file()),
    }
}

/// Builds the client for `credentials`.
pub async fn client(args: &KubeArgs, credentials: &Credentials) -> anyhow::Result<kube::Client> {
    let options = KubeConfigOptions {
        context: args.context.clone(),
        ..KubeConfigOptions::default()
    };
    let mut config = match credentials {
        Credentials::File(path) => {
            let file = Kubeconfig::read_from(path)
                .with_context(|| format!("cannot read the kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(file, &options)
                .await
                .with_context(|| format!("cannot use the kubeconfig {}", path.display()))?
        }
        Credentials::Default => kube::Config::from_kubeconfig(&options)
            .await
            .with_context(|| match &args.context {
                Some(context) => format!("cannot use the context {context} of the default kubeconfig"),
                None => "cannot use the default kubeconfig".to_owned(),
            })?,
        Credentials::InCluster => {
            kube::Config::incluster().context("cannot use the pod's service account")?
        }
    };
    if let Some(timeout) = args.request_timeout {
        // kubectl's `--request-timeout 0`: no timeout at all.
        let timeout = (!timeout.is_zero()).then_some(timeout);
        config.connect_timeout = timeout;
        config.read_timeout = timeout;
        config.write_timeout = timeout;
    }
    kube::Client::try_from(config).context("cannot build the Kubernetes client")
}
