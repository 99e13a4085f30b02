//! kubectl's `TYPE NAME` form in what-if actions (`check delete statefulset pg-main`), beside
//! `TYPE/NAME`, and several names in one action (`delete pod a b`, `delete pod/a pod/b`): one
//! request per name, in the order given, each seeing the ones before it, reported as a
//! collection's deletions are.

use crate::common;

use common::{json, stderr, stdout, suture};

const DATABASE: &str = "testdata/clusters/database";
const PG_OPERATOR: &str = "system:serviceaccount:databases:pg-operator";

fn run(args: &[&str]) -> std::process::Output {
    suture().args(args).output().unwrap()
}

fn judged_in_databases(action: &[&str], extra: &[&str]) -> std::process::Output {
    let mut args = vec!["check"];
    args.extend_from_slice(action);
    args.extend_from_slice(&["-n", "databases", "--cluster", DATABASE, "--as", PG_OPERATOR]);
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn type_space_name_is_judged_as_type_slash_name() {
    let spaced = judged_in_databases(&["delete", "statefulset", "pg-main"], &[]);
    assert_eq!(spaced.status.code(), Some(1), "{}", stderr(&spaced));
    insta::assert_snapshot!("check_delete_statefulset_type_name_text", stdout(&spaced));
    let slashed = judged_in_databases(&["delete", "statefulset/pg-main"], &[]);
    assert_eq!(slashed.status.code(), Some(1), "{}", stderr(&slashed));
    assert_eq!(stdout(&spaced), stdout(&slashed), "the two forms are one request");
    // impact and scale take the form too.
    let out = run(&[
        "impact",
        "scale",
        "sts",
        "pg-main",
        "--replicas",
        "1",
        "-n",
        "databases",
        "--cluster",
        DATABASE,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["summary"]["quorumLost"], 1);
}

#[test]
fn several_names_are_one_request_each_in_order() {
    let out = judged_in_databases(&["delete", "pod", "pg-main-0", "pg-main-1"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    insta::assert_snapshot!("check_delete_two_pods_text", stdout(&out));

    let out = judged_in_databases(&["delete", "pod", "pg-main-0", "pg-main-1"], &["-o", "json"]);
    let doc = json(&out);
    assert_eq!(doc["action"], "delete pod pg-main-0 pg-main-1");
    assert_eq!(
        (&doc["allowed"], &doc["objects"], &doc["denied"]),
        (
            &serde_json::json!(false),
            &serde_json::json!(2),
            &serde_json::json!(1)
        )
    );
    let items = doc["items"].as_array().unwrap();
    let names: Vec<&str> = items.iter().map(|i| i["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["pg-main-0", "pg-main-1"]);
    assert_eq!(items[0]["operation"], "DELETE");
    assert_eq!(items[0]["kind"], "Pod");
    assert_eq!(items[0]["namespace"], "databases");
    // The budget (minAvailable 2 of 3) lets the first go; the second would break it.
    assert_eq!(items[0]["allowed"], true);
    assert_eq!(items[1]["allowed"], false);
    let denied_by: Vec<&str> = items[1]["denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["policy"].as_str().unwrap())
        .collect();
    assert!(denied_by.contains(&"suture-disruption-budget"), "{denied_by:?}");

    // Several TYPE/NAME forms are the same requests.
    let slashed = judged_in_databases(&["delete", "pod/pg-main-0", "pod/pg-main-1"], &["-o", "json"]);
    let slashed = json(&slashed);
    assert_eq!(slashed["items"], doc["items"]);
    assert_eq!(slashed["action"], "delete pod/pg-main-0 pod/pg-main-1");
}

#[test]
fn impact_estimates_several_names_one_after_the_other() {
    let out = run(&[
        "impact",
        "delete",
        "pod",
        "pg-main-1",
        "pg-main-0",
        "-n",
        "databases",
        "--cluster",
        DATABASE,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["objects"], 2);
    let items = doc["items"].as_array().unwrap();
    assert_eq!(items[0]["name"], "pg-main-1");
    assert_eq!(items[1]["name"], "pg-main-0");
    let ready = |index: usize| items[index]["impact"]["services"][0]["readyAfter"].as_u64();
    assert_eq!(
        (ready(0), ready(1)),
        (Some(2), Some(1)),
        "the second starts from the first"
    );

    let out = run(&[
        "impact",
        "delete",
        "pod",
        "pg-main-1",
        "pg-main-0",
        "-n",
        "databases",
        "--cluster",
        DATABASE,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("delete pod pg-main-1 pg-main-0: 2 requests, one after the other\n"),
        "{text}"
    );
    assert!(text.contains("── 2/2"), "{text}");
}

#[test]
fn malformed_name_forms_exit_2_with_a_clear_message() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["check", "delete", "pod/pg-main-0", "pg-main-1"],
            "in TYPE/NAME form every object is TYPE/NAME",
        ),
        (
            &["check", "delete", "pod", "pg-main-0/x"],
            "no need to give a resource type",
        ),
        (&["check", "delete", "pod/"], "expected TYPE/NAME"),
        (
            &["impact", "delete", "statefulset"],
            "expected TYPE/NAME or TYPE NAME",
        ),
        (
            &["check", "delete", "widget", "a", "b", "--cluster", DATABASE],
            "unknown resource type \"widget\"",
        ),
    ];
    for (args, expected) in cases {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn help_shows_both_forms() {
    for command in ["check", "impact"] {
        let help = stdout(&run(&[command, "--help"]));
        assert!(
            help.contains("[ACTION TYPE/NAME|TYPE NAME]..."),
            "{command}: {help}"
        );
        assert!(
            help.contains(" delete pod "),
            "{command}: several names in an example: {help}"
        );
    }
    let help = stdout(&run(&["check", "--help"]));
    assert!(help.contains("delete statefulset db -n prod"), "{help}");
}
