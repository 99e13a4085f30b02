//! `kubectl suture check`: verdicts on recorded AdmissionReviews, the report formats, and exit
//! 0 (allowed) / 1 (denied) / 2 (usage, unreadable input) / 3 (policies fail to load).

use crate::common;

use common::{json, stderr, stdout, suture, temp_files};

const NAMESPACE_DELETE: &str = "testdata/reviews/namespace-delete-operator.json";
const SCALE_DOWN: &str = "testdata/reviews/statefulset-update-scale-down.json";
const DEPLOYMENT_CREATE: &str = "testdata/reviews/deployment-create-serviceaccount.json";
const PVC_DELETE_ANNOTATED: &str = "testdata/reviews/pvc-delete-annotated.json";
/// The quick start's scene: the built-in pack reads the impact, which needs a cluster model.
const DATABASE: &str = "testdata/clusters/database";
const REPLICAS_POLICIES: &str = "testdata/suites/replicas-limit/policies.yaml";
const REPLICAS_PARAMS: &str = "testdata/suites/replicas-limit/params.yaml";

fn check(args: &[&str]) -> std::process::Output {
    suture().arg("check").args(args).output().unwrap()
}

#[test]
fn an_operator_deleting_a_namespace_is_denied() {
    let out = check(&["-f", NAMESPACE_DELETE, "--cluster", DATABASE]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(
            "DENIED  DELETE namespaces databases by system:serviceaccount:databases:pg-operator\n"
        )
    );
    assert!(!text.contains('\x1b'), "no colour when stdout is not a terminal");
    insta::assert_snapshot!("check_namespace_delete_text", text);
}

#[test]
fn a_quorum_breaking_scale_down_is_denied_by_two_policies() {
    let out = check(&["-f", SCALE_DOWN, "--cluster", DATABASE]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("check_statefulset_scale_down_text", stdout(&out));
}

#[test]
fn an_allowed_request_with_a_warning() {
    // A human annotated the live claim: admitted, with the warning and the audit record.
    let out = check(&["-f", PVC_DELETE_ANNOTATED, "--cluster", DATABASE]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!("check_pvc_delete_annotated_text", stdout(&out));
}

#[test]
fn without_a_snapshot_the_pack_refuses_what_it_cannot_estimate() {
    let out = check(&["-f", NAMESPACE_DELETE, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let message = json(&out)["denials"][0]["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("no cluster model: give a --cluster snapshot"),
        "{message}"
    );
}

#[test]
fn verbose_lists_every_policy_outcome() {
    let out = check(&[
        "-f",
        SCALE_DOWN,
        "--cluster",
        DATABASE,
        "-v",
        "--policies",
        "builtin",
        "--policies",
        REPLICAS_POLICIES,
        "--params",
        REPLICAS_PARAMS,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    insta::assert_snapshot!("check_verbose_text", stdout(&out));
}

#[test]
fn an_ordinary_create_is_allowed() {
    let out = check(&["-f", DEPLOYMENT_CREATE]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "ALLOWED  CREATE deployments.apps shop/checkout by system:serviceaccount:shop:release-bot\n"
    );
}

#[test]
fn json_output_follows_the_contract() {
    let out = check(&["-f", SCALE_DOWN, "--cluster", DATABASE, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc = json(&out);
    let keys: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
    for key in ["allowed", "denials", "warnings", "auditAnnotations", "impact"] {
        assert!(keys.contains(&key), "missing {key} in {keys:?}");
    }
    assert_eq!(doc["allowed"], false);
    assert_eq!(doc["impact"]["summary"]["quorumLost"], 1);
    assert_eq!(
        doc["impact"]["activity"],
        "updating StatefulSet databases/pg-main"
    );
    let denials = doc["denials"].as_array().unwrap();
    let policies: Vec<&str> = denials.iter().map(|d| d["policy"].as_str().unwrap()).collect();
    assert_eq!(
        policies,
        ["suture-disruption-budget", "suture-statefulset-quorum"]
    );
    for denial in denials {
        assert_eq!(denial["reason"], "Forbidden");
        assert!(
            denial["message"]
                .as_str()
                .unwrap()
                .starts_with("updating StatefulSet databases/pg-main "),
            "{denial}"
        );
    }
    assert_eq!(doc["status"]["code"], 403);
    assert!(doc["warnings"].as_array().unwrap().is_empty());
}

#[test]
fn json_output_of_an_allowed_request() {
    let out = check(&[
        "-f",
        DEPLOYMENT_CREATE,
        "-o",
        "json",
        "--policies",
        REPLICAS_POLICIES,
        "--params",
        REPLICAS_PARAMS,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["allowed"], true);
    assert_eq!(doc["denials"], serde_json::json!([]));
    assert_eq!(doc.get("status"), None);
    let outcomes: Vec<(&str, &str)> = doc["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["policy"].as_str().unwrap(), p["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("replicas-limit", "passed"),
            ("statefulset-odd-replicas", "notMatched")
        ]
    );
}

#[test]
fn yaml_output_has_the_same_document() {
    let out = check(&["-f", NAMESPACE_DELETE, "--cluster", DATABASE, "-o", "yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_yaml_ng::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["allowed"], false);
    let json_doc = json(&check(&[
        "-f",
        NAMESPACE_DELETE,
        "--cluster",
        DATABASE,
        "-o",
        "json",
    ]));
    assert_eq!(doc, json_doc);
}

#[test]
fn the_review_can_come_from_stdin_as_yaml() {
    let review: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(common::root().join(NAMESPACE_DELETE)).unwrap())
            .unwrap();
    let yaml = serde_yaml_ng::to_string(&review).unwrap();
    let out = suture()
        .args(["check", "-f", "-", "--cluster", DATABASE, "-o", "json"])
        .write_stdin(yaml)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    let denials = doc["denials"].as_array().unwrap();
    assert!(
        denials.iter().any(|d| d["policy"] == "suture-namespace-delete"),
        "{doc}"
    );
}

#[test]
fn params_change_the_verdict() {
    let dir = temp_files(&[(
        "tight.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: replica-limits, namespace: suture-system}\ndata: {maxReplicas: \"2\"}\n",
    )]);
    let tight = dir.path().join("tight.yaml");
    let out = check(&[
        "-f",
        DEPLOYMENT_CREATE,
        "--policies",
        REPLICAS_POLICIES,
        "--params",
        tight.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Deployment checkout asks for 3 replicas; the limit in namespace shop is 2")
    );
}

#[test]
fn a_missing_review_exits_2_naming_the_file() {
    let out = check(&["-f", "testdata/reviews/nope.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    assert!(
        stderr(&out).starts_with("error: cannot read testdata/reviews/nope.json: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_review_without_request_exits_2() {
    let out = check(&["-f", "testdata/reviews/malformed-no-request.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: testdata/reviews/malformed-no-request.json: the AdmissionReview has no `request`\n"
    );
}

#[test]
fn inputs_that_are_not_reviews_exit_2() {
    let dir = temp_files(&[
        (
            "syntax.yaml",
            "apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest: {uid: [1\n",
        ),
        (
            "v1beta1.json",
            r#"{"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {}}"#,
        ),
        (
            "truncated.json",
            r#"{"apiVersion": "admission.k8s.io/v1", "kind": "#,
        ),
        (
            "pod.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {labels: {a: b}}\n",
        ),
        ("empty.yaml", "# nothing\n"),
    ]);
    let expected = [
        ("syntax.yaml", ":4:1: "),
        (
            "v1beta1.json",
            ": expected an AdmissionReview of apiVersion admission.k8s.io/v1, found admission.k8s.io/v1beta1",
        ),
        ("truncated.json", ":1:"),
        // Not a review: a manifest for a what-if, which needs a name.
        (
            "pod.yaml",
            ": a manifest needs apiVersion, kind and metadata.name",
        ),
        ("empty.yaml", ": the document is empty"),
    ];
    for (name, message) in expected {
        let path = dir.path().join(name);
        let out = check(&["-f", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.starts_with(&format!("error: {}{message}", path.display())),
            "{name}: {err}"
        );
    }
}

#[test]
fn policies_that_fail_to_load_exit_3() {
    let dir = temp_files(&[
        (
            "unknown-kind.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
        ),
        (
            "bad-cel.yaml",
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\nspec:\n  validations:\n  - expression: \"object.spec.replicas >\"\n",
        ),
        (
            "syntax.yaml",
            "apiVersion: admissionregistration.k8s.io/v1\nkind: [\n",
        ),
    ]);
    for (name, needle) in [
        ("unknown-kind.yaml", "unknown kind `ConfigMap`"),
        (
            "bad-cel.yaml",
            "spec.validations[0].expression: invalid CEL expression",
        ),
        ("syntax.yaml", "syntax"),
    ] {
        let path = dir.path().join(name);
        let out = check(&["-f", NAMESPACE_DELETE, "--policies", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(3), "{name}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.starts_with("error: cannot load policies: "), "{name}: {err}");
        assert!(
            err.contains(&path.display().to_string()),
            "{name} names the file: {err}"
        );
        assert!(err.contains(needle), "{name}: {err}");
    }
    let out = check(&[
        "-f",
        NAMESPACE_DELETE,
        "--policies",
        dir.path().join("bad-cel.yaml").to_str().unwrap(),
    ]);
    assert!(
        stderr(&out).contains("| ......................^"),
        "a caret under the problem: {}",
        stderr(&out)
    );
}

#[test]
fn a_missing_policy_path_exits_2() {
    let out = check(&["-f", NAMESPACE_DELETE, "--policies", "testdata/no-such-policies/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("testdata/no-such-policies/"),
        "{}",
        stderr(&out)
    );
    let out = check(&["-f", NAMESPACE_DELETE, "--params", "testdata/no-such-params.yaml"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn builtin_can_be_combined_with_own_policies() {
    let out = check(&[
        "-f",
        SCALE_DOWN,
        "-o",
        "json",
        "--policies",
        "builtin",
        "--policies",
        REPLICAS_POLICIES,
        "--params",
        REPLICAS_PARAMS,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let names: Vec<String> = json(&out)["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["policy"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        names.contains(&"suture-statefulset-quorum".to_owned())
            && names.contains(&"replicas-limit".to_owned()),
        "{names:?}"
    );
}

#[test]
fn cluster_snapshots_are_loaded() {
    let out = check(&["-f", SCALE_DOWN, "--cluster", "testdata/clusters/database"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    assert!(stdout(&out).starts_with(
        "DENIED  UPDATE statefulsets.apps databases/pg-main by system:serviceaccount:databases:pg-operator\n"
    ));
}

#[test]
fn a_broken_cluster_snapshot_exits_2_naming_file_line_and_field() {
    let out = check(&[
        "-f",
        SCALE_DOWN,
        "--cluster",
        "testdata/clusters/bad/replicas-three.yaml",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim_end(),
        "error: cannot load the --cluster snapshots: testdata/clusters/bad/replicas-three.yaml:9 (document 1): \
         items[0].spec.replicas: expected an integer, found \"three\" (in StatefulSet databases/pg-main)"
    );
}

#[test]
fn jsonpath_output_prints_the_matches_like_kubectl() {
    let out = check(&[
        "-f",
        NAMESPACE_DELETE,
        "--cluster",
        DATABASE,
        "-o",
        "jsonpath={.denials[*].policy}",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "suture-data-loss suture-availability suture-availability suture-statefulset-quorum suture-namespace-delete\n"
    );
    let out = check(&[
        "-f",
        NAMESPACE_DELETE,
        "--cluster",
        DATABASE,
        "-o",
        "jsonpath={.impact.summary.dataLoss}",
    ]);
    assert_eq!(stdout(&out), "3\n");
    let out = check(&["-f", NAMESPACE_DELETE, "-o", "jsonpath={.a[}"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("invalid jsonpath"), "{}", stderr(&out));
}

#[test]
fn a_namespace_manifest_raising_its_pod_security_level_is_judged_against_its_pods() {
    // A what-if from a manifest: the Namespace as the cluster has it is the oldObject, labels
    // included, so the raise is seen.
    let dir = temp_files(&[(
        "namespace.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: databases\n  labels:\n    \
         kubernetes.io/metadata.name: databases\n    team: data-platform\n    \
         pod-security.kubernetes.io/enforce: restricted\n",
    )]);
    let manifest = dir.path().join("namespace.yaml");
    let out = check(&["-f", manifest.to_str().unwrap(), "--cluster", DATABASE]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    insta::assert_snapshot!("check_namespace_pod_security_text", stdout(&out));
}
