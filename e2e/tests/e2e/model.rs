//! The live model follows reality: after creations, updates and deletions — the admin's and the
//! controllers' own (pods created and removed by the ReplicaSet controller, readiness, PDB
//! status from the disruption controller) — the gateway's answers change with the cluster.
//! Asserted on what the gateway answers (dry-run evictions through kube-apiserver), not on its
//! metrics.

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, EvictParams, PostParams};
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Operator};
use suture_e2e::wait::{self, SETTLE};
use suture_e2e::{Cluster, gateway};

use suture_e2e::scenes;

pub const TESTS: [Test; 1] = [Test {
    name: "model::the_gateways_answers_follow_the_cluster",
    run: the_gateways_answers_follow_the_cluster,
}];

const NS: &str = "e2e-model";

/// Waits until a dry-run eviction of a Ready web pod by `op` is refused by the pack (`refused`)
/// or admitted.
async fn until_eviction_is(
    cluster: &Cluster,
    op: &Operator,
    refused: bool,
    what: &str,
) -> anyhow::Result<()> {
    let pods: Api<Pod> = Api::namespaced(op.client.clone(), NS);
    let dry = EvictParams {
        delete_options: Some(DeleteParams {
            dry_run: true,
            ..DeleteParams::default()
        }),
        post_options: PostParams {
            dry_run: true,
            ..PostParams::default()
        },
    };
    wait::until(what, SETTLE, || {
        let (pods, dry) = (pods.clone(), dry.clone());
        async move {
            let Some(pod) = scene::ready_pods(cluster, NS).await?.first().cloned() else {
                return Ok(Some("no Ready pod".to_owned()));
            };
            Ok(match (pods.evict(&pod, &dry).await, refused) {
                (Err(kube::Error::Api(status)), true) if status.message.contains("SafetyPolicy 'suture-") => {
                    None
                }
                (Ok(_), false) => None,
                (other, _) => Some(format!("{pod}: {:?}", other.map(|_| "admitted"))),
            })
        }
    })
    .await
}

fn scale(cluster: &Cluster, replicas: u32) -> anyhow::Result<()> {
    let replicas = format!("--replicas={replicas}");
    scene::kubectl(cluster, &["-n", NS, "scale", "deployment/web", &replicas], None).map(|_| ())
}

fn the_gateways_answers_follow_the_cluster(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "web-operator").await?;
        gateway::ensure(cluster).await?;
        scene::apply(cluster, &scenes::web(NS, "web", 2, "RollingUpdate", 2))?;
        scene::deployment_ready(cluster, NS, "web").await?;
        scene::pdb_settled(cluster, NS, "web", 0).await?;
        until_eviction_is(cluster, &op, true, "2 of minAvailable 2: eviction refused").await?;

        // An update, and the controllers' creations: a third Ready pod, the budget allows one.
        scale(cluster, 3)?;
        scene::deployment_ready(cluster, NS, "web").await?;
        scene::pdb_settled(cluster, NS, "web", 1).await?;
        until_eviction_is(cluster, &op, false, "3 of minAvailable 2: eviction admitted").await?;

        // The controllers' deletions: back to two pods.
        scale(cluster, 2)?;
        scene::deployment_ready(cluster, NS, "web").await?;
        scene::pdb_settled(cluster, NS, "web", 0).await?;
        until_eviction_is(cluster, &op, true, "back to 2: eviction refused again").await?;

        // A deletion: without its budget the pod may go.
        scene::kubectl(cluster, &["-n", NS, "delete", "pdb/web"], None)?;
        until_eviction_is(cluster, &op, false, "budget deleted: eviction admitted").await?;
        println!("  scaled 2 → 3 → 2 and the budget deleted: the gateway's answers followed each step");
        Ok(())
    })
}
