//! `evaluate()` on hand-built policies: matching, bindings, actions, failure policies, params,
//! subjects and messages, compared with what kube-apiserver does.

use std::sync::Arc;

use k8s_openapi::api::admissionregistration::v1::{MatchResources, NamedRuleWithOperations};
use policies_cel::cel::Env;
use policies_cel::eval::Outcome;
use policies_cel::policy::{
    Action, AuditAnnotation, Binding, FailurePolicy, NamedExpr, ParamRefSpec, Policy, PolicyKind, PolicySet,
    SourceRef, Subjects, Validation,
};
use policies_cel::{EmptyCluster, Request, evaluate};
use serde_json::{Value as Json, json};

fn program(env: &Env, source: &str) -> Arc<policies_cel::cel::Program> {
    Arc::new(env.compile(source).unwrap_or_else(|e| panic!("{}", e.render())))
}

fn validation(source: &str, message: Option<&str>, message_expression: Option<&str>) -> Validation {
    let env = Env::admission().with_variables(["replicas"]);
    Validation {
        program: program(&env, source),
        message: message.map(str::to_owned),
        message_expression: message_expression.map(|m| program(&env, m)),
        reason: None,
    }
}

fn policy(name: &str, kind: PolicyKind, validations: Vec<Validation>) -> Policy {
    Policy {
        name: name.into(),
        kind,
        source: SourceRef::default(),
        match_constraints: None,
        match_conditions: vec![],
        variables: vec![NamedExpr {
            name: "replicas".into(),
            program: program(&Env::admission(), "object.?spec.?replicas.orValue(1)"),
        }],
        validations,
        audit_annotations: vec![],
        failure_policy: FailurePolicy::Fail,
        param_kind: None,
        subjects: None,
        actions: vec![],
        uses_impact: false,
        allow_annotation: None,
        severity: None,
    }
}

fn deployment_rules() -> MatchResources {
    MatchResources {
        resource_rules: Some(vec![NamedRuleWithOperations {
            api_groups: Some(vec!["apps".into()]),
            api_versions: Some(vec!["v1".into()]),
            operations: Some(vec!["CREATE".into(), "UPDATE".into()]),
            resources: Some(vec!["deployments".into()]),
            ..Default::default()
        }]),
        ..Default::default()
    }
}

fn review(operation: &str, user: &str, object: Json) -> Request {
    Request::from_review(json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "namespace": "prod",
            "name": "web",
            "operation": operation,
            "userInfo": {"username": user, "groups": ["system:serviceaccounts", "system:authenticated"]},
            "object": object,
            "oldObject": null,
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}
        }
    }))
    .unwrap()
}

fn deployment(replicas: i64) -> Json {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": "prod", "labels": {"app": "web"}},
           "spec": {"replicas": replicas}})
}

fn set(policies: Vec<Policy>, bindings: Vec<Binding>) -> PolicySet {
    PolicySet {
        policies: policies.into_iter().map(Arc::new).collect(),
        bindings,
        implicit_bindings: true,
        ..Default::default()
    }
}

const OPERATOR: &str = "system:serviceaccount:prod:web-operator";

#[test]
fn a_false_validation_denies_with_its_message_expression() {
    let mut p = policy(
        "max-replicas",
        PolicyKind::ValidatingAdmissionPolicy,
        vec![validation(
            "variables.replicas <= 5",
            Some("too many"),
            Some("'replicas ' + string(variables.replicas) + ' > 5'"),
        )],
    );
    p.match_constraints = Some(deployment_rules());
    let decision = evaluate(
        &set(vec![p], vec![]),
        &review("CREATE", OPERATOR, deployment(7)),
        &EmptyCluster,
    );
    assert!(!decision.allowed);
    assert_eq!(decision.denials.len(), 1);
    assert_eq!(decision.denials[0].message, "replicas 7 > 5");
    assert_eq!(decision.denials[0].validation, Some(0));
    assert_eq!(decision.denials[0].reason, "Invalid");
    assert_eq!(decision.status_code(), 422);

    let allowed = evaluate(
        &set(
            vec![policy(
                "max-replicas",
                PolicyKind::ValidatingAdmissionPolicy,
                vec![validation("variables.replicas <= 5", None, None)],
            )],
            vec![],
        ),
        &review("CREATE", OPERATOR, deployment(3)),
        &EmptyCluster,
    );
    assert!(allowed.allowed);
    assert_eq!(allowed.policies[0].outcome, Outcome::Passed);
}

#[test]
fn messages_fall_back_like_kubernetes() {
    let p = policy(
        "p",
        PolicyKind::ValidatingAdmissionPolicy,
        vec![
            validation("false", Some("static"), Some("''")),
            validation("object.spec.replicas < 0", None, None),
            validation("false", Some("static"), Some("'two\\nlines'")),
        ],
    );
    let decision = evaluate(
        &set(vec![p], vec![]),
        &review("CREATE", OPERATOR, deployment(1)),
        &EmptyCluster,
    );
    let messages: Vec<&str> = decision.denials.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        ["static", "failed expression: object.spec.replicas < 0", "static"]
    );
}

#[test]
fn requests_outside_match_constraints_are_not_judged() {
    let mut p = policy(
        "p",
        PolicyKind::ValidatingAdmissionPolicy,
        vec![validation("false", None, None)],
    );
    p.match_constraints = Some(MatchResources {
        resource_rules: Some(vec![NamedRuleWithOperations {
            api_groups: Some(vec!["apps".into()]),
            api_versions: Some(vec!["*".into()]),
            operations: Some(vec!["DELETE".into()]),
            resources: Some(vec!["statefulsets".into()]),
            ..Default::default()
        }]),
        ..Default::default()
    });
    let decision = evaluate(
        &set(vec![p], vec![]),
        &review("CREATE", OPERATOR, deployment(1)),
        &EmptyCluster,
    );
    assert!(decision.allowed);
    assert_eq!(decision.policies[0].outcome, Outcome::NotMatched);
}

#[test]
fn binding_actions_decide_between_deny_warn_and_audit() {
    let p = policy(
        "p",
        PolicyKind::ValidatingAdmissionPolicy,
        vec![validation("false", Some("nope"), None)],
    );
    let binding = |name: &str, actions: Vec<Action>| Binding {
        name: name.into(),
        policy_name: "p".into(),
        source: SourceRef::default(),
        validation_actions: actions,
        match_resources: None,
        param_ref: None,
    };
    let decision = evaluate(
        &set(
            vec![p],
            vec![binding("warn-and-audit", vec![Action::Warn, Action::Audit])],
        ),
        &review("CREATE", OPERATOR, deployment(1)),
        &EmptyCluster,
    );
    assert!(decision.allowed);
    assert_eq!(
        decision.warnings,
        ["Validation failed for ValidatingAdmissionPolicy 'p' with binding 'warn-and-audit': nope"]
    );
    let audit: Json = serde_json::from_str(
        &decision.audit_annotations["validation.policy.admission.k8s.io/validation_failure"],
    )
    .unwrap();
    assert_eq!(audit[0]["message"], "nope");
    assert_eq!(audit[0]["expressionIndex"], 0);
    assert_eq!(audit[0]["validationActions"], json!(["Warn", "Audit"]));
}

#[test]
fn bound_policies_are_not_implicitly_bound_again() {
    let p = policy(
        "p",
        PolicyKind::ValidatingAdmissionPolicy,
        vec![validation("false", Some("nope"), None)],
    );
    let mut rules = deployment_rules();
    rules.resource_rules.as_mut().unwrap()[0].operations = Some(vec!["DELETE".into()]);
    let binding = Binding {
        name: "only-deletes".into(),
        policy_name: "p".into(),
        source: SourceRef::default(),
        validation_actions: vec![Action::Deny],
        match_resources: Some(rules),
        param_ref: None,
    };
    let decision = evaluate(
        &set(vec![p], vec![binding]),
        &review("CREATE", OPERATOR, deployment(1)),
        &EmptyCluster,
    );
    assert!(
        decision.allowed,
        "the binding's matchResources exclude CREATE: {decision:?}"
    );
    assert_eq!(decision.policies.len(), 1);
}

#[test]
fn errors_follow_the_failure_policy() {
    let mut failing = policy(
        "fail",
        PolicyKind::ValidatingAdmissionPolicy,
        vec![validation("object.spec.missing == 1", None, None)],
    );
    let decision = evaluate(
        &set(vec![failing.clone()], vec![]),
        &review("CREATE", OPERATOR, deployment(1)),
        &EmptyCluster,
    );
    assert!(!decision.allowed);
    assert_eq!(
        decision.denials[0].message,
        "expression 'object.spec.missing == 1' resulted in error: no such key: missing"
    );

    failing.failure_policy = FailurePolicy::Ignore;
    let decision = evaluate(
        &set(vec![failing], vec![]),
        &review("CREATE", OPERATOR, deployment(1)),
        &EmptyCluster,
    );
    assert!(decision.allowed);
    assert!(matches!(
        &decision.policies[0].outcome,
        Outcome::Error { ignored: true, .. }
    ));
}

#[test]
fn a_false_match_condition_skips_even_when_another_errors() {
    let mut p = policy(
        "p",
        PolicyKind::ValidatingAdmissionPolicy,
        vec![validation("false", None, None)],
    );
    let env = Env::admission();
    p.match_conditions = vec![
        NamedExpr {
            name: "errors".into(),
            program: program(&env, "object.nothing"),
        },
        NamedExpr {
            name: "is-not-web".into(),
            program: program(&env, "object.metadata.name != 'web'"),
        },
    ];
    let decision = evaluate(
        &set(vec![p.clone()], vec![]),
        &review("CREATE", OPERATOR, deployment(1)),
        &EmptyCluster,
    );
    assert!(decision.allowed);
    assert_eq!(
        decision.policies[0].outcome,
        Outcome::Skipped {
            condition: "is-not-web".into()
        }
    );

    p.match_conditions.pop();
    let decision = evaluate(
        &set(vec![p], vec![]),
        &review("CREATE", OPERATOR, deployment(1)),
        &EmptyCluster,
    );
    assert!(!decision.allowed, "an erroring condition under Fail denies");
    assert_eq!(decision.denials[0].validation, None);
}

#[test]
fn safety_policies_judge_only_their_subjects() {
    let mut p = policy(
        "operators-only",
        PolicyKind::SafetyPolicy,
        vec![validation("false", Some("no"), None)],
    );
    p.subjects = Some(Subjects {
        service_accounts: vec!["prod/*-operator".into()],
        exclude_service_accounts: vec!["prod/trusted-operator".into()],
        ..Default::default()
    });
    p.actions = vec![Action::Deny];
    let s = set(vec![p], vec![]);
    let judged = |user: &str| !evaluate(&s, &review("CREATE", user, deployment(1)), &EmptyCluster).allowed;
    assert!(judged(OPERATOR));
    assert!(!judged("system:serviceaccount:prod:trusted-operator"));
    assert!(!judged("kubernetes-admin"));
    let decision = evaluate(&s, &review("CREATE", OPERATOR, deployment(1)), &EmptyCluster);
    assert_eq!(
        decision.status_message().as_deref(),
        Some("SafetyPolicy 'operators-only' denied request: no")
    );
}

#[test]
fn params_come_from_the_binding_param_ref() {
    let env = Env::admission().with_variables(["replicas"]);
    let mut p = policy(
        "limit",
        PolicyKind::ValidatingAdmissionPolicy,
        vec![Validation {
            program: program(&env, "variables.replicas <= params.data.max"),
            message: None,
            message_expression: Some(program(&env, "'at most ' + string(params.data.max)")),
            reason: Some("Forbidden".into()),
        }],
    );
    p.param_kind = Some(("v1".into(), "ConfigMap".into()));
    let limits = |name: &str, max: i64| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "prod"}, "data": {"max": max}});
    let binding = |param: &str, deny: bool| Binding {
        name: "b".into(),
        policy_name: "limit".into(),
        source: SourceRef::default(),
        validation_actions: vec![Action::Deny],
        match_resources: None,
        param_ref: Some(ParamRefSpec {
            name: Some(param.into()),
            parameter_not_found_action_deny: deny,
            ..Default::default()
        }),
    };
    let mut s = set(vec![p], vec![binding("strict", true)]);
    s.params = vec![limits("strict", 2), limits("loose", 10)].into();
    let decision = evaluate(&s, &review("CREATE", OPERATOR, deployment(3)), &EmptyCluster);
    assert_eq!(decision.denials[0].message, "at most 2");
    assert_eq!(decision.status_code(), 403);

    s.bindings = vec![binding("absent", true)];
    let decision = evaluate(&s, &review("CREATE", OPERATOR, deployment(3)), &EmptyCluster);
    assert!(
        decision.denials[0]
            .message
            .starts_with("no params found for policy binding"),
        "{decision:?}"
    );

    s.bindings = vec![binding("absent", false)];
    assert!(evaluate(&s, &review("CREATE", OPERATOR, deployment(3)), &EmptyCluster).allowed);
}

#[test]
fn audit_annotations_are_prefixed_with_the_policy() {
    let mut p = policy("p", PolicyKind::ValidatingAdmissionPolicy, vec![]);
    p.audit_annotations = vec![
        AuditAnnotation {
            key: "replicas".into(),
            value_expression: program(&Env::admission(), "string(object.spec.replicas)"),
        },
        AuditAnnotation {
            key: "skipped".into(),
            value_expression: program(&Env::admission(), "null"),
        },
    ];
    let decision = evaluate(
        &set(vec![p], vec![]),
        &review("CREATE", OPERATOR, deployment(4)),
        &EmptyCluster,
    );
    assert_eq!(
        decision.audit_annotations.get("p/replicas").map(String::as_str),
        Some("4")
    );
    assert!(!decision.audit_annotations.contains_key("p/skipped"));
}

#[test]
fn a_runaway_expression_is_stopped_and_follows_the_failure_policy() {
    let env = Env::admission().with_variables(["replicas"]);
    let p = policy(
        "runaway",
        PolicyKind::ValidatingAdmissionPolicy,
        vec![Validation {
            program: program(
                &env,
                "lists.range(2000).all(x, lists.range(2000).all(y, lists.range(2000).all(z, true)))",
            ),
            message: None,
            message_expression: None,
            reason: None,
        }],
    );
    let started = std::time::Instant::now();
    let decision = evaluate(
        &set(vec![p], vec![]),
        &review("CREATE", OPERATOR, deployment(1)),
        &EmptyCluster,
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert!(!decision.allowed);
    assert!(
        decision.denials[0].message.contains("cost limit exceeded"),
        "{}",
        decision.denials[0].message
    );
}

#[test]
fn reviews_that_are_not_admission_reviews_are_refused() {
    use policies_cel::RequestError;
    assert!(matches!(
        Request::from_review(json!({"apiVersion": "v1", "kind": "Pod"})),
        Err(RequestError::NotAReview { .. })
    ));
    assert!(matches!(
        Request::from_review(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"})),
        Err(RequestError::NoRequest)
    ));
    let malformed = Request::from_review(
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": 5}}),
    );
    assert!(
        matches!(malformed, Err(RequestError::Malformed { .. })),
        "{malformed:?}"
    );
}

fn escapable(annotations: Json) -> Request {
    let mut object = deployment(0);
    object["metadata"]["annotations"] = annotations;
    review("CREATE", OPERATOR, object)
}

#[test]
fn the_escape_hatch_admits_with_a_warning_and_an_audit_record() {
    let mut p = policy(
        "no-zero",
        PolicyKind::SafetyPolicy,
        vec![validation("variables.replicas > 0", Some("zero replicas"), None)],
    );
    p.actions = vec![Action::Deny];
    p.allow_annotation = Some("suture.dev/allow-disruption".into());
    let s = set(vec![p], vec![]);

    let denied = evaluate(&s, &escapable(json!({})), &EmptyCluster);
    assert!(!denied.allowed);

    let blank = evaluate(
        &s,
        &escapable(json!({"suture.dev/allow-disruption": "  "})),
        &EmptyCluster,
    );
    assert!(!blank.allowed, "an empty reason is no reason");

    let allowed = evaluate(
        &s,
        &escapable(json!({"suture.dev/allow-disruption": "migration OPS-142"})),
        &EmptyCluster,
    );
    assert!(allowed.allowed);
    assert_eq!(
        allowed.warnings,
        [
            "SafetyPolicy 'no-zero' would deny this request, but the object is annotated suture.dev/allow-disruption=\"migration OPS-142\": zero replicas"
        ]
    );
    assert_eq!(
        allowed
            .audit_annotations
            .get("no-zero/allowed-by")
            .map(String::as_str),
        Some("suture.dev/allow-disruption=migration OPS-142")
    );
    assert_eq!(
        allowed.policies[0].outcome,
        Outcome::Failed { validations: vec![0] },
        "the policy still failed"
    );
}
