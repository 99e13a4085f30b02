//! The cluster itself: the real controllers and the node simulator act a scene out (the
//! StatefulSet controller creates ordinals and claims, the simulator binds and runs them, the
//! EndpointSlice controller publishes ready endpoints, the disruption controller computes budgets).

use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Api;
use kube::api::ListParams;
use suture_e2e::Cluster;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene;
use suture_e2e::wait::{self, SETTLE};

use suture_e2e::scenes::database;

pub const TESTS: [Test; 1] = [Test {
    name: "control_plane::controllers_and_simulator_settle_a_database_scene",
    run: controllers_and_simulator_settle_a_database_scene,
}];

fn controllers_and_simulator_settle_a_database_scene(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let ns = "e2e-settle";
        scene::apply(cluster, &database(ns, 3, 2))?;
        scene::statefulset_ready(cluster, ns, "db").await?;
        assert_eq!(scene::ready_pods(cluster, ns).await?, ["db-0", "db-1", "db-2"]);
        let slices: Api<EndpointSlice> = Api::namespaced(cluster.client.clone(), ns);
        wait::until("3 ready endpoints for db", SETTLE, || {
            let slices = slices.clone();
            async move {
                let ready = slices
                    .list(&ListParams::default().labels("kubernetes.io/service-name=db"))
                    .await?
                    .items
                    .iter()
                    .flat_map(|s| s.endpoints.iter())
                    .filter(|e| e.conditions.as_ref().and_then(|c| c.ready) == Some(true))
                    .count();
                Ok((ready != 3).then(|| format!("{ready} ready endpoints")))
            }
        })
        .await?;
        let budgets: Api<PodDisruptionBudget> = Api::namespaced(cluster.client.clone(), ns);
        wait::until("the disruption controller's status for db", SETTLE, || {
            let budgets = budgets.clone();
            async move {
                let status = budgets.get("db").await?.status.unwrap_or_default();
                Ok(
                    (status.current_healthy != 3 || status.disruptions_allowed != 1).then(|| {
                        format!(
                            "currentHealthy {} disruptionsAllowed {}",
                            status.current_healthy, status.disruptions_allowed
                        )
                    }),
                )
            }
        })
        .await?;
        Ok(())
    })
}
