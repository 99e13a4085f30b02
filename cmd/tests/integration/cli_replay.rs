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
    // 111 single requests and the cronjob-cleaner's deletecollection of its namespace's pods,
    // judged as the one finished pod the scenes hold there.
    assert_eq!(tally["replayed"], 113);
    assert_eq!(tally["denied"], 8);
    assert_eq!(tally["warned"], 0);
    let denied = |policy: &str| tally["byPolicy"][policy]["denied"].as_u64().unwrap_or(0);
    assert_eq!(
        denied("suture-data-loss"),
        2,
        "the live claim and MinIO's scale-down"
    );
    // Replay carries the log's admitted changes into its model: pg-main-0, deleted by the
    // pg-operator at 01:49:57 (and never recreated in this log), is gone when the dry-run delete
    // of StatefulSet pg-main is judged at 02:53:28, which leaves 2 members, under the quorum
    // rule's 3 (the PDB and availability policies still deny it).
    assert_eq!(denied("suture-statefulset-quorum"), 2, "RabbitMQ to 1, pool-3");
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
        tally["byUser"]["system:serviceaccount:batch:cronjob-cleaner"],
        json!({"requests": 1, "denied": 0, "warned": 0})
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
            "262 audit events in testdata/audit/operators.audit.jsonl\n  judged   113 mutating requests\n"
        ),
        "{text}"
    );
    assert!(text.contains("  8 would have been denied\n"), "{text}");
    assert!(text.contains("\nBy policy:\n"), "{text}");
    assert!(text.contains("Findings (2 of 12):"), "{text}");
    assert!(
        text.contains("system:serviceaccount:databases:pg-operator  DELETE persistentvolumeclaims databases/data-pg-main-1\n      suture-data-loss: deleting PersistentVolumeClaim databases/data-pg-main-1 destroys the data of 1 live volume"),
        "{text}"
    );
}

/// A deletecollection event of `resource` in `namespace`, with `query` and, when given, the
/// response listing the deleted objects (a RequestResponse-level log).
fn deletecollection(
    resource: &str,
    namespace: &str,
    query: &str,
    listed: Option<serde_json::Value>,
) -> String {
    let mut event = json!({"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
        "auditID": format!("dc-{resource}"), "stage": "ResponseComplete", "verb": "deletecollection",
        "requestURI": format!("/api/v1/namespaces/{namespace}/{resource}{query}"),
        "user": {"username": "system:serviceaccount:databases:pg-operator"},
        "objectRef": {"resource": resource, "namespace": namespace, "apiVersion": "v1"},
        "requestReceivedTimestamp": "2026-10-03T02:10:55.000000Z", "responseStatus": {"code": 200}});
    if let Some(listed) = listed {
        event["level"] = json!("RequestResponse");
        event["responseObject"] = listed;
    }
    format!("{event}\n")
}

#[test]
fn a_deletecollection_is_judged_object_by_object() {
    let run = |log: String| {
        let out = suture()
            .args([
                "replay",
                "--audit-log",
                "-",
                "--cluster",
                "testdata/clusters/database",
                "-o",
                "json",
            ])
            .write_stdin(log)
            .output()
            .unwrap();
        (out.status.code(), json(&out))
    };
    // Selected from the model by the request's label selector: each live claim is denied.
    let (code, tally) = run(deletecollection(
        "persistentvolumeclaims",
        "databases",
        "?labelSelector=app.kubernetes.io%2Finstance%3Dpg-main",
        None,
    ));
    assert_eq!(code, Some(1));
    assert_eq!(
        (tally["replayed"].as_u64(), tally["denied"].as_u64()),
        (Some(3), Some(3)),
        "{tally}"
    );
    let requests: Vec<&str> = tally["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["policy"] == "suture-data-loss")
        .map(|f| f["request"].as_str().unwrap())
        .collect();
    assert_eq!(
        requests,
        [
            "DELETE persistentvolumeclaims databases/data-pg-main-0",
            "DELETE persistentvolumeclaims databases/data-pg-main-1",
            "DELETE persistentvolumeclaims databases/data-pg-main-2"
        ]
    );
    // Listed in the log: exactly those objects.
    let listed = json!({"kind": "PersistentVolumeClaimList", "apiVersion": "v1", "items": [
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data-pg-main-1", "namespace": "databases"}}]});
    let (_, tally) = run(deletecollection(
        "persistentvolumeclaims",
        "databases",
        "",
        Some(listed),
    ));
    assert_eq!(tally["replayed"], 1, "{tally}");
    // A field selector the model cannot evaluate: skipped, and said so.
    let (code, tally) = run(deletecollection(
        "pods",
        "databases",
        "?fieldSelector=status.phase%3DSucceeded",
        None,
    ));
    assert_eq!(code, Some(0));
    assert_eq!(tally["replayed"], 0);
    assert_eq!(tally["skipped"].as_object().unwrap().len(), 1, "{tally}");
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

/// `testdata/audit/hot-loop.audit.jsonl` (194 events, 2026-11-12 10:00-10:06): controller leases
/// and reads; zk-operator deleting a ZooKeeper member every 5 seconds (13 times) while the
/// StatefulSet controller recreates each and its kubelet reports it ready, then once more at
/// 10:05:30 and 10:05:35; rabbitmq-operator's dry-run delete of rabbit-server-1, then the real
/// delete of rabbit-server-0 (recreated, never ready); a routine scale-up; a credentials operator
/// re-creating and deleting its ConfigMap every second (40 times); RabbitMQ scaled 3 -> 2 at
/// 10:06:00.
const HOT_LOOP: &str = "testdata/audit/hot-loop.audit.jsonl";

fn replay_log(log: &str, extra: &[&str]) -> std::process::Output {
    let mut command = suture();
    command.args(["replay", "--audit-log", log]);
    for scene in SCENES {
        command.args(["--cluster", &format!("testdata/clusters/{scene}")]);
    }
    command.args(extra).output().unwrap()
}

#[test]
fn a_hot_loop_is_denied_from_the_first_request_over_the_budget() {
    let out = replay_log(HOT_LOOP, &["-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let tally = json(&out);
    assert_eq!(tally["events"], 194);
    assert_eq!(tally["denied"], 49);
    let denied: Vec<String> = tally["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["policy"] == "suture-disruption-rate")
        .map(|f| {
            format!(
                "{} {}",
                &f["time"].as_str().unwrap()[11..19],
                f["request"].as_str().unwrap()
            )
        })
        .collect();
    let mut expected: Vec<String> = Vec::new();
    // The first member deletion (zk-4 at 10:00:00) is admitted; every member after it within
    // five minutes is refused, whoever asks.
    let members = ["zk-4", "zk-3", "zk-2", "zk-1", "zk-0"];
    for k in 1..13 {
        let (m, s) = (5 * k / 60, 5 * k % 60);
        expected.push(format!(
            "10:{m:02}:{s:02} DELETE pods coordination/{}",
            members[k % 5]
        ));
    }
    // The credentials loop deletes the same ConfigMap every second: its first 5 deletions are
    // admitted, the sixth within 10 minutes and every one after it are refused as an operator
    // that does not converge (the per-requester guard of 30 a minute would have waited for the
    // 31st).
    for k in 5..40 {
        expected.push(format!("10:02:{k:02} DELETE configmaps cred/credentials-cache"));
    }
    // Past the window the next member goes (10:05:30), and the one after it is refused again.
    expected.push("10:05:35 DELETE pods coordination/zk-3".into());
    assert_eq!(denied, expected);
    // Other requesters are held to their own budgets: rabbitmq-operator's dry run was not
    // recorded, so its real delete of another member five seconds later was admitted.
    let rabbit: Vec<&serde_json::Value> = tally["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["user"] == "system:serviceaccount:mq:rabbitmq-operator")
        .collect();
    assert_eq!(rabbit.len(), 1, "{rabbit:?}");
    assert_eq!(rabbit[0]["request"], "UPDATE statefulsets/scale mq/rabbit-server");
    assert_eq!(
        tally["byUser"]["system:serviceaccount:payments:payments-operator"],
        json!({"requests": 1, "denied": 0, "warned": 0}),
        "the routine scale-up is judged and admitted"
    );
}

#[test]
fn a_later_request_sees_an_earlier_admitted_deletion() {
    // Against the snapshot alone, scaling RabbitMQ to 2 keeps its PDB (2 of 3 healthy).
    let mut check = suture();
    check.args([
        "check",
        "scale",
        "statefulset/rabbit-server",
        "--replicas",
        "2",
        "-n",
        "mq",
    ]);
    check.args(["--as", "system:serviceaccount:mq:rabbitmq-operator", "-o", "json"]);
    for scene in SCENES {
        check.args(["--cluster", &format!("testdata/clusters/{scene}")]);
    }
    let alone = check.output().unwrap();
    assert_eq!(alone.status.code(), Some(0), "{}", stdout(&alone));
    // In the log, rabbit-server-0 was deleted at 10:00:22 and its replacement never turned
    // ready: at 10:06:00 the same scale-down leaves the PDB one healthy pod short.
    let out = replay_log(HOT_LOOP, &["-o", "json"]);
    let tally = json(&out);
    let finding = tally["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["request"] == "UPDATE statefulsets/scale mq/rabbit-server")
        .unwrap_or_else(|| panic!("no finding for the scale-down: {tally}"));
    assert_eq!(finding["policy"], "suture-disruption-budget");
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains("PodDisruptionBudget mq/rabbit would have 1 of 2 required healthy pods"),
        "{finding}"
    );
}

/// `-o policyreport`: the reports the gateway would have written for the hot loop, with an
/// Audit-first policy beside the pack (`testdata/reports/audit-disruption.yaml`, severity
/// medium): one result per policy × rule × object × requester, the repeats counted (the
/// credentials loop's 35 refusals are one result), dry runs left out.
#[test]
fn policy_reports_of_a_hot_loop_match_the_golden_file() {
    let out = replay_log(
        HOT_LOOP,
        &[
            "--policies",
            "builtin",
            "--policies",
            "testdata/reports/audit-disruption.yaml",
            "-o",
            "policyreport",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "denials exit 1: {}", stderr(&out));
    let text = stdout(&out);
    let reports: Vec<serde_json::Value> = text
        .split("---\n")
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_yaml_ng::from_str(d).unwrap())
        .collect();
    let kinds: Vec<(&str, &str)> = reports
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap(),
                r["metadata"]["namespace"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("PolicyReport", "coordination"),
            ("PolicyReport", "cred"),
            ("PolicyReport", "mq")
        ]
    );
    let cred = &reports[1]["results"][0];
    assert_eq!(cred["properties"]["count"], "35");
    assert_eq!(cred["policy"], "suture-disruption-rate");
    let dry_run = text.contains("rabbit-server-1");
    assert!(!dry_run, "the dry-run delete of rabbit-server-1 is left out");
    insta::assert_snapshot!("replay_policyreport_hot_loop", text);
}

#[test]
fn an_unknown_output_names_policyreport_among_the_formats() {
    let out = replay_log(HOT_LOOP, &["-o", "table"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("choose from text, json, yaml, jsonpath, policyreport"),
        "{}",
        stderr(&out)
    );
}
