//! Reloads under traffic: a policy file rewritten mid-traffic loses no request and flips the
//! verdict; a broken policy file keeps the last good set (reported in `/readyz` and metrics);
//! a rewritten snapshot changes the model, a broken one keeps the previous model.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::{Gateway, eventually, pod_review, write_atomically};

fn policy(expression: &str) -> String {
    format!(
        r#"apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {{name: pod-deletes}}
spec:
  matchConstraints:
    resourceRules: [{{apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [pods]}}]
  validations: [{{expression: "{expression}", message: "pod deletes are frozen"}}]
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_mid_traffic_loses_no_request_and_flips_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("policy.yaml");
    write_atomically(&file, &policy("true"));
    let gateway = Arc::new(Gateway::start(&["--no-builtin-pack", "-f", file.to_str().unwrap()]).await);

    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    let denied = Arc::new(AtomicUsize::new(0));
    let mut hammers = Vec::new();
    for worker in 0..4 {
        let (gateway, stop, answered, denied) = (
            Arc::clone(&gateway),
            Arc::clone(&stop),
            Arc::clone(&answered),
            Arc::clone(&denied),
        );
        hammers.push(tokio::spawn(async move {
            let mut sent = 0;
            while !stop.load(Ordering::Relaxed) {
                let uid = format!("w{worker}-{sent}");
                let (status, answer) = gateway.post(pod_review(&uid, "DELETE", "ns", "p")).await;
                assert_eq!(status, 200, "{answer}");
                assert_eq!(answer["response"]["uid"], uid.as_str());
                if answer["response"]["allowed"] == false {
                    denied.fetch_add(1, Ordering::Relaxed);
                }
                answered.fetch_add(1, Ordering::Relaxed);
                sent += 1;
            }
            sent
        }));
    }
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(denied.load(Ordering::Relaxed), 0);
    write_atomically(&file, &policy("false"));
    let flipped = eventually(Duration::from_secs(5), || async {
        denied.load(Ordering::Relaxed) > 0
    })
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.store(true, Ordering::Relaxed);
    let mut sent = 0;
    for hammer in hammers {
        sent += hammer.await.unwrap();
    }
    assert!(flipped, "the verdict never flipped");
    assert_eq!(
        sent,
        answered.load(Ordering::Relaxed),
        "a request went unanswered"
    );
    assert!(sent > 20, "too little traffic to mean anything: {sent}");
    let (_, answer) = gateway.post(pod_review("last", "DELETE", "ns", "p")).await;
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(
        answer["response"]["status"]["message"],
        "SafetyPolicy 'pod-deletes' denied request: pod deletes are frozen"
    );
    assert_eq!(gateway.readiness().await["policyGeneration"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_policy_file_keeps_the_last_good_set() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("policy.yaml");
    write_atomically(&file, &policy("false"));
    let gateway = Gateway::start(&["--no-builtin-pack", "-f", dir.path().to_str().unwrap()]).await;
    let (_, answer) = gateway.post(pod_review("a", "DELETE", "ns", "p")).await;
    assert_eq!(answer["response"]["allowed"], false);

    write_atomically(&file, "kind: SafetyPolicy\nspec: [unclosed\n");
    let reported = eventually(Duration::from_secs(5), || async {
        gateway.readiness().await["lastPolicyError"].is_string()
    })
    .await;
    assert!(reported, "the broken file was never reported");
    let readiness = gateway.readiness().await;
    assert!(
        readiness["lastPolicyError"]
            .as_str()
            .unwrap()
            .contains("policy.yaml"),
        "{readiness}"
    );
    assert_eq!(readiness["policyReloadFailures"], 1);
    assert_eq!(readiness["policies"], 1);
    let (_, metrics) = gateway.ops("/metrics").await;
    assert!(
        metrics.contains("suture_gateway_policy_reload_failures_total 1"),
        "{metrics}"
    );

    let (_, answer) = gateway.post(pod_review("b", "DELETE", "ns", "p")).await;
    assert_eq!(
        answer["response"]["allowed"], false,
        "the last good set still serves"
    );

    write_atomically(&file, &policy("true"));
    let healed = eventually(Duration::from_secs(5), || async {
        gateway.readiness().await["lastPolicyError"].is_null()
    })
    .await;
    assert!(healed);
    let (_, answer) = gateway.post(pod_review("c", "DELETE", "ns", "p")).await;
    assert_eq!(answer["response"]["allowed"], true);
}

const NAMESPACE_GUARD: &str = r#"apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: labelled-namespaces}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [pods]}]
  validations:
    - expression: "namespaceObject == null || !has(namespaceObject.metadata.labels) || !('frozen' in namespaceObject.metadata.labels)"
      message: the namespace is frozen
"#;

fn namespace(labels: &str) -> String {
    format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {{{labels}}}\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_are_reloaded_and_a_broken_one_keeps_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let policy_file = dir.path().join("policy.yaml");
    std::fs::write(&policy_file, NAMESPACE_GUARD).unwrap();
    let cluster = dir.path().join("cluster");
    std::fs::create_dir(&cluster).unwrap();
    let snapshot = cluster.join("namespaces.yaml");
    write_atomically(&snapshot, &namespace("team: a"));
    let gateway = Gateway::start(&[
        "--no-builtin-pack",
        "-f",
        policy_file.to_str().unwrap(),
        "--cluster",
        cluster.to_str().unwrap(),
    ])
    .await;
    let (_, answer) = gateway.post(pod_review("a", "DELETE", "shop", "p")).await;
    assert_eq!(answer["response"]["allowed"], true);

    write_atomically(&snapshot, &namespace("frozen: 'yes'"));
    let frozen = eventually(Duration::from_secs(5), || async {
        let (_, answer) = gateway.post(pod_review("b", "DELETE", "shop", "p")).await;
        answer["response"]["allowed"] == false
    })
    .await;
    assert!(frozen, "the reloaded snapshot never took effect");

    write_atomically(&snapshot, "apiVersion: v1\nkind: Namespace\nmetadata: [broken\n");
    let reported = eventually(Duration::from_secs(5), || async {
        gateway.readiness().await["lastSnapshotError"].is_string()
    })
    .await;
    assert!(reported);
    let (_, metrics) = gateway.ops("/metrics").await;
    assert!(
        metrics.contains("suture_gateway_snapshot_reload_failures_total 1"),
        "{metrics}"
    );
    let (_, answer) = gateway.post(pod_review("c", "DELETE", "shop", "p")).await;
    assert_eq!(
        answer["response"]["allowed"], false,
        "the previous model still serves"
    );
}
