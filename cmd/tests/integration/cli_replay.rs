//! `kubectl suture replay`: a realistic audit log (262 events: reads, leases, controllers,
//! routine operator work, a bad operator release) judged by the built-in pack against every
//! testdata scene, with the totals per policy and per user; malformed logs exit 2 naming the
//! file and line.

use crate::common;

use common::{json, stderr, stdout, suture, temp_files};
use serde_json::json;

const LOG: &str = "testdata/audit/operators.audit.jsonl";
const SCENES: [&str; 5] = ["database", "web", "operator", "mixed", "platform"];

fn replay(extra: &[&str]) -> std::process::Output {
    let mut command = suture();
    command.args(["replay", "--audit-log", LOG]);
    for scene in SCENES {
        command.args(["--cluster", &format!("testdata/clusters/{scene}")]);
    }
    command.args(extra).output().unwrap()
}

#[test]
fn the_bad_release_is_found_and_totalled_per_policy_and_user() {
    let out = replay(&["-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "denials exit 1: {}", stderr(&out));
    let tally = json(&out);
    assert_eq!(tally["events"], 262);
    assert_eq!(tally["replayed"], 112);
    assert_eq!(tally["denied"], 8);
    assert_eq!(tally["warned"], 0);
    let denied = |policy: &str| tally["byPolicy"][policy]["denied"].as_u64().unwrap_or(0);
    assert_eq!(
        denied("suture-data-loss"),
        2,
        "the live claim and MinIO's scale-down"
    );
    assert_eq!(
        denied("suture-statefulset-quorum"),
        3,
        "RabbitMQ to 1, the dry-run StatefulSet delete, pool-3"
    );
    assert_eq!(denied("suture-disruption-budget"), 2);
    assert_eq!(denied("suture-availability"), 4);
    assert_eq!(denied("suture-broken-references"), 1);
    assert_eq!(denied("suture-namespace-delete"), 1);
    assert_eq!(
        denied("suture-crd-delete"),
        0,
        "the CRD delete was refused by RBAC: not replayed"
    );
    assert_eq!(
        tally["byUser"]["system:serviceaccount:databases:pg-operator"],
        json!({"requests": 7, "denied": 2, "warned": 0})
    );
    assert_eq!(
        tally["byUser"]["alice@example.com"]["denied"], 0,
        "people are not judged by the pack"
    );
    assert_eq!(tally["skipped"]["requests the API server refused"], 2);
    assert_eq!(
        tally["skipped"]["deletecollection (the log does not list the objects)"],
        1
    );
    let dry_runs: Vec<&serde_json::Value> = tally["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["dryRun"] == true)
        .collect();
    assert!(
        !dry_runs.is_empty()
            && dry_runs
                .iter()
                .all(|f| f["request"] == "DELETE statefulsets databases/pg-main")
    );
}

#[test]
fn the_text_report_lists_totals_and_findings() {
    let out = replay(&["--show", "2"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.starts_with(
            "262 audit events in testdata/audit/operators.audit.jsonl\n  judged   112 mutating requests\n"
        ),
        "{text}"
    );
    assert!(text.contains("  8 would have been denied\n"), "{text}");
    assert!(text.contains("\nBy policy:\n"), "{text}");
    assert!(text.contains("Findings (2 of 13):"), "{text}");
    assert!(
        text.contains("system:serviceaccount:databases:pg-operator  DELETE persistentvolumeclaims databases/data-pg-main-1\n      suture-data-loss: deleting PersistentVolumeClaim databases/data-pg-main-1 destroys the data of 1 live volume"),
        "{text}"
    );
}

#[test]
fn a_log_of_routine_work_exits_0() {
    let routine: String = std::fs::read_to_string(common::root().join(LOG))
        .unwrap()
        .lines()
        .filter(|line| {
            !line.contains("\"verb\":\"delete\"")
                && !line.contains("\"subresource\":\"scale\"")
                && !line.contains("\"secrets\"")
                && !line.contains("\"name\":\"ledger\"")
        })
        .map(|line| format!("{line}\n"))
        .collect();
    let mut command = suture();
    command.args([
        "replay",
        "--audit-log",
        "-",
        "--cluster",
        "testdata/clusters/platform",
        "-o",
        "json",
    ]);
    let out = command.write_stdin(routine).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(json(&out)["denied"], 0);
}

#[test]
fn a_file_that_is_not_an_audit_log_exits_2_naming_the_line() {
    let dir = temp_files(&[(
        "review.json",
        "\n{\"apiVersion\": \"admission.k8s.io/v1\", \"kind\": \"AdmissionReview\"}\n",
    )]);
    let path = dir.path().join("review.json");
    let out = suture()
        .args(["replay", "--audit-log", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let message = stderr(&out);
    assert!(message.contains("review.json:2: not an audit event"), "{message}");
}

#[test]
fn bad_lines_in_a_real_log_are_skipped_with_a_warning() {
    let mut text = std::fs::read_to_string(common::root().join(LOG)).unwrap();
    text.push_str("{\"kind\": \"Event\", \"apiVersion\": \"audit.k8s.io/v1\", \"verb\": \n");
    let out = suture()
        .args(["replay", "--audit-log", "-", "-o", "json"])
        .write_stdin(text)
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("warning: <stdin>:263: skipped, not an audit event"),
        "{}",
        stderr(&out)
    );
    assert_eq!(json(&out)["events"], 262);
}
