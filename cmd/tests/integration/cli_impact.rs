//! `kubectl suture impact`: the estimate as a tree (golden files) and as the `impact` document,
//! on the realistic snapshots in `testdata/clusters`; `check -o json` carries it too.

use crate::common;

use common::{json, stderr, stdout, suture};

fn impact(args: &[&str]) -> std::process::Output {
    suture().arg("impact").args(args).output().unwrap()
}

#[test]
fn deleting_the_database_namespace_as_a_tree() {
    let out = impact(&[
        "-f",
        "testdata/reviews/namespace-delete-operator.json",
        "--cluster",
        "testdata/clusters/database",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!("impact_namespace_delete_tree", stdout(&out));
}

#[test]
fn deleting_the_operator_crd_as_a_tree() {
    let out = impact(&[
        "-f",
        "testdata/reviews/crd-delete-operator.json",
        "--cluster",
        "testdata/clusters/operator",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!("impact_crd_delete_tree", stdout(&out));
}

#[test]
fn the_json_document_is_what_policies_read() {
    let out = impact(&[
        "-f",
        "testdata/reviews/statefulset-update-scale-down.json",
        "--cluster",
        "testdata/clusters/database",
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["action"], "update StatefulSet databases/pg-main");
    assert_eq!(doc["summary"]["podsDisrupted"], 2);
    assert_eq!(doc["summary"]["quorumLost"], 1);
    assert_eq!(doc["summary"]["pdbViolations"], 1);
    assert_eq!(doc["pdbs"][0]["desiredHealthy"], 2);
    assert_eq!(doc["pdbs"][0]["healthyAfter"], 1);
    assert_eq!(doc["quorum"][0]["majority"], 2);
}

#[test]
fn without_a_snapshot_the_estimate_says_what_it_does_not_know() {
    let out = impact(&["-f", "testdata/reviews/namespace-delete-operator.json"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).contains("Namespace databases is not in the cluster model"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn check_json_carries_the_impact_summary() {
    let out = suture()
        .args([
            "check",
            "-f",
            "testdata/reviews/crd-delete-operator.json",
            "--cluster",
            "testdata/clusters/operator",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "the built-in pack denies deleting a CRD"
    );
    let doc = json(&out);
    assert_eq!(doc["impact"]["summary"]["deleted"], 11);
    assert_eq!(doc["impact"]["summary"]["quorumLost"], 1);
}

#[test]
fn an_unreadable_review_exits_2() {
    let out = impact(&[
        "-f",
        "testdata/reviews/no-such-review.json",
        "--cluster",
        "testdata/clusters/database",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("testdata/reviews/no-such-review.json"),
        "{}",
        stderr(&out)
    );
}
