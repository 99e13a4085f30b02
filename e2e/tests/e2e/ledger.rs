//! The shared ledger of admitted disruption: two gateway replicas, each writing its shard
//! (a ConfigMap in the gateway's namespace) through the real API server and watching the
//! other's, hold the operators' requests to one `history` budget — the built-in pack's
//! `suture-disruption-rate`, one StatefulSet member per 5 minutes whoever asks. Reviews are
//! posted to each replica directly (kube-apiserver calls one URL): nothing is deleted, but
//! each replica records what it admits, as it would the real request.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{DeleteParams, ListParams};
use serde_json::Value;
use suture_e2e::Cluster;
use suture_e2e::gateway::{Gateway, LEDGER_IDENTITY, NAMESPACE};
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::{reviews, scene, wait};

pub const TESTS: [Test; 1] = [Test {
    name: "ledger::two_replicas_hold_operators_to_one_budget_that_survives_a_restart",
    run: two_replicas_hold_operators_to_one_budget_that_survives_a_restart,
}];

const NS: &str = "e2e-ledger";
const OPERATOR: &str = "system:serviceaccount:e2e-operators:db-operator";

/// A DELETE of pod `pod` of the scene by the operator, as kube-apiserver sends it.
fn pod_delete(uid: &str, pod: &str) -> Value {
    reviews::pod_delete(uid, NS, pod, OPERATOR, false)
}

/// (allowed, message) of a replica's answer.
fn verdict(response: &Value) -> (bool, String) {
    let message = response["status"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (response["allowed"].as_bool().unwrap_or(false), message)
}

/// The records `replica` judges with now (its own and the other replicas').
async fn records(replica: &Gateway) -> anyhow::Result<u64> {
    // A count, exact in an f64.
    Ok(replica.metric("suture_gateway_ledger_records").await? as u64)
}

/// Waits until `replica` judges with at least `records` records.
async fn until_records(replica: &Gateway, at_least: u64) -> anyhow::Result<()> {
    wait::until(
        &format!("a replica to hold {at_least} ledger records"),
        Duration::from_secs(20),
        || async move {
            let held = records(replica).await?;
            Ok((held < at_least).then(|| format!("{held} records")))
        },
    )
    .await
}

fn denied_by_the_budget(what: &str, response: &Value) -> anyhow::Result<()> {
    let (allowed, message) = verdict(response);
    anyhow::ensure!(!allowed, "{what}: admitted");
    anyhow::ensure!(
        message.contains("suture-disruption-rate") && message.contains("StatefulSet e2e-ledger/db"),
        "{what}: {message}"
    );
    Ok(())
}

fn two_replicas_hold_operators_to_one_budget_that_survives_a_restart(
    cluster: &mut Cluster,
) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::judged_database(cluster, NS, 3, 1).await?;
        let Some(a) = cluster.gateway.as_ref() else {
            anyhow::bail!("no gateway");
        };
        let mut b = a.replica("e2e-replica-b").await?;
        // What earlier tests' operators were admitted is in the ledger already (both replicas
        // read the same shards): count from there.
        let before = records(a).await?;
        until_records(&b, before).await?;

        // A burst over both replicas before either's records reach the other: each may admit
        // one member, the documented overshoot of one replica's admissions per other replica.
        let (first, second) = (
            a.post_review(&pod_delete("ledger-1", "db-0"))?,
            b.post_review(&pod_delete("ledger-2", "db-1"))?,
        );
        let admitted = [&first, &second].iter().filter(|r| verdict(r).0).count();
        anyhow::ensure!(
            admitted >= 1,
            "the first member of the window may go: {first} {second}"
        );
        println!("  burst over two replicas: {admitted} of 2 admitted (budget 1, overshoot at most 1)");

        // Once the shards have propagated, both replicas refuse the next member.
        let after = before + admitted as u64;
        until_records(a, after).await?;
        until_records(&b, after).await?;
        denied_by_the_budget(
            "db-2 on replica a",
            &a.post_review(&pod_delete("ledger-3", "db-2"))?,
        )?;
        denied_by_the_budget(
            "db-2 on replica b",
            &b.post_review(&pod_delete("ledger-4", "db-2"))?,
        )?;

        // Each admitting replica wrote its shard in the gateway's namespace, labelled for the
        // watch, holding its record (times, requester, workload, figures: no object).
        let config_maps: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), NAMESPACE);
        for (response, identity) in [(&first, LEDGER_IDENTITY), (&second, "e2e-replica-b")] {
            let shard = config_maps.get_opt(&format!("suture-ledger-{identity}")).await?;
            match (verdict(response).0, shard) {
                (true, Some(shard)) => {
                    let labels = shard.metadata.labels.unwrap_or_default();
                    anyhow::ensure!(labels.get("suture.dev/ledger").map(String::as_str) == Some("shard"));
                    let records = shard
                        .data
                        .unwrap_or_default()
                        .remove("records.json")
                        .unwrap_or_default();
                    anyhow::ensure!(
                        records.contains(OPERATOR) && records.contains("\"podsDisrupted\":1"),
                        "{records}"
                    );
                }
                (true, None) => anyhow::bail!("replica {identity} admitted a deletion but wrote no shard"),
                (false, _) => {}
            }
        }

        // An operator cannot erase the history: deleting or rewriting a shard is refused by the
        // gateway's self-protection (a deletecollection too), and the shards stay.
        let as_operator: Api<ConfigMap> = Api::namespaced(op.client.clone(), NAMESPACE);
        let shards = ListParams::default().labels("suture.dev/ledger=shard");
        let shard = config_maps
            .list(&shards)
            .await?
            .items
            .into_iter()
            .find_map(|shard| shard.metadata.name)
            .ok_or_else(|| anyhow::anyhow!("no ledger shard"))?;
        let message = scene::refusal(
            "an operator's delete of a ledger shard",
            as_operator.delete(&shard, &DeleteParams::default()).await,
        )?;
        anyhow::ensure!(message.contains("protects its own objects"), "{message}");
        scene::refusal(
            "an operator's deletecollection of the ledger shards",
            as_operator
                .delete_collection(&DeleteParams::default(), &shards)
                .await,
        )?;
        anyhow::ensure!(config_maps.get_opt(&shard).await?.is_some(), "the shard went");
        println!("  an operator's delete and deletecollection of the ledger shards: refused");

        // A restarted replica reads the shards again: the budget is still spent.
        b.kill();
        b.start().await?;
        until_records(&b, after).await?;
        denied_by_the_budget(
            "db-2 on replica b after its restart",
            &b.post_review(&pod_delete("ledger-5", "db-2"))?,
        )?;
        println!("  both replicas refuse the next member; a restarted replica keeps the history");
        b.kill();
        Ok(())
    })
}
