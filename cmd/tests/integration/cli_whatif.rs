//! What-if requests for `check` and `impact`: an action on a named object (`delete`, `scale`,
//! `evict`) or a plain manifest, built as kube-apiserver would send it, with the object before the
//! change from the cluster snapshot and the user from `--as`.

use crate::common;

use common::{json, stderr, stdout, suture, temp_files};

const PLATFORM: &str = "testdata/clusters/platform";
const OPERATOR: &str = "system:serviceaccount:coordination:zk-operator";

fn run(args: &[&str]) -> std::process::Output {
    suture().args(args).output().unwrap()
}

#[test]
fn deleting_a_named_statefulset_is_judged_as_its_operator() {
    let out = run(&[
        "check",
        "delete",
        "sts/zk",
        "-n",
        "coordination",
        "--cluster",
        PLATFORM,
        "--as",
        OPERATOR,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["impact"]["activity"], "deleting StatefulSet coordination/zk");
    assert_eq!(doc["impact"]["summary"]["podsDisrupted"], 5);
    let policies: Vec<&str> = doc["denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["policy"].as_str().unwrap())
        .collect();
    assert!(policies.contains(&"suture-statefulset-quorum"), "{policies:?}");
}

#[test]
fn the_user_and_namespace_follow_kubectl_flags() {
    let out = run(&[
        "check",
        "delete",
        "statefulset/zk",
        "--namespace",
        "coordination",
        "--cluster",
        PLATFORM,
        "--as",
        "alice@example.com",
        "--as-group",
        "platform-admins",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "people are not judged by the pack: {}",
        stdout(&out)
    );
    assert!(
        stdout(&out).starts_with("ALLOWED  DELETE statefulsets.apps coordination/zk by alice@example.com\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn scale_reads_the_current_replicas_from_the_snapshot() {
    let out = run(&[
        "impact",
        "scale",
        "deployment/api",
        "--replicas",
        "0",
        "-n",
        "payments",
        "--cluster",
        PLATFORM,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let impact = json(&out);
    assert_eq!(impact["action"], "update scale of Deployment payments/api");
    assert_eq!(impact["summary"]["podsDisrupted"], 4);
    assert_eq!(impact["summary"]["workloadsDown"], 1);

    let out = run(&[
        "check",
        "scale",
        "deployment/api",
        "-n",
        "payments",
        "--cluster",
        PLATFORM,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("scale needs --replicas N"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn evicting_a_pod_within_its_budget_is_allowed() {
    let out = run(&[
        "check",
        "evict",
        "pod/api-6b7d9f4c8d-ax4k2p",
        "-n",
        "payments",
        "--cluster",
        PLATFORM,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).starts_with("ALLOWED  CREATE pods/eviction payments/api-6b7d9f4c8d-ax4k2p"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_manifest_of_an_existing_object_is_an_update_and_a_new_one_a_create() {
    let dir = temp_files(&[(
        "ledger.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ledger, namespace: payments}\nspec:\n  replicas: 2\n  strategy: {type: Recreate}\n  selector: {matchLabels: {app.kubernetes.io/name: ledger, app.kubernetes.io/part-of: payments}}\n  template:\n    metadata: {labels: {app.kubernetes.io/name: ledger, app.kubernetes.io/part-of: payments}}\n    spec: {containers: [{name: main, image: registry.example.com/payments/ledger:1.10.0}]}\n",
    )]);
    let manifest = dir.path().join("ledger.yaml");
    let out = run(&[
        "check",
        "-f",
        manifest.to_str().unwrap(),
        "--cluster",
        PLATFORM,
        "--as",
        "system:serviceaccount:payments:payments-operator",
        "-o",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a Recreate rollout of the ledger: {}",
        stdout(&out)
    );
    let doc = json(&out);
    assert_eq!(doc["impact"]["activity"], "updating Deployment payments/ledger");
    assert_eq!(doc["denials"][0]["policy"], "suture-availability");

    let out = run(&[
        "check",
        "-f",
        "testdata/objects/deployment.yaml",
        "--cluster",
        PLATFORM,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("ALLOWED  CREATE deployments.apps shop/checkout"),
        "{}",
        stdout(&out)
    );

    let out = run(&[
        "check",
        "-f",
        manifest.to_str().unwrap(),
        "--operation",
        "DELETE",
        "--cluster",
        PLATFORM,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        json(&out)["impact"]["activity"],
        "deleting Deployment payments/ledger"
    );
}

#[test]
fn what_if_mistakes_exit_2_with_a_clear_message() {
    let cases: [(&[&str], &str); 5] = [
        (&["check"], "nothing to judge"),
        (
            &["check", "delete", "gadget/w", "--cluster", PLATFORM],
            "unknown resource type \"gadget\"",
        ),
        (
            &["check", "drain", "node/pool-1"],
            "unknown what-if action \"drain\"",
        ),
        (&["check", "delete", "statefulset"], "expected TYPE/NAME"),
        (
            &[
                "check",
                "-f",
                "testdata/reviews/pod-delete-pg-main-0.json",
                "--operation",
                "DELETE",
            ],
            "an AdmissionReview already says",
        ),
    ];
    for (args, expected) in cases {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
    }
}
