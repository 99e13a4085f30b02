//! The AdmissionReviews captured from a real kube-apiserver (`../shared/fixtures`, read in place,
//! never copied): every one is read by `check` and `eval` exactly as the wire format has it.
//! Skipped, with a message, when the captures are not present.

use crate::common;

use common::{json, shared_reviews, stderr, suture};

#[test]
fn check_reads_every_captured_review() {
    let Some(files) = shared_reviews() else { return };
    assert!(!files.is_empty(), "no captures found");
    for file in files {
        let out = suture()
            .args(["check", "-o", "json", "-f"])
            .arg(&file)
            .output()
            .unwrap();
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "{}: exit {code:?}: {}",
            file.display(),
            stderr(&out)
        );
        let doc = json(&out);
        assert_eq!(
            doc["allowed"].as_bool(),
            Some(code == Some(0)),
            "{}",
            file.display()
        );
    }
}

#[test]
fn eval_sees_the_request_as_policies_do() {
    let Some(files) = shared_reviews() else { return };
    for file in files {
        let review: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let request = &review["request"];
        // `request` has the fields Kubernetes declares for it (no `uid`, no `object`).
        let expr = "[dyn(request.name), request.operation, request.userInfo.username, \
                    request.resource.resource, request.dryRun, \
                    request.options == null ? '' : request.options.kind]";
        let out = suture()
            .args(["eval", "-o", "json", "-e", expr, "--request"])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}: {}", file.display(), stderr(&out));
        let options_kind = request["options"]["kind"].as_str().unwrap_or_default();
        assert_eq!(
            json(&out)["value"],
            serde_json::json!([
                request["name"].as_str().unwrap_or_default(),
                request["operation"],
                request["userInfo"]["username"],
                request["resource"]["resource"],
                request["dryRun"],
                options_kind
            ]),
            "{}",
            file.display()
        );
    }
}

#[test]
fn reviews_built_from_cases_have_the_captured_shape() {
    // The fields kube-apiserver sends, per the captures; a suite case must produce the same set.
    let Some(files) = shared_reviews() else { return };
    let capture = files
        .iter()
        .find(|f| f.ends_with("deployment-CREATE-serviceaccount-token.json"))
        .unwrap();
    let captured: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(capture).unwrap()).unwrap();
    let object = serde_json::to_string(&captured["request"]["object"]).unwrap();
    let dir = common::temp_files(&[
        ("object.json", object.as_str()),
        (
            "suite.yaml",
            "apiVersion: suture.dev/v1alpha1\nkind: SutureTest\npolicies: [builtin]\ncases:\n- name: create\n  objectFile: object.json\n  userInfo: {username: \"system:serviceaccount:wh:ci-bot\"}\n  expect: {allowed: true}\n",
        ),
    ]);
    let out = suture()
        .args(["test", "-o", "json"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let expr = "request";
    let built = suture()
        .args(["eval", "-o", "json", "-e", expr, "--object"])
        .arg(dir.path().join("object.json"))
        .output()
        .unwrap();
    let built = json(&built)["value"].clone();
    let mut captured_keys: Vec<&String> = captured["request"].as_object().unwrap().keys().collect();
    captured_keys.retain(|k| *k != "object" && *k != "oldObject");
    let built_keys: Vec<&String> = built.as_object().unwrap().keys().collect();
    assert_eq!(
        built_keys,
        captured_keys
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    );
    for field in [
        "kind",
        "resource",
        "requestKind",
        "requestResource",
        "name",
        "namespace",
        "operation",
    ] {
        assert_eq!(built[field], captured["request"][field], "{field}");
    }
    assert_eq!(built["options"]["kind"], "CreateOptions");
}
