//! Keeping the judged path warm (`--keep-warm`, rendered by the install by default) against the
//! real control plane: a replica with the live model and the shared ledger rehearses an admitted
//! deletion while idle and records nothing of it (no ledger record, which the other replicas
//! would read; no decision line; no request metric), stops rehearsing once its `--keep-warm-for`
//! window has passed without a request, and starts again at the next judged request. Reviews are
//! posted to the replica directly (kube-apiserver calls one URL): nothing is deleted.

use std::time::Duration;

use serde_json::Value;
use suture_e2e::Cluster;
use suture_e2e::gateway::Gateway;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::{reviews, scene, wait};

pub const TESTS: [Test; 1] = [Test {
    name: "kept_warm::a_replica_rehearses_while_idle_records_nothing_and_sleeps_after_its_window",
    run: a_replica_rehearses_while_idle_records_nothing_and_sleeps_after_its_window,
}];

const NS: &str = "e2e-kept-warm";
/// An operator of this test's own, so that its admitted deletion counts against no other test's
/// budget in the shared ledger.
const OPERATOR: &str = "system:serviceaccount:e2e-kept-warm:operator";
/// The ledger records a replica judges with (its own and the other replicas').
const RECORDS: &str = "suture_gateway_ledger_records";
/// How long the replica rehearses after a judged request.
const WINDOW: Duration = Duration::from_secs(3);

/// A DELETE of pod `pod` of the scene by [`OPERATOR`], as kube-apiserver sends it.
fn pod_delete(uid: &str, pod: &str, dry_run: bool) -> Value {
    reviews::pod_delete(uid, NS, pod, OPERATOR, dry_run)
}

async fn rehearsals(replica: &Gateway) -> anyhow::Result<f64> {
    replica.metric("suture_gateway_rehearsals_total").await
}

/// The judged requests `replica` has answered (every verdict).
async fn requests(replica: &Gateway) -> anyhow::Result<f64> {
    let text = replica.metrics_text().await?;
    Ok(text
        .lines()
        .filter(|line| line.starts_with("suture_gateway_request_duration_seconds_count{"))
        .filter_map(|line| line.rsplit_once(' ')?.1.trim().parse::<f64>().ok())
        .sum())
}

/// Waits until `replica` has rehearsed at least `at_least` times.
async fn until_rehearsed(replica: &Gateway, at_least: f64) -> anyhow::Result<()> {
    wait::until(
        &format!("{at_least} rehearsals"),
        Duration::from_secs(20),
        || async move {
            let done = rehearsals(replica).await?;
            Ok((done < at_least).then(|| format!("{done} rehearsals")))
        },
    )
    .await
}

fn a_replica_rehearses_while_idle_records_nothing_and_sleeps_after_its_window(
    cluster: &mut Cluster,
) -> TestFuture<'_> {
    Box::pin(async move {
        scene::judged_database(cluster, NS, 3, 1).await?;
        let Some(main) = cluster.gateway.as_ref() else {
            anyhow::bail!("no gateway");
        };
        anyhow::ensure!(
            main.keep_warm().is_some(),
            "the suite's gateway runs without the install's --keep-warm"
        );
        // Budgets wide enough that a rehearsal of the admitted deletion would itself be admitted,
        // and recorded, were rehearsals recorded.
        let params = cluster.dir().join("kept-warm-params.yaml");
        std::fs::write(
            &params,
            "apiVersion: suture.dev/v1alpha1\nkind: SafetyPackParams\nmetadata: {name: default}\n\
             spec:\n  disruptionRate: {maxStatefulSetMembers: 1000, maxPodsPerRequester: 1000, maxDeletionsPerMinute: 1000}\n",
        )?;
        let replica = main
            .replica_with(
                "e2e-kept-warm",
                &[
                    "--keep-warm=2ms",
                    &format!("--keep-warm-for={}ms", WINDOW.as_millis()),
                    &format!("--params={}", params.display()),
                ],
            )
            .await?;
        // The replica reads every shard: count from what it holds once it settles.
        tokio::time::sleep(Duration::from_secs(2)).await;
        anyhow::ensure!(
            rehearsals(&replica).await? == 0.0,
            "rehearsals before any request was judged"
        );
        let before = replica.metric(RECORDS).await?;

        let answer = replica.post_review(&pod_delete("kept-warm-1", "db-0", false))?;
        anyhow::ensure!(answer["allowed"] == true, "the deletion was refused: {answer}");
        until_rehearsed(&replica, 100.0).await?;
        let held = replica.metric(RECORDS).await?;
        anyhow::ensure!(
            held == before + 1.0,
            "the ledger holds {held} records after the admitted deletion and its rehearsals, \
             {before} before: rehearsals were recorded"
        );
        anyhow::ensure!(requests(&replica).await? == 1.0, "rehearsals counted as requests");
        let lines = replica
            .all_decisions()
            .iter()
            .filter(|entry| entry["namespace"] == NS)
            .count();
        anyhow::ensure!(lines == 1, "{lines} decision lines for one request");

        // The window passes: rehearsals stop and stay stopped.
        tokio::time::sleep(WINDOW).await;
        let settled = rehearsals(&replica).await?;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let later = rehearsals(&replica).await?;
        anyhow::ensure!(
            later == settled,
            "{settled} then {later} rehearsals after the window had passed"
        );

        // The next judged request (a dry run) wakes them, and the ledger still moves only for
        // what is admitted for real.
        let answer = replica.post_review(&pod_delete("kept-warm-2", "db-1", true))?;
        anyhow::ensure!(answer["allowed"] == true, "the dry run was refused: {answer}");
        until_rehearsed(&replica, later + 50.0).await?;
        let held = replica.metric(RECORDS).await?;
        anyhow::ensure!(held == before + 1.0, "a dry run and its rehearsals were recorded");
        let mut replica = replica;
        replica.check_alive()?;
        anyhow::ensure!(
            replica.readiness().await?.0 == 200,
            "the replica is not ready after its rehearsals"
        );
        Ok(())
    })
}
