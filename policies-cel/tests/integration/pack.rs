//! The built-in pack: it loads, every expression compiles, names are unique, each policy is an
//! impact-reading SafetyPolicy for operators (service accounts) with the escape hatch and the
//! pack's params, and a few decisions straight through `evaluate()` on the testdata scenes
//! (the full harmful/routine suites live in `testdata/suites/pack`, run by `cmd/tests`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use policies_cel::cluster::{ClusterModel, ObjectKey, load_snapshots};
use policies_cel::pack::{self, params};
use policies_cel::policy::{Action, PolicyKind};
use policies_cel::{Decision, EmptyCluster, EvalContext, Request, evaluate, evaluate_in};
use serde_json::{Value as Json, json};

#[test]
fn pack_loads_and_every_policy_reads_the_impact() {
    let set = pack::builtin().unwrap_or_else(|e| panic!("the built-in pack does not load:\n{e}"));
    assert_eq!(set.len(), pack::files().len(), "one policy per file");
    assert_eq!(set.len(), 10);
    for policy in &set.policies {
        assert!(
            !policy.validations.is_empty(),
            "{} has no validation",
            policy.name
        );
        assert!(
            policy.uses_impact,
            "{} does not read the impact estimate",
            policy.name
        );
    }
}

#[test]
fn pack_names_are_unique_prefixed_and_match_their_files() {
    let set = pack::builtin().unwrap_or_else(|e| panic!("{e}"));
    let mut names = HashSet::new();
    for (policy, (file, _)) in set.policies.iter().zip(pack::files()) {
        assert!(
            names.insert(policy.name.clone()),
            "duplicate policy name {}",
            policy.name
        );
        let stem = file.trim_start_matches("pack/").trim_end_matches(".yaml");
        assert_eq!(policy.name, format!("suture-{stem}"), "{file}");
    }
}

#[test]
fn pack_judges_operators_takes_params_and_has_the_escape_hatch() {
    let set = pack::builtin().unwrap_or_else(|e| panic!("{e}"));
    for policy in &set.policies {
        assert_eq!(policy.kind, PolicyKind::SafetyPolicy, "{}", policy.name);
        let subjects = policy
            .subjects
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no subjects", policy.name));
        assert_eq!(subjects.service_accounts, ["*/*"], "{}", policy.name);
        // The control plane is exempt by identity; other kube-system accounts are judged.
        assert!(subjects.exclude_control_plane, "{}", policy.name);
        assert!(subjects.exclude_service_accounts.is_empty(), "{}", policy.name);
        assert!(
            policy.match_constraints.is_some(),
            "{} matches every request",
            policy.name
        );
        assert_eq!(policy.actions, [Action::Deny], "{}", policy.name);
        assert_eq!(
            policy.allow_annotation.as_deref(),
            Some("suture.dev/allow-disruption"),
            "{}",
            policy.name
        );
        assert_eq!(
            policy.param_kind,
            Some((params::API_VERSION.to_owned(), params::KIND.to_owned())),
            "{}",
            policy.name
        );
        let conditions: Vec<&str> = policy.match_conditions.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(conditions, ["in-scope", "enabled"], "{}", policy.name);
        for validation in &policy.validations {
            assert!(validation.message_expression.is_some(), "{}", policy.name);
            assert!(validation.message.is_some(), "{}", policy.name);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Decisions on the testdata scenes, in the exact AdmissionReview wire form.

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

/// Every scene at once, as the pack suites load them.
fn scenes() -> &'static ClusterModel {
    static MODEL: OnceLock<ClusterModel> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dirs: Vec<PathBuf> = ["database", "web", "operator", "mixed", "platform"]
            .iter()
            .map(|scene| testdata().join("clusters").join(scene))
            .collect();
        let paths: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
        load_snapshots(&paths, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"))
    })
}

fn review(
    operation: &str,
    user: &str,
    kind: (&str, &str, &str),
    resource: &str,
    old: Json,
    new: Json,
) -> Request {
    let (group, version, kind) = kind;
    let metadata = if old.is_null() {
        &new["metadata"]
    } else {
        &old["metadata"]
    };
    let request = json!({
        "uid": "3b0c8f1e-2d7a-4c35-9a57-6b4f3e2d1c0a",
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "name": metadata["name"],
        "namespace": metadata["namespace"],
        "operation": operation,
        "userInfo": {"username": user, "groups": ["system:serviceaccounts", "system:authenticated"]},
        "object": new,
        "oldObject": old,
        "dryRun": false,
    });
    Request::from_review(
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn delete_statefulset(namespace: &str, name: &str, user: &str) -> Request {
    let old = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": namespace}});
    review(
        "DELETE",
        user,
        ("apps", "v1", "StatefulSet"),
        "statefulsets",
        old,
        Json::Null,
    )
}

fn denied_by(decision: &Decision) -> Vec<&str> {
    decision.denials.iter().map(|d| d.policy.as_str()).collect()
}

#[test]
fn deleting_a_budgeted_statefulset_is_denied_with_the_numbers() {
    let set = pack::builtin().unwrap();
    let request = delete_statefulset(
        "mq",
        "rabbit-server",
        "system:serviceaccount:mq:rabbitmq-operator",
    );
    let decision = evaluate(&set, &request, scenes());
    assert!(!decision.allowed);
    let budget = decision
        .denials
        .iter()
        .find(|d| d.policy == "suture-disruption-budget")
        .unwrap();
    assert!(
        budget.message.starts_with(
            "deleting StatefulSet mq/rabbit-server stops 3 pods; PodDisruptionBudget mq/rabbit would have 0 of 2 required healthy pods"
        ),
        "{}",
        budget.message
    );
    assert_eq!(
        denied_by(&decision),
        [
            "suture-disruption-budget",
            "suture-availability",
            "suture-availability",
            "suture-statefulset-quorum"
        ]
    );
}

#[test]
fn a_statefulset_the_model_has_not_caught_up_with_is_refused_from_its_old_object() {
    // The live model lags (the set was created a moment ago, or its watch is reconnecting): it
    // holds the pods and claims but not the StatefulSet. kube-apiserver's DELETE carries the
    // stored set as oldObject, which is what the estimate then goes by.
    let set = pack::builtin().unwrap();
    let snapshot = testdata().join("clusters/operator/snapshot.yaml");
    let list: Json = serde_yaml_ng::from_str(&std::fs::read_to_string(&snapshot).unwrap()).unwrap();
    let stored = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "StatefulSet" && o["metadata"]["name"] == "rabbit-server")
        .cloned()
        .unwrap();
    let mut lagging = load_snapshots(&[snapshot.as_path()], &mut |_| {}).unwrap();
    lagging
        .remove(&ObjectKey::new("apps", "StatefulSet", "mq", "rabbit-server"))
        .unwrap();
    let user = "system:serviceaccount:mq:rabbitmq-operator";
    let request = review(
        "DELETE",
        user,
        ("apps", "v1", "StatefulSet"),
        "statefulsets",
        stored,
        Json::Null,
    );
    let decision = evaluate(&set, &request, &lagging);
    assert!(
        denied_by(&decision).contains(&"suture-statefulset-quorum"),
        "{:?}",
        decision.denials
    );
    // An oldObject without a uid is not a stored object (a what-if's stand-in): nothing is known
    // to go.
    let decision = evaluate(&set, &delete_statefulset("mq", "rabbit-server", user), &lagging);
    assert!(decision.allowed, "{:?}", decision.denials);
}

#[test]
fn a_scale_of_a_set_the_live_model_has_not_caught_up_with_follows_failure_policy() {
    // A `scale` carries a Scale, not the StatefulSet: the estimate needs the set as the model
    // holds it. kube-apiserver only judges a scale of a set it has, so when the gateway's live
    // model lacks the set, its watch has not delivered it yet: the policies reading `impact`
    // follow their failurePolicy (the pack's: Fail) rather than count nothing and admit. A
    // snapshot may leave objects out: there, nothing is counted and a note says why.
    let set = pack::builtin().unwrap();
    let snapshot = testdata().join("clusters/operator/snapshot.yaml");
    let mut lagging = load_snapshots(&[snapshot.as_path()], &mut |_| {}).unwrap();
    let key = ObjectKey::new("apps", "StatefulSet", "mq", "rabbit-server");
    lagging.remove(&key).unwrap();
    let scale = |replicas: i64| {
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {"name": "rabbit-server", "namespace": "mq", "uid": "5d1f0b6e-rabbit"},
            "spec": {"replicas": replicas}})
    };
    let request = Request::from_review(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "0e7f6a52-91c4-4d8b-b3a1-2f5c7d9e8a10",
            "kind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
            "resource": {"group": "apps", "version": "v1", "resource": "statefulsets"},
            "subResource": "scale", "name": "rabbit-server", "namespace": "mq", "operation": "UPDATE",
            "userInfo": {"username": "system:serviceaccount:mq:rabbitmq-operator", "groups": ["system:serviceaccounts"]},
            "object": scale(1), "oldObject": scale(3), "dryRun": false}}))
    .unwrap();
    let offline = evaluate(&set, &request, &lagging);
    assert!(offline.allowed, "{:?}", offline.denials);
    let impact = offline.impact.unwrap();
    assert_eq!(impact.missing, Some(key.clone()));
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("is not in the cluster model")),
        "{:?}",
        impact.notes
    );

    let live = EvalContext {
        live: true,
        ..EvalContext::default()
    };
    let decision = evaluate_in(&set, &request, &lagging, &live);
    assert!(!decision.allowed);
    let denied = denied_by(&decision);
    assert!(denied.contains(&"suture-statefulset-quorum"), "{denied:?}");
    assert!(
        decision
            .denials
            .iter()
            .all(|d| d.message.contains(&format!("does not hold {key} yet"))),
        "{:?}",
        decision.denials
    );
    // With the set in the model, the same request is judged by its figures.
    let decision = evaluate_in(&set, &request, scenes(), &live);
    assert!(
        denied_by(&decision).contains(&"suture-statefulset-quorum"),
        "{:?}",
        decision.denials
    );
    assert!(
        decision
            .denials
            .iter()
            .all(|d| !d.message.contains("does not hold"))
    );

    // kube-apiserver judges an eviction before it looks the pod up: a pod the model lacks may
    // not exist (a drain evicting a pod deleted meanwhile expects NotFound), so it is not held
    // against the request.
    let eviction = Request::from_review(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9",
            "kind": {"group": "policy", "version": "v1", "kind": "Eviction"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "subResource": "eviction", "name": "gone-0", "namespace": "mq", "operation": "CREATE",
            "userInfo": {"username": "system:serviceaccount:mq:rabbitmq-operator", "groups": ["system:serviceaccounts"]},
            "object": {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "gone-0", "namespace": "mq"}},
            "dryRun": false}}))
    .unwrap();
    let decision = evaluate_in(&set, &eviction, &lagging, &live);
    assert!(decision.allowed, "{:?}", decision.denials);
}

#[test]
fn each_object_of_a_deletecollection_is_judged_by_its_old_object() {
    // kube-apiserver judges a deletecollection one DELETE per object, each without a name (left
    // out of the request, as empty) and the object as oldObject: the estimate finds the object
    // by that name.
    let set = pack::builtin().unwrap();
    let stored = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "rabbit-server", "namespace": "mq"}});
    let mut review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "3b0c8f1e-2d7a-4c35-9a57-6b4f3e2d1c0a",
        "kind": {"group": "apps", "version": "v1", "kind": "StatefulSet"},
        "resource": {"group": "apps", "version": "v1", "resource": "statefulsets"},
        "namespace": "mq", "operation": "DELETE",
        "userInfo": {"username": "system:serviceaccount:mq:rabbitmq-operator", "groups": ["system:serviceaccounts"]},
        "object": null, "oldObject": stored, "dryRun": false}});
    let typed = Request::from_review(review.clone()).unwrap();
    let text = serde_json::to_vec(&review).unwrap();
    let wire = policies_cel::WireReview::read(&text).unwrap().into_request();
    for request in [typed, wire] {
        assert_eq!(
            request.admission.name, "",
            "request.name stays what kube-apiserver sent"
        );
        assert_eq!(request.target_name(), "rabbit-server");
        let decision = evaluate(&set, &request, scenes());
        assert!(
            denied_by(&decision).contains(&"suture-statefulset-quorum"),
            "{:?}",
            decision.denials
        );
    }
    // A CREATE with generateName is unnamed too, and has no oldObject.
    review["request"]["operation"] = json!("CREATE");
    review["request"]["object"] = review["request"]["oldObject"].take();
    assert_eq!(Request::from_review(review).unwrap().target_name(), "");
}

#[test]
fn the_control_plane_is_not_judged() {
    let set = pack::builtin().unwrap();
    let request = delete_statefulset(
        "mq",
        "rabbit-server",
        "system:serviceaccount:kube-system:generic-garbage-collector",
    );
    let decision = evaluate(&set, &request, scenes());
    assert!(decision.allowed, "{:?}", decision.denials);
    let not_matched = decision
        .policies
        .iter()
        .all(|result| matches!(result.outcome, policies_cel::eval::Outcome::NotMatched));
    assert!(not_matched, "no pack policy applies: {:?}", decision.policies);
}

#[test]
fn params_switch_a_policy_off_and_lower_the_cascade_limit() {
    let tuning = r#"
apiVersion: suture.dev/v1alpha1
kind: SafetyPackParams
metadata: {name: default}
spec:
  maxDeletedObjects: 3
  disabledPolicies: [suture-availability, suture-statefulset-quorum, suture-disruption-budget]
"#;
    let set = pack::builtin_loader()
        .unwrap()
        .add_params_str("tuning.yaml", tuning)
        .unwrap()
        .finish()
        .unwrap();
    let request = delete_statefulset(
        "coordination",
        "zk",
        "system:serviceaccount:coordination:zk-operator",
    );
    let decision = evaluate(&set, &request, scenes());
    assert_eq!(denied_by(&decision), ["suture-blast-radius"]);
    assert!(
        decision.denials[0]
            .message
            .contains("more than the 3 allowed at once"),
        "{}",
        decision.denials[0].message
    );
}

#[test]
fn without_a_model_the_pack_fails_closed_and_says_why() {
    // The pack's failurePolicy is Fail: a disruptive request it cannot estimate is refused,
    // with a message naming the missing model; requests it does not match are untouched.
    let set = pack::builtin().unwrap();
    let request = delete_statefulset(
        "mq",
        "rabbit-server",
        "system:serviceaccount:mq:rabbitmq-operator",
    );
    let decision = evaluate(&set, &request, &EmptyCluster);
    assert!(!decision.allowed);
    assert!(
        decision.denials[0].message.contains("no cluster model"),
        "{}",
        decision.denials[0].message
    );

    let create =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "mq"}});
    let request = review(
        "CREATE",
        "system:serviceaccount:mq:rabbitmq-operator",
        ("", "v1", "ConfigMap"),
        "configmaps",
        Json::Null,
        create,
    );
    let decision = evaluate(&set, &request, &EmptyCluster);
    assert!(decision.allowed && decision.warnings.is_empty(), "{decision:?}");
}

#[test]
fn the_params_crd_names_the_kind_the_policies_take() {
    let crd = params::crd();
    assert_eq!(crd.spec.names.kind, params::KIND);
    let text = pack::files().iter().map(|(_, text)| *text).collect::<String>();
    assert_eq!(
        text.matches(&format!("kind: {}", params::KIND)).count(),
        pack::files().len()
    );
}
