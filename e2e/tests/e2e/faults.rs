//! Faults: the gateway killed (the judged identities' writes refused by failurePolicy Fail,
//! everyone else untouched, admitted again once it is back, nothing admitted unjudged in between)
//! and kube-apiserver restarted (the gateway's watches resume and its model is current again).

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;
use suture_e2e::Cluster;
use suture_e2e::gateway;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene;

use suture_e2e::scenes;

pub const TESTS: [Test; 2] = [
    Test {
        name: "faults::a_killed_gateway_fails_closed_for_operators_only",
        run: a_killed_gateway_fails_closed_for_operators_only,
    },
    Test {
        name: "faults::after_an_apiserver_restart_the_model_is_current_again",
        run: after_an_apiserver_restart_the_model_is_current_again,
    },
];

fn config_map(name: &str) -> anyhow::Result<ConfigMap> {
    Ok(serde_json::from_value(
        json!({"metadata": {"name": name}, "data": {"k": "v"}}),
    )?)
}

fn a_killed_gateway_fails_closed_for_operators_only(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "db-operator").await?;
        gateway::ensure(cluster).await?;
        let ns = "e2e-fault-gateway";
        scene::apply(cluster, &scenes::namespace_yaml(ns))?;
        let as_operator: Api<ConfigMap> = Api::namespaced(op.client.clone(), ns);
        let as_admin: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), ns);
        if let Some(gateway) = cluster.gateway.as_mut() {
            gateway.kill();
        }
        let refused = as_operator
            .create(&PostParams::default(), &config_map("while-down")?)
            .await;
        let message = scene::refusal("an operator's write while the gateway was down", refused)?;
        anyhow::ensure!(message.contains("failed calling webhook"), "{message}");
        println!(
            "  operator refused while down: {}",
            message.lines().next().unwrap_or_default()
        );
        as_admin
            .create(&PostParams::default(), &config_map("admin-while-down")?)
            .await?;
        if let Some(gateway) = cluster.gateway.as_mut() {
            gateway.start().await?;
        }
        as_operator
            .create(&PostParams::default(), &config_map("after-restart")?)
            .await?;
        anyhow::ensure!(as_admin.get_opt("while-down").await?.is_none());
        println!("  admin untouched while down; operator admitted again after the restart");
        Ok(())
    })
}

fn after_an_apiserver_restart_the_model_is_current_again(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "db-operator").await?;
        gateway::ensure(cluster).await?;
        let Some(plane) = cluster.control_plane() else {
            println!("  skipped: the cluster is not the suite's own control plane");
            return Ok(());
        };
        plane.restart_apiserver().await?;
        // Made after the restart: only resumed watches can tell the gateway about it.
        let ns = "e2e-fault-apiserver";
        scene::apply(cluster, &scenes::database(ns, 3, 2))?;
        scene::statefulset_ready(cluster, ns, "db").await?;
        scene::gateway_sees(&op, ns).await?;
        let sets: Api<StatefulSet> = Api::namespaced(op.client.clone(), ns);
        // A scale request carries no StatefulSet (only a Scale): judged by its figures (two pods
        // stopped) only once the StatefulSet watch itself has resumed and the model holds the
        // set. Until then the gateway refuses it by failurePolicy (the model does not hold the
        // set yet), never admits it. (A DELETE would not show it: its oldObject lets the set be
        // judged while the model still lags.)
        let admitted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let lagging = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        scene::until_answered(
            "the StatefulSet made after the restart to be in the gateway's model",
            scene::Answer::RefusedWith(" stops 2 pods"),
            || {
                let (sets, admitted, lagging) = (
                    sets.clone(),
                    std::sync::Arc::clone(&admitted),
                    std::sync::Arc::clone(&lagging),
                );
                async move {
                    let answer = sets
                        .patch_scale(
                            "db",
                            &PatchParams::default().dry_run(),
                            &Patch::Merge(json!({"spec": {"replicas": 1}})),
                        )
                        .await;
                    match &answer {
                        Ok(_) => {
                            admitted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        Err(kube::Error::Api(status)) if status.message.contains("does not hold") => {
                            lagging.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        Err(_) => {}
                    }
                    answer
                }
            },
        )
        .await?;
        let admitted = admitted.load(std::sync::atomic::Ordering::Relaxed);
        anyhow::ensure!(
            admitted == 0,
            "a scale below quorum was admitted {admitted} times while the model lagged"
        );
        println!(
            "  a scale below quorum: refused {} times by failurePolicy while the model lacked the set, never admitted",
            lagging.load(std::sync::atomic::Ordering::Relaxed)
        );
        let message = scene::refusal(
            "deleting the StatefulSet made after the restart",
            sets.delete("db", &DeleteParams::default()).await,
        )?;
        anyhow::ensure!(message.contains("SafetyPolicy 'suture-"), "{message}");
        println!("  kube-apiserver restarted; a StatefulSet made afterwards is judged from the model");
        Ok(())
    })
}
