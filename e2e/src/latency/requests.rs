//! The requests the latency benchmark times, each a dry run sent by a judged operator and
//! admitted in every admission setup (so kube-apiserver does the same work after admission):
//! create a Deployment, delete a Pod, scale a StatefulSet up.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::scene::TOLERATION;

/// One timed request kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RequestKind {
    CreateDeployment,
    DeletePod,
    ScaleStatefulSet,
}

impl RequestKind {
    /// Every kind, in report order.
    pub const ALL: [Self; 3] = [Self::CreateDeployment, Self::DeletePod, Self::ScaleStatefulSet];

    /// How the report names it.
    pub fn label(self) -> &'static str {
        match self {
            Self::CreateDeployment => "create Deployment",
            Self::DeletePod => "delete Pod",
            Self::ScaleStatefulSet => "scale StatefulSet",
        }
    }
}

/// What the requests act on: `namespace` holds the StatefulSet `db` and the web pod `pod`.
#[derive(Debug, Clone)]
pub struct Targets {
    pub namespace: String,
    pub pod: String,
    /// The StatefulSet's replicas now (the scale asks for one more).
    pub replicas: i32,
}

/// Sends one dry-run request of `kind` with `client` and returns how long kube-apiserver took to
/// answer; an error if it was refused (every setup must admit it).
pub async fn send(client: &kube::Client, targets: &Targets, kind: RequestKind) -> anyhow::Result<Duration> {
    let ns = targets.namespace.as_str();
    let started;
    let outcome = match kind {
        RequestKind::CreateDeployment => {
            let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
            let deployment = new_deployment()?;
            let params = PostParams {
                dry_run: true,
                ..PostParams::default()
            };
            started = Instant::now();
            deployments.create(&params, &deployment).await.map(|_| ())
        }
        RequestKind::DeletePod => {
            let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
            let params = DeleteParams {
                dry_run: true,
                ..DeleteParams::default()
            };
            started = Instant::now();
            pods.delete(&targets.pod, &params).await.map(|_| ())
        }
        RequestKind::ScaleStatefulSet => {
            let sets: Api<StatefulSet> = Api::namespaced(client.clone(), ns);
            let up = json!({"spec": {"replicas": targets.replicas + 1}});
            started = Instant::now();
            sets.patch_scale("db", &PatchParams::default().dry_run(), &Patch::Merge(&up))
                .await
                .map(|_| ())
        }
    };
    let elapsed = started.elapsed();
    outcome.map_err(|error| anyhow::anyhow!("{}: {error}", kind.label()))?;
    Ok(elapsed)
}

fn new_deployment() -> anyhow::Result<Deployment> {
    let toleration: serde_json::Value = serde_yaml_ng::from_str(TOLERATION)?;
    Ok(serde_json::from_value(json!({
        "metadata": {"name": "bench-new", "labels": {"app": "bench-new"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "bench-new"}},
            "template": {
                "metadata": {"labels": {"app": "bench-new"}},
                "spec": {
                    "tolerations": [toleration],
                    "containers": [{"name": "app", "image": "nginx:1.27"}],
                },
            },
        },
    }))?)
}
