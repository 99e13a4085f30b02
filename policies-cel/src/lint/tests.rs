//! One test per kind of finding, through the public entry point: the code, line and column each
//! is reported at.

use super::*;

/// A catalog that knows `deployments` in `apps` only.
struct Apps;

impl ResourceCatalog for Apps {
    fn groups_serving(&self, resource: &str) -> Option<Vec<String>> {
        (resource == "deployments").then(|| vec!["apps".to_owned()])
    }

    fn knows_group(&self, group: &str) -> bool {
        matches!(group, "" | "apps")
    }
}

fn lint(text: &str) -> Vec<(Code, Severity, usize, usize)> {
    let mut linter = Linter::new();
    linter.add_str("p.yaml", text);
    linter
        .run(&Apps)
        .findings
        .into_iter()
        .map(|f| (f.code, f.severity, f.line, f.column))
        .collect()
}

const VAP: &str = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: p\nspec:\n";

fn vap(spec: &str) -> String {
    format!("{VAP}{spec}")
}

#[test]
fn a_clean_policy_has_no_finding() {
    let text = vap(
        "  validations:\n  - expression: object.spec.replicas <= 5\n    messageExpression: \"'at most ' + string(5)\"\n",
    );
    assert_eq!(lint(&text), []);
}

#[test]
fn every_compile_error_is_reported() {
    let text = vap(
        "  matchConditions:\n  - name: a\n    expression: objekt.a\n  validations:\n  - expression: |\n      object.a &&\n        flase\n",
    );
    assert_eq!(
        lint(&text),
        [
            (Code::CompileError, Severity::Error, 8, 17),
            (Code::CompileError, Severity::Error, 12, 9),
        ]
    );
}

#[test]
fn unknown_fields() {
    let text = vap("  validations:\n  - expression: object.a == 1\n    mesage: x\n");
    assert_eq!(lint(&text), [(Code::UnknownField, Severity::Error, 8, 5)]);
}

#[test]
fn yaml_syntax_and_invalid_fields() {
    assert_eq!(lint("a: [\n"), [(Code::YamlSyntax, Severity::Error, 2, 1)]);
    let text = vap("  failurePolicy: Sometimes\n  validations:\n  - expression: object.a == 1\n");
    assert_eq!(lint(&text), [(Code::InvalidField, Severity::Error, 6, 3)]);
}

#[test]
fn never_true_and_always_true_validations() {
    let text = vap(
        "  validations:\n  - expression: object.n < 0 && object.n > 5\n  - expression: 'true'\n  - expression: 'false'\n  - expression: 'false'\n    message: refused on purpose\n",
    );
    assert_eq!(
        lint(&text),
        [
            (Code::NeverTrue, Severity::Error, 7, 30),
            (Code::AlwaysTrue, Severity::Warning, 8, 18),
            (Code::NeverTrue, Severity::Warning, 9, 18),
        ]
    );
}

#[test]
fn match_conditions_decided_in_advance() {
    let text = vap(
        "  matchConditions:\n  - name: never\n    expression: \"1 > 2\"\n  - name: always\n    expression: \"!false\"\n  validations:\n  - expression: object.a == 1\n",
    );
    assert_eq!(
        lint(&text),
        [
            (Code::UnreachableMatch, Severity::Error, 8, 20),
            (Code::AlwaysTrue, Severity::Warning, 10, 18),
        ]
    );
}

#[test]
fn rules_that_never_match() {
    let text = vap(
        "  matchConstraints:\n    resourceRules:\n    - apiGroups: [\"\"]\n      apiVersions: [\"v1\"]\n      operations: [\"CONNECT\"]\n      resources: [\"deployments\"]\n  validations:\n  - expression: object.metadata.name == 'a'\n",
    );
    assert_eq!(
        lint(&text),
        [
            (Code::UnreachableMatch, Severity::Error, 7, 5),
            (Code::UnreachableMatch, Severity::Warning, 10, 20),
        ]
    );
    let text = vap(
        "  matchConstraints:\n    resourceRules:\n    - apiGroups: [\"\"]\n      apiVersions: [\"v1\"]\n      operations: [\"UPDATE\"]\n      resources: [\"deployments\", \"pods\"]\n  validations:\n  - expression: object.metadata.name == 'a'\n",
    );
    assert_eq!(lint(&text), [(Code::UnreachableMatch, Severity::Warning, 11, 19)]);
    let text = vap(
        "  matchConstraints:\n    resourceRules:\n    - apiGroups: [\"apps\"]\n      apiVersions: [\"v1\"]\n      operations: [\"UPDATE\"]\n      resources: [\"deployments\"]\n    excludeResourceRules:\n    - apiGroups: [\"*\"]\n      apiVersions: [\"*\"]\n      operations: [\"UPDATE\", \"DELETE\"]\n      resources: [\"*\"]\n  validations:\n  - expression: object.metadata.name == 'a'\n",
    );
    assert_eq!(lint(&text), [(Code::UnreachableMatch, Severity::Error, 12, 5)]);
    let text = vap(
        "  matchConstraints:\n    resourceRules: []\n  validations:\n  - expression: object.metadata.name == 'a'\n",
    );
    assert_eq!(lint(&text), [(Code::UnreachableMatch, Severity::Error, 7, 5)]);
    // A group the catalog does not know may serve a resource of the same name (Knative's
    // `services`): not reported.
    let text = vap(
        "  matchConstraints:\n    resourceRules:\n    - apiGroups: [\"serving.knative.dev\"]\n      apiVersions: [\"v1\"]\n      operations: [\"UPDATE\"]\n      resources: [\"deployments\"]\n  validations:\n  - expression: object.metadata.name == 'a'\n",
    );
    assert_eq!(lint(&text), []);
    // A SafetyPolicy with no rules judges every request, as `evaluate()` does: nothing to say.
    let safety = "apiVersion: suture.dev/v1alpha1\nkind: SafetyPolicy\nmetadata:\n  name: s\nspec:\n  matchConstraints:\n    resourceRules: []\n  validations:\n  - expression: object.metadata.name == 'a'\n    message: no\n";
    assert_eq!(lint(safety), []);
}

#[test]
fn bindings_and_unbound_policies() {
    let binding = "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata:\n  name: b\nspec:\n  policyName: q\n  validationActions: [Deny]\n";
    let text = format!(
        "{}{binding}",
        vap("  validations:\n  - expression: object.a == 1\n")
    );
    assert_eq!(
        lint(&text),
        [
            (Code::UnboundPolicy, Severity::Warning, 4, 3),
            (Code::UnreachableMatch, Severity::Error, 14, 3),
        ]
    );
}

#[test]
fn a_binding_of_a_policy_that_fails_to_load_is_not_reported_as_unknown() {
    let binding = "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata:\n  name: b\nspec:\n  policyName: p\n  validationActions: [Deny]\n";
    let text = format!(
        "{}{binding}",
        vap("  validations:\n  - expression: objekt.a == 1\n")
    );
    let codes: Vec<Code> = lint(&text).into_iter().map(|(code, ..)| code).collect();
    assert_eq!(codes, [Code::CompileError]);
}

#[test]
fn a_binding_that_shares_no_request_with_its_policy() {
    let rules = |group: &str, resource: &str| {
        format!(
            "    resourceRules:\n    - apiGroups: [\"{group}\"]\n      apiVersions: [\"v1\"]\n      operations: [\"UPDATE\"]\n      resources: [\"{resource}\"]\n"
        )
    };
    let policy = vap(&format!(
        "  matchConstraints:\n{}  validations:\n  - expression: object.metadata.name == 'a'\n",
        rules("apps", "deployments")
    ));
    let binding = |resource: &str| {
        format!(
            "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata:\n  name: b\nspec:\n  policyName: p\n  validationActions: [Deny]\n  matchResources:\n{}",
            rules("apps", resource)
        )
    };
    assert_eq!(
        lint(&format!("{policy}{}", binding("statefulsets"))),
        [(Code::UnreachableMatch, Severity::Error, 23, 5)]
    );
    assert_eq!(lint(&format!("{policy}{}", binding("deployments"))), []);
}

#[test]
fn costly_expressions() {
    let text = vap(
        "  validations:\n  - expression: object.items.all(a, object.items.exists(b, a == b))\n  - expression: object.items.all(a, a.matches(params.re))\n",
    );
    assert_eq!(
        lint(&text),
        [
            (Code::Cost, Severity::Warning, 7, 30),
            (Code::Cost, Severity::Warning, 8, 39),
        ]
    );
}

#[test]
fn messages_that_are_not_strings() {
    let text = vap("  validations:\n  - expression: object.a == 1\n    messageExpression: object.n > 1\n");
    assert_eq!(lint(&text), [(Code::MessageType, Severity::Error, 8, 24)]);
    let mut linter = Linter::new();
    linter.add_str("p.yaml", &text);
    let report = linter.run(&Apps);
    assert_eq!(
        report.findings[0].message,
        "must evaluate to string, but its type is bool"
    );
}

#[test]
fn validations_that_are_not_bool() {
    // `object` is dyn, so `object.a` is too: kube-apiserver refuses it as a validation.
    let text = vap("  validations:\n  - expression: object.a\n  - expression: object.a == true\n");
    assert_eq!(lint(&text), [(Code::ResultType, Severity::Error, 7, 17)]);
}

#[test]
fn type_errors_are_compile_errors_with_their_caret() {
    let text = vap("  validations:\n  - expression: \"'abc'.substring(1, 2, 3) == 'b'\"\n");
    let mut linter = Linter::new();
    linter.add_str("p.yaml", &text);
    let report = linter.run(&Apps);
    let finding = &report.findings[0];
    assert_eq!(finding.code, Code::CompileError);
    assert_eq!(
        finding.message,
        "found no matching overload for 'substring' applied to 'string.(int, int, int)'"
    );
    assert_eq!((finding.line, finding.column), (7, 24));
}

#[test]
fn older_versions_and_suture_extensions() {
    let text = "apiVersion: admissionregistration.k8s.io/v1beta1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: p\nspec:\n  validations:\n  - expression: impact.summary.deleted == 0\n";
    assert_eq!(
        lint(text),
        [
            (Code::DeprecatedApiVersion, Severity::Warning, 1, 1),
            (Code::SutureExtension, Severity::Warning, 5, 1),
        ]
    );
}

#[test]
fn duplicates_and_unknown_kinds() {
    let text = format!(
        "{}---\n{}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\n",
        vap("  validations:\n  - expression: object.a == 1\n"),
        vap("  validations:\n  - expression: object.b == 1\n")
    );
    assert_eq!(
        lint(&text),
        [
            (Code::DuplicateName, Severity::Error, 12, 3),
            (Code::UnknownKind, Severity::Error, 17, 1),
        ]
    );
}

#[test]
fn test_suites_beside_policies_are_skipped() {
    let text = format!(
        "{}---\napiVersion: suture.dev/v1alpha1\nkind: SutureTest\nmetadata: {{name: t}}\n",
        vap("  validations:\n  - expression: object.a == 1\n")
    );
    assert_eq!(lint(&text), []);
}

#[test]
fn the_builtin_pack_is_clean() {
    let mut linter = Linter::new();
    linter.add_builtin();
    let report = linter.run(&Apps);
    assert_eq!(report.findings, []);
    assert_eq!(report.policies, crate::pack::files().len());
}

#[test]
fn json_the_yaml_parser_refuses_is_linted_as_the_loader_reads_it() {
    // Valid JSON with a tab between a colon and a number, which the YAML parser refuses: the
    // loader reads it as JSON, and so does the lint.
    let text = "{\n\t\"apiVersion\": \"admissionregistration.k8s.io/v1\",\n\t\"kind\": \"ValidatingAdmissionPolicy\",\n\t\"metadata\": {\"name\": \"p\", \"generation\":\t1},\n\t\"spec\": {\n\t\t\"validations\": [{\"expression\": \"1 == 2\"}]\n\t}\n}\n";
    assert!(crate::policy::marked::parse(text).is_err());
    let mut linter = Linter::new();
    linter.add_str("p.json", text);
    let report = linter.run(&Apps);
    let found: Vec<(Code, Option<&str>)> = report
        .findings
        .iter()
        .map(|f| (f.code, f.policy.as_deref()))
        .collect();
    assert_eq!(found, [(Code::NeverTrue, Some("p"))]);
    assert_eq!(report.policies, 1);
    assert_eq!(report.expressions, 1);
}

#[test]
fn fields_a_matched_kinds_schema_does_not_declare() {
    let rules = "  matchConstraints:\n    resourceRules:\n    - apiGroups: [\"apps\"]\n      apiVersions: [\"v1\"]\n      operations: [\"UPDATE\"]\n      resources: [\"deployments\", \"statefulsets\"]\n";
    let text = vap(&format!(
        "{rules}  validations:\n  - expression: object.spec.replicsa <= 5 && has(oldObject.spec.template.spec.hostNetwork)\n  - expression: \"object.spec.template.spec.containers.all(c, c.?imgae.orValue('') != '')\"\n"
    ));
    assert_eq!(
        lint(&text),
        [
            (Code::SchemaField, Severity::Warning, 13, 29),
            (Code::SchemaField, Severity::Warning, 14, 65),
        ]
    );
    let mut linter = Linter::new();
    linter.add_str("p.yaml", &text);
    let report = linter.run(&Apps);
    assert_eq!(
        report.findings[0].message,
        "undefined field 'replicsa' (Deployment apps/v1, StatefulSet apps/v1)"
    );
    assert_eq!(
        report.findings[1].message,
        "undefined field 'imgae' (Deployment apps/v1, StatefulSet apps/v1)"
    );
    // Kubernetes only warns: the policy loads, unchanged.
    assert!(
        crate::policy::Loader::new()
            .add_str("p.yaml", &text)
            .and_then(|l| l.finish())
            .is_ok()
    );
}

#[test]
fn a_field_missing_from_one_matched_kind_names_that_kind() {
    let text = vap(
        "  matchConstraints:\n    resourceRules:\n    - apiGroups: [\"apps\"]\n      apiVersions: [\"v1\"]\n      operations: [\"UPDATE\"]\n      resources: [\"daemonsets\", \"deployments\"]\n  validations:\n  - expression: object.spec.replicas > 0\n",
    );
    let mut linter = Linter::new();
    linter.add_str("p.yaml", &text);
    let report = linter.run(&Apps);
    let messages: Vec<&str> = report.findings.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(messages, ["undefined field 'replicas' (DaemonSet apps/v1)"]);
}

#[test]
fn a_policy_matched_by_wildcards_or_subresources_is_not_typed() {
    for rule in [
        "    - apiGroups: [\"*\"]\n      apiVersions: [\"v1\"]\n      operations: [\"*\"]\n      resources: [\"deployments\"]\n",
        "    - apiGroups: [\"apps\"]\n      apiVersions: [\"*\"]\n      operations: [\"*\"]\n      resources: [\"deployments\"]\n",
        "    - apiGroups: [\"apps\"]\n      apiVersions: [\"v1\"]\n      operations: [\"*\"]\n      resources: [\"*\", \"deployments/scale\"]\n",
        "    - apiGroups: [\"example.com\"]\n      apiVersions: [\"v1\"]\n      operations: [\"*\"]\n      resources: [\"widgets\"]\n",
    ] {
        let text = vap(&format!(
            "  matchConstraints:\n    resourceRules:\n{rule}  validations:\n  - expression: object.spec.replicsa <= 5\n"
        ));
        assert_eq!(lint(&text), [], "{rule}");
    }
}

#[test]
fn the_builtin_pack_is_checked_against_the_kinds_it_names() {
    let mut typed = Vec::new();
    for (name, text) in crate::pack::files() {
        let value: serde_json::Value = serde_yaml_ng::from_str(text).unwrap();
        let constraints = value["spec"]["matchConstraints"].clone();
        let Ok(constraints) = serde_json::from_value(constraints) else {
            continue;
        };
        let kinds = kinds::kinds_to_check(&constraints, &crds::Crds::default());
        if !kinds.is_empty() {
            typed.push(*name);
        }
    }
    assert!(typed.len() >= 3, "{typed:?}");
}
