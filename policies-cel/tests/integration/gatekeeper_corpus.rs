//! Runs every case of the Gatekeeper library corpus (`../shared/corpora/gatekeeper-library`,
//! 131 real K8sNativeValidation cases with verdicts produced by cel-go) through the real loader
//! and `evaluate()`, and asserts each expected verdict, violation count and message.
//!
//! Each case becomes a ValidatingAdmissionPolicy (its variables and validations, unchanged, with
//! Gatekeeper's two injected variables) whose `paramKind` is the Constraint's kind, loaded with
//! the Constraint as its params object. Gator's plain-object reviews carry an empty
//! `request.operation`, which an AdmissionRequest cannot hold; they are submitted as CREATE (no
//! template distinguishes the two: they test for "UPDATE" and "DELETE" only).

use std::path::PathBuf;

use policies_cel::eval::Outcome;
use policies_cel::policy::Loader;
use policies_cel::{EmptyCluster, Request, evaluate};
use serde_json::{Value as Json, json};

fn corpus() -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpora/gatekeeper-library/all_cases.jsonl");
    path.exists().then_some(path)
}

fn policy_document(case: &Json) -> Json {
    let policy = &case["policy"];
    let strip = |items: &Json, keep: &[&str]| -> Json {
        Json::Array(
            items
                .as_array()
                .into_iter()
                .flatten()
                .map(|item| {
                    let object = item.as_object().into_iter().flatten();
                    Json::Object(
                        object
                            .filter(|(k, _)| keep.contains(&k.as_str()))
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect(),
                    )
                })
                .collect(),
        )
    };
    let mut spec = json!({
        "failurePolicy": policy["failurePolicy"].as_str().unwrap_or("Fail"),
        "matchConstraints": {"resourceRules": [{
            "apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]
        }]},
        "matchConditions": strip(&policy["matchConditions"], &["name", "expression"]),
        "variables": strip(&policy["variables"], &["name", "expression"]),
        "validations": strip(&policy["validations"], &["expression", "message", "messageExpression", "reason"]),
    });
    if let Some(params) = case["params"].as_object() {
        spec["paramKind"] = json!({"apiVersion": params["apiVersion"], "kind": params["kind"]});
    }
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": policy["name"]},
        "spec": spec,
    })
}

fn review(case: &Json) -> Json {
    let request = &case["request"];
    let operation = match request["operation"].as_str() {
        Some("") | None => "CREATE",
        Some(other) => other,
    };
    let user_info = match request.get("userInfo") {
        Some(info) if info.is_object() => info.clone(),
        _ => json!({"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]}),
    };
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "00000000-0000-0000-0000-000000000000",
            "kind": request["kind"],
            "resource": request["resource"],
            "name": request["name"].as_str().unwrap_or_default(),
            "namespace": request["namespace"],
            "operation": operation,
            "userInfo": user_info,
            "object": case["object"],
            "oldObject": case["oldObject"],
            "dryRun": false,
        }
    })
}

/// Checks one case; `Err` says how the verdict differs from cel-go's.
fn check(case: &Json) -> Result<(), String> {
    let id = case["id"].as_str().unwrap_or("?");
    let document = policy_document(case).to_string();
    let mut loader = Loader::new()
        .add_str(&format!("{id}.json"), &document)
        .map_err(|e| format!("load: {e}"))?;
    if case["params"].is_object() {
        loader = loader
            .add_params_str(&format!("{id}-params.json"), &case["params"].to_string())
            .map_err(|e| format!("params: {e}"))?;
    }
    let set = loader.finish().map_err(|e| format!("load: {e}"))?;
    let request = Request::from_review(review(case)).map_err(|e| format!("review: {e}"))?;
    let decision = evaluate(&set, &request, &EmptyCluster);
    let expected = &case["expected"];
    let messages: Vec<&str> = decision.denials.iter().map(|d| d.message.as_str()).collect();
    match expected["result"].as_str() {
        Some("allow") if !decision.allowed => return Err(format!("expected allow, denied: {messages:?}")),
        Some("deny") if decision.allowed => {
            return Err(format!("expected deny, allowed: {:?}", decision.policies));
        }
        Some("skip")
            if !decision
                .policies
                .iter()
                .all(|p| matches!(p.outcome, Outcome::Skipped { .. })) =>
        {
            return Err(format!("expected skip, got {:?}", decision.policies));
        }
        _ => {}
    }
    if let Some(violations) = expected["violations"].as_u64()
        && decision.denials.len() as u64 != violations
    {
        return Err(format!(
            "expected {violations} violations, got {}: {messages:?}",
            decision.denials.len()
        ));
    }
    for assertion in expected["messages"].as_array().into_iter().flatten() {
        let pattern = assertion["regex"].as_str().unwrap_or_default();
        let regex = regex::Regex::new(pattern).map_err(|e| format!("bad regex in case: {e}"))?;
        let hits = messages.iter().filter(|m| regex.is_match(m)).count() as u64;
        let ok = match &assertion["count"] {
            Json::Number(n) => Some(hits) == n.as_u64(),
            _ => hits > 0,
        };
        if !ok {
            return Err(format!("message /{pattern}/ matched {hits} of {messages:?}"));
        }
    }
    Ok(())
}

#[test]
fn every_gatekeeper_library_case_gets_cel_gos_verdict() {
    let Some(path) = corpus() else {
        eprintln!("SKIPPED: ../shared/corpora/gatekeeper-library is not beside the repository");
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let cases: Vec<Json> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            check(case)
                .err()
                .map(|why| format!("{}: {why}", case["id"].as_str().unwrap_or("?")))
        })
        .collect();
    let passed = cases.len() - failures.len();
    println!("gatekeeper-library corpus: {passed}/{} cases pass", cases.len());
    assert_eq!(cases.len(), 131, "the corpus should hold 131 cases");
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The corpus' policies, each matched exactly to the built-in kind of its case's object (`pods`,
/// `namespaces`) so that `lint` checks every expression against that kind's schema, as
/// kube-apiserver's type check would: no `schema-field` warning on these correct policies.
#[test]
fn no_gatekeeper_library_policy_gets_a_schema_field_warning() {
    let Some(path) = corpus() else {
        eprintln!("SKIPPED: ../shared/corpora/gatekeeper-library is not beside the repository");
        return;
    };
    let text = std::fs::read_to_string(&path).unwrap();
    let mut linter = policies_cel::lint::Linter::new();
    let mut typed = 0;
    for case in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Json = serde_json::from_str(case).unwrap();
        let resource = match case["object"]["kind"].as_str() {
            Some("Pod") => "pods",
            Some("Namespace") => "namespaces",
            _ => continue,
        };
        let mut document = policy_document(&case);
        document["spec"]["matchConstraints"]["resourceRules"] = json!([{
            "apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"], "resources": [resource]
        }]);
        let id = case["id"].as_str().unwrap_or("?");
        linter.add_str(&format!("{id}.json"), &document.to_string());
        typed += 1;
    }
    let report = linter.run(&policies_cel::lint::NoCatalog);
    let warned: Vec<String> = report
        .findings
        .iter()
        .filter(|f| f.code == policies_cel::lint::Code::SchemaField)
        .map(|f| format!("{f}"))
        .collect();
    assert_eq!(typed, 131);
    assert!(warned.is_empty(), "{}", warned.join("\n"));
}
