//! The ledger of admitted disruption in one gateway: what it admits (and does not dry-run) is
//! recorded and counts against the `history` budgets of the requests after it — the built-in
//! pack's `suture-disruption-rate` on the `database` snapshot. Two replicas sharing the ledger
//! through the API server are tested against a real control plane (`e2e`).

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
