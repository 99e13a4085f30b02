//! Bounded evaluation: a slow or panicking evaluation is answered by failurePolicy (Fail denies,
//! Ignore warns), impact-reading policies follow their failurePolicy when the model is stale,
//! requests no policy could match are answered without the model, and shutdown drains an
//! in-flight request while refusing new connections.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Gateway, pod_review};
use serde_json::json;
use suture_gateway::run::Hooks;

const POLICIES: &str = r#"apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: strict}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [pods]}]
  validations: [{expression: "true"}]
---
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: lenient}
spec:
  failurePolicy: Ignore
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE, DELETE], resources: [pods]}]
  validations: [{expression: "true"}]
"#;

/// Slow evaluations for uids starting `slow`, panics for uids starting `panic`.
fn hooks(delay: Duration) -> Hooks {
    Hooks {
        before_evaluate: Some(Arc::new(move |request| {
            let uid = &request.admission.uid;
            if uid.starts_with("slow") {
                std::thread::sleep(delay);
            }
            if uid.starts_with("panic") {
                panic!("injected evaluation panic");
            }
        })),
    }
}

fn policies(dir: &tempfile::TempDir, text: &str) -> String {
    let path = dir.path().join("policies.yaml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_and_panics_are_answered_by_failure_policy() {
    let dir = tempfile::tempdir().unwrap();
    let file = policies(&dir, POLICIES);
    let gateway = Gateway::start_with(
        &["--no-builtin-pack", "-f", &file, "--eval-timeout", "150ms"],
        hooks(Duration::from_millis(600)),
    )
    .await;

    let started = Instant::now();
    let (status, answer) = gateway.post(pod_review("slow-delete", "DELETE", "ns", "p")).await;
    assert!(
        started.elapsed() < Duration::from_millis(550),
        "the budget was not enforced"
    );
    assert_eq!(status, 200);
    assert_eq!(
        answer["response"],
        json!({
            "uid": "slow-delete",
            "allowed": false,
            "status": {
                "status": "Failure",
                "code": 500,
                "reason": "InternalError",
                "message": "SafetyPolicy 'strict' denied request: the evaluation did not finish within 150ms (failurePolicy Fail)"
            },
            "warnings": [
                "SafetyPolicy 'lenient' was not evaluated: the evaluation did not finish within 150ms (failurePolicy Ignore: allowed without it)"
            ]
        })
    );

    let (_, answer) = gateway.post(pod_review("slow-create", "CREATE", "ns", "p")).await;
    assert_eq!(
        answer["response"]["allowed"], true,
        "only an Ignore policy could match"
    );
    assert_eq!(answer["response"]["warnings"].as_array().unwrap().len(), 1);

    // Panics print a backtrace, slow in debug builds: judge them with a generous budget.
    let generous = Gateway::start_with(
        &["--no-builtin-pack", "-f", &file, "--eval-timeout", "20s"],
        hooks(Duration::ZERO),
    )
    .await;
    let (status, answer) = generous.post(pod_review("panic-1", "DELETE", "ns", "p")).await;
    assert_eq!(status, 200);
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(answer["response"]["status"]["code"], 500);
    let message = answer["response"]["status"]["message"].as_str().unwrap();
    assert!(message.contains("internal error while evaluating"), "{message}");

    // The server is unharmed.
    let (_, answer) = generous.post(pod_review("fine", "DELETE", "ns", "p")).await;
    assert_eq!(answer["response"], json!({"uid": "fine", "allowed": true}));

    let (_, metrics) = gateway.ops("/metrics").await;
    assert!(
        metrics.contains("suture_gateway_evaluation_errors_total{kind=\"timeout\"} 2"),
        "{metrics}"
    );
    let (_, metrics) = generous.ops("/metrics").await;
    assert!(
        metrics.contains("suture_gateway_evaluation_errors_total{kind=\"panic\"} 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impact_policies_follow_failure_policy_when_the_model_is_stale() {
    let dir = tempfile::tempdir().unwrap();
    let file = policies(
        &dir,
        r#"apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: no-pod-disruption}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [pods]}]
  validations: [{expression: "impact.summary.podsDisrupted == 0", message: "would disrupt"}]
---
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: plain}
spec:
  actions: [Warn]
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [DELETE], resources: [pods]}]
  validations: [{expression: "false", message: "plain policies are still evaluated"}]
"#,
    );
    // No poll during the test: nothing marks the offline model current after it is loaded.
    let gateway = Gateway::start(&[
        "--no-builtin-pack",
        "-f",
        &file,
        "--max-model-age",
        "100ms",
        "--poll-interval",
        "1h",
    ])
    .await;
    let review = std::fs::read(common::repo("testdata/reviews/pod-delete-pg-main-0.json")).unwrap();
    let (_, fresh) = gateway.post(review.clone()).await;
    assert_eq!(
        fresh["response"]["status"]["message"],
        "SafetyPolicy 'no-pod-disruption' denied request: would disrupt"
    );

    tokio::time::sleep(Duration::from_millis(250)).await;
    let (_, stale) = gateway.post(review).await;
    let response = &stale["response"];
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 500);
    let message = response["status"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "SafetyPolicy 'no-pod-disruption' denied request: policy reads `impact` but the cluster model is stale"
        ),
        "{message}"
    );
    assert!(message.ends_with("(failurePolicy Fail)"), "{message}");
    assert_eq!(
        response["warnings"],
        json!(["Validation failed for SafetyPolicy 'plain': plain policies are still evaluated"])
    );
    let (_, metrics) = gateway.ops("/metrics").await;
    assert!(
        metrics.contains("suture_gateway_evaluation_errors_total{kind=\"stale\"} 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_no_policy_could_match_do_not_wait_for_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let file = policies(&dir, POLICIES);
    let gateway = Gateway::start(&["--no-builtin-pack", "-f", &file]).await;
    let model = Arc::clone(&gateway.running.model);
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let writer = std::thread::spawn(move || {
        let _guard = model.write();
        locked_tx.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(700));
    });
    locked_rx.recv().unwrap();

    let started = Instant::now();
    let (_, answer) = gateway.post(pod_review("update", "UPDATE", "ns", "p")).await;
    assert_eq!(answer["response"], json!({"uid": "update", "allowed": true}));
    assert!(
        started.elapsed() < Duration::from_millis(400),
        "an unmatched request waited for the model ({:?})",
        started.elapsed()
    );
    let (_, answer) = gateway.post(pod_review("delete", "DELETE", "ns", "p")).await;
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "a matched request did not need the model?"
    );
    assert_eq!(answer["response"]["allowed"], true);
    writer.join().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_in_flight_requests_and_refuses_new_connections() {
    let dir = tempfile::tempdir().unwrap();
    let file = policies(&dir, POLICIES);
    let gateway = Arc::new(
        Gateway::start_with(
            &["--no-builtin-pack", "-f", &file],
            hooks(Duration::from_millis(800)),
        )
        .await,
    );
    let webhook = gateway.running.webhook_addr;
    let slow = {
        let gateway = Arc::clone(&gateway);
        tokio::spawn(async move { gateway.post(pod_review("slow-drain", "DELETE", "ns", "p")).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    gateway.running.shutdown();
    tokio::time::sleep(Duration::from_millis(100)).await;

    assert!(
        tokio::net::TcpStream::connect(webhook).await.is_err(),
        "a new connection was accepted during the drain"
    );
    let (status, readiness) = gateway.ops("/readyz").await;
    assert_eq!(status, 503);
    let readiness: serde_json::Value = serde_json::from_str(&readiness).unwrap();
    assert_eq!(readiness["shuttingDown"], true);
    assert_eq!(readiness["ready"], false);

    let (status, answer) = slow.await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(answer["response"], json!({"uid": "slow-drain", "allowed": true}));
    let gateway = Arc::into_inner(gateway).unwrap();
    tokio::time::timeout(Duration::from_secs(5), gateway.running.wait())
        .await
        .expect("the drain finished")
        .unwrap();
}
