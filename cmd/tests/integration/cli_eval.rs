//! `kubectl suture eval`: values, `-o json` shapes, and exit 0 / 1 (evaluation error) /
//! 2 (usage, unreadable input) / 3 (compile error).

use crate::common;

use common::{json, stderr, stdout, suture, temp_files};
use serde_json::json;

const DEPLOYMENT: &str = "testdata/objects/deployment.yaml";
const SCALE_DOWN: &str = "testdata/reviews/statefulset-update-scale-down.json";

fn eval(expr: &str, args: &[&str]) -> std::process::Output {
    suture().args(["eval", "-e", expr]).args(args).output().unwrap()
}

#[test]
fn prints_the_value_of_a_rule() {
    let out = eval("object.spec.replicas > 2", &["--object", DEPLOYMENT]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "true\n");
}

#[test]
fn text_output_uses_cel_literals_and_json_for_collections() {
    let out = eval("object.metadata.name", &["--object", DEPLOYMENT]);
    assert_eq!(stdout(&out), "\"checkout\"\n");
    let out = eval(
        "object.spec.template.spec.containers.map(c, c.name)",
        &["--object", DEPLOYMENT],
    );
    assert_eq!(stdout(&out), "[\n  \"checkout\",\n  \"envoy\"\n]\n");
}

#[test]
fn json_output_has_value_and_type() {
    let out = eval(
        "object.spec.template.spec.containers.map(c, c.image)",
        &["--object", DEPLOYMENT, "-o", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        json(&out),
        json!({"value": ["registry.example.com/shop/checkout:2.14.1", "registry.example.com/proxy/envoy:1.31.2"],
               "type": "list"})
    );
    assert!(
        stdout(&out).trim_start().starts_with("{\n  \"value\""),
        "value comes first:\n{}",
        stdout(&out)
    );
    let out = eval(
        "uint(size(object.metadata.labels)) * 2u",
        &["--object", DEPLOYMENT, "-o", "json"],
    );
    assert_eq!(json(&out), json!({"value": 6, "type": "uint"}));
}

#[test]
fn a_compile_error_exits_3_with_a_caret() {
    let out = eval("object.spec.replicas > objekt", &["--object", DEPLOYMENT]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(
        err.starts_with("error: the expression does not compile\n"),
        "{err}"
    );
    assert!(
        err.contains("<input>:1:24: undeclared reference to 'objekt'"),
        "{err}"
    );
    assert!(
        err.contains(" | object.spec.replicas > objekt\n | .......................^"),
        "{err}"
    );
}

#[test]
fn a_compile_error_as_json_exits_3() {
    let out = eval("object.spec.replicas >", &["-o", "json"]);
    assert_eq!(out.status.code(), Some(3));
    let error = json(&out)["error"].as_str().unwrap().to_owned();
    assert!(error.starts_with("ERROR: <input>:1:"), "{error}");
    assert!(error.ends_with('^'), "{error}");
}

#[test]
fn an_evaluation_error_exits_1() {
    let out = eval("object.spec.paused", &["--object", DEPLOYMENT]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty());
    assert_eq!(stderr(&out), "error: evaluation failed: no such key: paused\n");
}

#[test]
fn an_evaluation_error_as_json_exits_1() {
    let out = eval(
        "1 / (size(object.metadata.labels) - 3)",
        &["--object", DEPLOYMENT, "-o", "json"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out), json!({"error": "division by zero"}));
}

#[test]
fn request_can_be_a_whole_admission_review() {
    let out = eval(
        "[request.userInfo.username, oldObject.spec.replicas - object.spec.replicas]",
        &["--request", SCALE_DOWN, "-o", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        json(&out)["value"],
        json!(["system:serviceaccount:databases:pg-operator", 2])
    );
}

#[test]
fn request_can_be_an_admission_request_and_objects_override_it() {
    let review: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(common::root().join(SCALE_DOWN)).unwrap()).unwrap();
    let dir = temp_files(&[("request.json", &review["request"].to_string())]);
    let request = dir.path().join("request.json");
    let out = eval(
        "[dyn(request.operation), request.name == 'pg-main', object.spec.replicas]",
        &[
            "--request",
            request.to_str().unwrap(),
            "--object",
            "testdata/objects/statefulset.yaml",
            "-o",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["value"], json!(["UPDATE", true, 5]));
}

#[test]
fn without_request_it_is_built_from_the_objects() {
    let out = eval(
        "[request.operation, request.resource.resource, request.namespace, request.name]",
        &["--object", DEPLOYMENT, "-o", "json"],
    );
    assert_eq!(
        json(&out)["value"],
        json!(["CREATE", "deployments", "shop", "checkout"])
    );
    let out = eval("request.operation", &["--old-object", DEPLOYMENT]);
    assert_eq!(stdout(&out), "\"DELETE\"\n");
    let out = eval(
        "request.operation",
        &["--old-object", DEPLOYMENT, "--object", DEPLOYMENT],
    );
    assert_eq!(stdout(&out), "\"UPDATE\"\n");
}

#[test]
fn params_namespace_object_and_stdin() {
    let out = suture()
        .args([
            "eval",
            "-e",
            "int(params.data.maxReplicas) > 5 && namespaceObject.metadata.labels.env == 'prod'",
        ])
        .args([
            "--params",
            "testdata/suites/replicas-limit/params.yaml",
            "--namespace-object",
            "-",
        ])
        .write_stdin("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {env: prod}\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "true\n");
}

#[test]
fn the_authorizer_answers_as_told() {
    let expr = "authorizer.group('apps').resource('deployments').namespace('shop').check('delete').allowed()";
    assert_eq!(stdout(&eval(expr, &[])), "true\n");
    assert_eq!(stdout(&eval(expr, &["--authorizer", "deny"])), "false\n");
}

#[test]
fn unreadable_inputs_exit_2_naming_the_file() {
    let out = eval("object", &["--object", "testdata/objects/nope.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: cannot read testdata/objects/nope.yaml: "),
        "{}",
        stderr(&out)
    );

    let dir = temp_files(&[("bad.yaml", "metadata:\n  name: x\n  labels: [a\n")]);
    let bad = dir.path().join("bad.yaml");
    let out = eval("object", &["--object", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let expected = format!("error: {}:4:1: ", bad.display());
    assert!(stderr(&out).starts_with(&expected), "{}", stderr(&out));
}

#[test]
fn a_review_without_request_exits_2() {
    let out = eval(
        "request",
        &["--request", "testdata/reviews/malformed-no-request.json"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: testdata/reviews/malformed-no-request.json: the AdmissionReview has no `request`\n"
    );
}

#[test]
fn only_one_input_may_come_from_stdin() {
    let out = eval("object", &["--object", "-", "--old-object", "-"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("only one input can be read from stdin"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn cluster_snapshots_are_loaded() {
    let out = eval(
        "1",
        &[
            "--cluster",
            "testdata/clusters/database",
            "--cluster",
            "testdata/clusters/web",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!((stdout(&out).as_str(), stderr(&out).as_str()), ("1\n", ""));
}

#[test]
fn a_broken_cluster_snapshot_exits_2_naming_file_and_line() {
    let out = eval("1", &["--cluster", "testdata/clusters/bad/syntax.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with(
            "error: cannot load the --cluster snapshots: testdata/clusters/bad/syntax.yaml:13 (document 2): YAML syntax error at column 8:"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_cluster_library_and_impact_read_the_snapshot() {
    const DATABASE: [&str; 2] = ["--cluster", "testdata/clusters/database"];
    const REVIEW: [&str; 2] = ["--request", "testdata/reviews/namespace-delete-operator.json"];
    let out = eval("cluster.count('Pod', 'databases')", &DATABASE);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "3");

    let out = eval("impact.summary.dataLoss", &[REVIEW, DATABASE].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "3");

    let out = eval("impact.summary.dataLoss", &REVIEW);
    assert_eq!(
        out.status.code(),
        Some(1),
        "without a snapshot, impact is an evaluation error"
    );
    assert!(stderr(&out).contains("impact"), "{}", stderr(&out));
}

#[test]
fn the_kubernetes_version_decides_what_compiles() {
    let out = eval("[1, 2].includes(2)", &[]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "undeclared reference to 'includes': Kubernetes 1.37 introduced it, the target is 1.36"
        ),
        "{}",
        stderr(&out)
    );
    let out = eval("[1, 2].includes(2)", &["--kubernetes-version", "1.37"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "true\n");
    let out = suture()
        .args(["eval", "-e", "[1, 2].includes(2)"])
        .env("SUTURE_KUBERNETES_VERSION", "v1.37.2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = eval("[2, 1].sort()", &["--kubernetes-version", "1.33"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let out = eval("1", &["--kubernetes-version", "1.32"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("Kubernetes 1.32 is not supported: Suture knows the CEL environments of 1.33 to 1.37"),
        "{}",
        stderr(&out)
    );
}
