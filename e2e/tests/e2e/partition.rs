//! The split-brain class: a StatefulSet member on a Node that stopped reporting. The simulator
//! cuts the Node off (no Lease renewed, its pods no longer tended), the real node lifecycle
//! controller taints it `node.kubernetes.io/unreachable`, and the operator's force delete of the
//! member (`gracePeriodSeconds: 0`) is refused by `suture-data-loss`: the StatefulSet would start
//! it again, on its claim, while the old one may still run. Its graceful delete goes through and
//! leaves the pod Terminating, as a node that cannot confirm leaves it. Afterwards the Node is
//! deleted (confirmed down) and the scene removed by the admin.

use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Api;
use kube::api::DeleteParams;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Answer};
use suture_e2e::wait;
use suture_e2e::{Cluster, gateway, scenes, simulator};

pub const TESTS: [Test; 1] = [Test {
    name: "partition::force_deleting_a_member_on_an_unreachable_node_is_refused",
    run: force_deleting_a_member_on_an_unreachable_node_is_refused,
}];

const NS: &str = "e2e-partition";
const NODE: &str = "part-0";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";

/// The database scene with one member (and a budget of 0), pinned to the Node that will be cut
/// off.
fn scene() -> String {
    let pinned = format!(
        "    spec:\n      nodeSelector: {{kubernetes.io/hostname: {NODE}}}\n      tolerations: [{{key: {}, operator: Exists}}, ",
        simulator::DEDICATED_KEY
    );
    scenes::database(NS, 1, 0).replace("    spec:\n      tolerations: [", &pinned)
}

fn force_deleting_a_member_on_an_unreachable_node_is_refused(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "db-operator").await?;
        gateway::ensure(cluster).await?;
        cluster.simulator.add_node(NODE, Some("partition")).await?;
        scene::apply(cluster, &scene())?;
        scene::statefulset_ready(cluster, NS, "db").await?;

        cluster.simulator.partition(NODE);
        let nodes: Api<Node> = Api::all(cluster.client.clone());
        wait::until(
            "the node lifecycle controller to taint the cut-off Node unreachable",
            Duration::from_secs(150),
            || {
                let nodes = nodes.clone();
                async move {
                    let node = nodes.get(NODE).await?;
                    let taints = node.spec.and_then(|s| s.taints).unwrap_or_default();
                    Ok((!taints.iter().any(|t| t.key == UNREACHABLE)).then(|| format!("taints {taints:?}")))
                }
            },
        )
        .await?;
        println!("  Node {NODE} cut off: the node lifecycle controller tainted it {UNREACHABLE}");

        // The gateway's model has the taint once the operator's dry-run force delete is refused
        // (a dry run changes nothing, so it can be asked until then).
        let pods: Api<Pod> = Api::namespaced(op.client.clone(), NS);
        let force = |dry_run: bool| DeleteParams {
            grace_period_seconds: Some(0),
            dry_run,
            ..DeleteParams::default()
        };
        let expected = format!("while the old one may still run on unreachable Node {NODE}");
        scene::until_answered(
            "the gateway to refuse the dry-run force delete",
            Answer::RefusedWith(&expected),
            || {
                let pods = pods.clone();
                async move { pods.delete("db-0", &force(true)).await }
            },
        )
        .await?;
        let message = scene::refusal(
            "the force delete of db-0",
            pods.delete("db-0", &force(false)).await,
        )?;
        anyhow::ensure!(
            message.contains("SafetyPolicy 'suture-data-loss'") && message.contains("on claim data-db-0"),
            "refused otherwise: {message}"
        );
        let admin_pods: Api<Pod> = Api::namespaced(cluster.client.clone(), NS);
        let pod = admin_pods.get("db-0").await?;
        anyhow::ensure!(
            pod.metadata.deletion_timestamp.is_none(),
            "the refused force delete marked the pod"
        );
        println!("  force delete of db-0 refused: {message}");

        // A graceful delete goes through; the pod stays Terminating, unconfirmed.
        pods.delete("db-0", &DeleteParams::default()).await?;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let pod = admin_pods.get("db-0").await?;
        anyhow::ensure!(
            pod.metadata.deletion_timestamp.is_some(),
            "the graceful delete did not mark the pod"
        );
        println!("  graceful delete of db-0 admitted: Terminating until its node confirms");

        // The node is confirmed down: deleted, with the scene.
        nodes.delete(NODE, &DeleteParams::default()).await?;
        scene::kubectl(
            cluster,
            &["-n", NS, "delete", "statefulset", "db", "--wait=false"],
            None,
        )?;
        admin_pods.delete("db-0", &force(false)).await?;
        scene::kubectl(cluster, &["delete", "namespace", NS, "--wait=false"], None)?;
        Ok(())
    })
}
