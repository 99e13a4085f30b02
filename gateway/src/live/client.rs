//! The Kubernetes client for live mode: in-cluster credentials inside a pod, else a kubeconfig
//! (`--kubeconfig FILE`, else `$KUBECONFIG` or `~/.kube/config`), with `--context` choosing
//! one of its contexts.

use std::path::PathBuf;

use anyhow::Context as _;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// Builds the client. In a pod (`KUBERNETES_SERVICE_HOST` set) with neither `kubeconfig` nor
/// `context`, the pod's service account is used; otherwise the kubeconfig.
pub async fn client(kubeconfig: Option<PathBuf>, context: Option<String>) -> anyhow::Result<kube::Client> {
    let options = KubeConfigOptions {
        context: context.clone(),
        ..KubeConfigOptions::default()
    };
    let config = match (kubeconfig, context) {
        (Some(path), _) => {
            let file = Kubeconfig::read_from(&path)
                .with_context(|| format!("reading kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(file, &options)
                .await
                .with_context(|| format!("loading kubeconfig {}", path.display()))?
        }
        (None, Some(context)) => kube::Config::from_kubeconfig(&options)
            .await
            .with_context(|| format!("loading context {context} from the default kubeconfig"))?,
        (None, None) if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() => {
            kube::Config::incluster().context("loading the in-cluster service account")?
        }
        (None, None) => kube::Config::infer()
            .await
            .context("no kubeconfig found and not running in a pod")?,
    };
    kube::Client::try_from(config).context("building the Kubernetes client")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const KUBECONFIG: &str = r#"
apiVersion: v1
kind: Config
current-context: a
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}
users:
- name: me
  user: {token: not-a-real-token}
contexts:
- name: a
  context: {cluster: local, user: me, namespace: ns-a}
- name: b
  context: {cluster: local, user: me, namespace: ns-b}
"#;

    #[tokio::test]
    async fn a_kubeconfig_and_its_contexts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(&path, KUBECONFIG).unwrap();
        let current = client(Some(path.clone()), None).await.unwrap();
        assert_eq!(current.default_namespace(), "ns-a");
        let chosen = client(Some(path.clone()), Some("b".into())).await.unwrap();
        assert_eq!(chosen.default_namespace(), "ns-b");
        let error = client(Some(path.clone()), Some("c".into())).await.err().unwrap();
        assert!(format!("{error:#}").contains("config"), "{error:#}");
        let error = client(Some(dir.path().join("missing")), None)
            .await
            .err()
            .unwrap();
        assert!(format!("{error:#}").contains("missing"), "{error:#}");
    }
}
