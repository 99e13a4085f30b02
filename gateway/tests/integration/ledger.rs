//! The ledger of admitted disruption in one gateway: what it admits (and does not dry-run) is
//! recorded and counts against the `history` budgets of the requests after it — the built-in
//! pack's `suture-disruption-rate` on the `database` snapshot. Two replicas sharing the ledger
//! through the API server are tested against a real control plane (`e2e`). Rehearsals of an idle
//! path (`--keep-warm`) judge against the ledger and record nothing, and stop a window
//! (`--keep-warm-for`) after the last request.

use crate::common;

use common::{Gateway, repo};
use serde_json::Value;

async fn gateway() -> Gateway {
    let cluster = repo("testdata/clusters/database");
    Gateway::start(&["--cluster", cluster.to_str().unwrap()]).await
}

/// The recorded pod DELETE of `testdata/reviews`, for pod `name`, by `user`.
fn pod_delete(uid: &str, name: &str, user: &str, dry_run: bool) -> String {
    let text = std::fs::read_to_string(repo("testdata/reviews/pod-delete-pg-main-0.json")).unwrap();
    let mut review: Value = serde_json::from_str(&text).unwrap();
    let request = &mut review["request"];
    request["uid"] = uid.into();
    request["name"] = name.into();
    request["oldObject"]["metadata"]["name"] = name.into();
    request["userInfo"]["username"] = user.into();
    request["dryRun"] = dry_run.into();
    review.to_string()
}

const OPERATOR: &str = "system:serviceaccount:databases:pg-operator";
const OTHER: &str = "system:serviceaccount:databases:backup-agent";

async fn verdict(gateway: &Gateway, review: String) -> (bool, String) {
    let (status, answer) = gateway.post(review).await;
    assert_eq!(status, 200, "{answer}");
    let response = &answer["response"];
    let message = response["status"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (response["allowed"].as_bool().unwrap(), message)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admitted_member_deletion_spends_the_statefulsets_budget_for_whoever_asks_next() {
    let gateway = gateway().await;
    // Dry runs are judged, never recorded: any number of them leaves the budget whole.
    for (uid, name) in [("dry-1", "pg-main-0"), ("dry-2", "pg-main-1")] {
        let (allowed, message) = verdict(&gateway, pod_delete(uid, name, OPERATOR, true)).await;
        assert!(allowed, "{message}");
    }
    let (allowed, message) = verdict(&gateway, pod_delete("real-1", "pg-main-0", OPERATOR, false)).await;
    assert!(allowed, "the first member of the window may go: {message}");

    // The next member, by the same operator or anyone else, is over the budget of one per 5m.
    for (uid, user) in [("real-2", OPERATOR), ("real-3", OTHER)] {
        let (allowed, message) = verdict(&gateway, pod_delete(uid, "pg-main-1", user, false)).await;
        assert!(!allowed, "{user}");
        assert!(
            message.starts_with("SafetyPolicy 'suture-disruption-rate' denied request")
                && message
                    .contains("StatefulSet databases/pg-main, which already lost 1 member in the last 5m"),
            "{message}"
        );
    }
    // Denied requests are not recorded: one record, the admitted deletion.
    let (_, metrics) = gateway.ops("/metrics").await;
    assert!(metrics.contains("suture_gateway_ledger_records 1\n"), "{metrics}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_of_one_replica_never_spend_the_budget_twice() {
    let gateway = gateway().await;
    let reviews = ["pg-main-0", "pg-main-1", "pg-main-2"]
        .iter()
        .enumerate()
        .map(|(i, pod)| pod_delete(&format!("burst-{i}"), pod, OPERATOR, false));
    let answers = futures::future::join_all(reviews.map(|review| verdict(&gateway, review))).await;
    let admitted = answers.iter().filter(|(allowed, _)| *allowed).count();
    assert_eq!(admitted, 1, "one member per 5m, however concurrent: {answers:?}");
}

/// The figure of the series named `series` (its whole name and labels) in `metrics`.
fn figure(metrics: &str, series: &str) -> Option<u64> {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|value| value.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rehearsals_of_an_idle_path_are_judged_and_leave_no_trace() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("decisions.log");
    // Budgets wide enough that a rehearsal of the admitted deletion would be admitted (and
    // recorded, were rehearsals recorded).
    let params = dir.path().join("params.yaml");
    std::fs::write(
        &params,
        "apiVersion: suture.dev/v1alpha1\nkind: SafetyPackParams\nmetadata: {name: default}\n\
         spec:\n  disruptionRate: {maxStatefulSetMembers: 1000, maxPodsPerRequester: 1000, maxDeletionsPerMinute: 1000}\n",
    )
    .unwrap();
    let cluster = repo("testdata/clusters/database");
    let gateway = Gateway::start(&[
        "--cluster",
        cluster.to_str().unwrap(),
        "--params",
        params.to_str().unwrap(),
        "--keep-warm",
        "5ms",
        "--keep-warm-for",
        "1s",
        "--decision-log",
        log.to_str().unwrap(),
    ])
    .await;
    let (allowed, message) = verdict(&gateway, pod_delete("real-1", "pg-main-0", OPERATOR, false)).await;
    assert!(allowed, "{message}");

    // The admitted deletion (not a dry run) is rehearsed while the gateway is idle...
    let rehearsals = || async {
        let (_, metrics) = gateway.ops("/metrics").await;
        figure(&metrics, "suture_gateway_rehearsals_total").unwrap_or_default()
    };
    let rehearsed = common::eventually(std::time::Duration::from_secs(10), || async {
        rehearsals().await >= 5
    })
    .await;
    assert!(rehearsed, "no rehearsals while idle");

    // ...and none of them counts: one ledger record, one request observed, one decision line.
    let (_, metrics) = gateway.ops("/metrics").await;
    assert_eq!(
        figure(&metrics, "suture_gateway_ledger_records"),
        Some(1),
        "{metrics}"
    );
    let requests = "suture_gateway_request_duration_seconds_count{verdict=\"allowed\"}";
    assert_eq!(figure(&metrics, requests), Some(1), "{metrics}");
    tokio::time::sleep(suture_gateway::decision_log::FLUSH_EVERY * 2).await;
    let lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(lines.lines().count(), 1, "{lines}");

    // A request is still recorded as ever.
    let (allowed, message) = verdict(&gateway, pod_delete("real-2", "pg-main-1", OPERATOR, false)).await;
    assert!(allowed, "{message}");
    let (_, metrics) = gateway.ops("/metrics").await;
    assert_eq!(
        figure(&metrics, "suture_gateway_ledger_records"),
        Some(2),
        "{metrics}"
    );

    // The window passes without a request: rehearsals stop.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let settled = rehearsals().await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(rehearsals().await, settled, "rehearsals after the window");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_shorter_than_the_period_is_refused_at_start() {
    let argv = [
        "suture-gateway",
        "--self-signed",
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        "127.0.0.1:0",
        "--keep-warm",
        "1s",
        "--keep-warm-for",
        "500ms",
    ];
    let config = <suture_gateway::config::Config as clap::Parser>::try_parse_from(argv).unwrap();
    let Err(error) = suture_gateway::run::start(config, suture_gateway::run::Hooks::default()).await else {
        panic!("started with no rehearsal possible");
    };
    assert!(error.to_string().contains("--keep-warm-for"), "{error:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_keep_warm_nothing_is_rehearsed() {
    let gateway = gateway().await;
    let (allowed, message) = verdict(&gateway, pod_delete("dry-1", "pg-main-0", OPERATOR, true)).await;
    assert!(allowed, "{message}");
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let (_, metrics) = gateway.ops("/metrics").await;
    assert_eq!(
        figure(&metrics, "suture_gateway_rehearsals_total"),
        Some(0),
        "{metrics}"
    );
}
