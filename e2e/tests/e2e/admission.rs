//! The gateway in kube-apiserver's request path: operators' harmful requests refused with the
//! pack's message and the cluster unchanged, routine requests admitted, a person's requests not
//! judged, dry runs judged.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use suture_e2e::Cluster;
use suture_e2e::gateway::Gateway;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene;

use crate::control_plane::database;

pub const TESTS: [Test; 1] = [Test {
    name: "admission::harmful_database_requests_are_refused_and_routine_ones_admitted",
    run: harmful_database_requests_are_refused_and_routine_ones_admitted,
}];

/// The message of a refused request, or an error if it was admitted.
fn refusal<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> anyhow::Result<String> {
    match result {
        Ok(value) => anyhow::bail!("admitted: {value:?}"),
        Err(kube::Error::Api(status)) => Ok(status.message),
        Err(other) => anyhow::bail!("failed otherwise: {other}"),
    }
}

fn harmful_database_requests_are_refused_and_routine_ones_admitted(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let operator = scene::operator(cluster, "e2e-operators", "db-operator").await?;
        let gateway = Gateway::install(cluster, &["e2e-operators/db-operator"]).await?;
        let ns = "e2e-db";
        scene::apply(cluster, &database(ns, 3, 2))?;
        scene::statefulset_ready(cluster, ns, "db").await?;

        let claims: Api<PersistentVolumeClaim> = Api::namespaced(operator.client.clone(), ns);
        let message = refusal(claims.delete("data-db-0", &DeleteParams::default()).await)?;
        println!("  live claim delete refused: {message}");
        anyhow::ensure!(message.contains("admission webhook"), "{message}");

        let sets: Api<StatefulSet> = Api::namespaced(operator.client.clone(), ns);
        let message = refusal(sets.delete("db", &DeleteParams::default()).await)?;
        println!("  statefulset delete refused: {message}");

        let scale = serde_json::json!({"spec": {"replicas": 1}});
        let message = refusal(
            sets.patch_scale("db", &PatchParams::default(), &Patch::Merge(&scale))
                .await,
        )?;
        println!("  scale to 1 refused: {message}");

        // Routine: one more member.
        let scale = serde_json::json!({"spec": {"replicas": 4}});
        sets.patch_scale("db", &PatchParams::default(), &Patch::Merge(&scale))
            .await?;
        scene::statefulset_ready(cluster, ns, "db").await?;
        let admin_claims: Api<PersistentVolumeClaim> = Api::namespaced(cluster.client.clone(), ns);
        anyhow::ensure!(admin_claims.get_opt("data-db-0").await?.is_some());
        println!("{}", gateway.log_tail(5));
        Ok(())
    })
}
