//! The loader: every shape of good input, and bad input whose message names the file, the line,
//! the document and the field.

use std::path::{Path, PathBuf};

use policies_cel::policy::{Action, FailurePolicy, LoadError, Loader, PolicyKind, PolicySet, load_paths};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/policies")
        .join(rel)
}

fn load(rel: &str) -> PolicySet {
    load_paths(&[&fixture(rel)]).unwrap_or_else(|e| panic!("{rel} should load:\n{e}"))
}

fn load_err(rel: &str) -> LoadError {
    match load_paths(&[&fixture(rel)]) {
        Ok(set) => panic!("{rel} should not load, but gave {} policies", set.len()),
        Err(error) => error,
    }
}

/// Asserts the message names `file:line` and contains every one of `parts`.
fn assert_message(error: &LoadError, file_line: &str, parts: &[&str]) {
    let message = error.to_string();
    assert!(
        message.contains(file_line),
        "expected `{file_line}` in:\n{message}"
    );
    for part in parts {
        assert!(message.contains(part), "expected `{part}` in:\n{message}");
    }
}

// ---------------------------------------------------------------------------------------------
// Good input.

#[test]
fn multi_document_vap_binding_and_params() {
    let set = load("good/replicas-multidoc.yaml");
    assert!(set.implicit_bindings);
    assert_eq!(set.len(), 1);
    let policy = set
        .policy("max-replicas")
        .unwrap_or_else(|| panic!("no max-replicas"));
    assert_eq!(policy.kind, PolicyKind::ValidatingAdmissionPolicy);
    assert_eq!(
        policy.param_kind,
        Some(("rules.example.com/v1".to_owned(), "ReplicaLimit".to_owned()))
    );
    assert_eq!(policy.failure_policy, FailurePolicy::Fail);
    assert_eq!(policy.match_conditions.len(), 1);
    assert_eq!(policy.match_conditions[0].name, "not-kube-system");
    let variables: Vec<_> = policy.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(variables, ["replicas", "limit"]);
    assert_eq!(policy.validations.len(), 1);
    assert!(policy.validations[0].message_expression.is_some());
    assert_eq!(policy.validations[0].reason.as_deref(), Some("Invalid"));
    assert_eq!(policy.audit_annotations[0].key, "high-replica-count");
    assert!(policy.match_constraints.is_some());
    assert!(!policy.uses_impact);
    // The policy starts at line 3, in the first document (the leading `---` opens it).
    assert_eq!((policy.source.document, policy.source.line), (1, 3));
    assert!(policy.source.file.ends_with("good/replicas-multidoc.yaml"));

    assert_eq!(set.bindings.len(), 1);
    let binding = &set.bindings[0];
    assert_eq!(binding.name, "max-replicas-prod");
    assert_eq!(binding.policy_name, "max-replicas");
    assert_eq!(binding.validation_actions, [Action::Deny, Action::Audit]);
    assert_eq!((binding.source.document, binding.source.line), (2, 34));
    let param_ref = binding
        .param_ref
        .as_ref()
        .unwrap_or_else(|| panic!("no paramRef"));
    assert_eq!(param_ref.name.as_deref(), Some("prod-limit"));
    assert_eq!(param_ref.namespace.as_deref(), Some("default"));
    assert!(param_ref.parameter_not_found_action_deny);
    assert!(binding.match_resources.is_some());

    // The ReplicaLimit is the policy's paramKind: a param object, not an unknown kind.
    assert_eq!(set.params.len(), 1);
    assert_eq!(set.params[0]["maxReplicas"], 5);
}

#[test]
fn json_safety_policy() {
    let set = load("good/safety.json");
    let policy = set
        .policy("no-pod-deletion-by-ci")
        .unwrap_or_else(|| panic!("not loaded"));
    assert_eq!(policy.kind, PolicyKind::SafetyPolicy);
    assert_eq!(policy.actions, [Action::Warn, Action::Audit]);
    assert_eq!(policy.failure_policy, FailurePolicy::Ignore);
    let subjects = policy.subjects.as_ref().unwrap_or_else(|| panic!("no subjects"));
    assert_eq!(subjects.users, ["ci-*"]);
    assert_eq!(subjects.groups, ["ci:runners"]);
    assert_eq!(subjects.service_accounts, ["ci/*"]);
    assert_eq!(subjects.exclude_service_accounts, ["ci/janitor"]);
    assert_eq!(policy.source.line, 1);
}

#[test]
fn list_items_are_loaded_with_their_lines() {
    let set = load("good/list.yaml");
    let names: Vec<_> = set.policies.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["list-no-latest-tag", "list-no-namespace-delete"]);
    assert_eq!(set.policies[0].source.line, 4);
    assert_eq!(set.policies[1].source.line, 12);
    // A SafetyPolicy without action denies.
    assert_eq!(set.policies[1].actions, [Action::Deny]);
    assert!(set.policies[1].subjects.is_none());
}

#[test]
fn empty_files_hold_no_policy() {
    let set = load("good/empty.yaml");
    assert!(set.is_empty());
    let set = Loader::new()
        .add_str("blank.yaml", "")
        .and_then(Loader::finish)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(set.is_empty());
}

#[test]
fn directories_are_walked_recursively_in_order_ignoring_other_files() {
    let set = load("good/dir");
    let names: Vec<_> = set.policies.iter().map(|p| p.name.as_str()).collect();
    // notes.txt is not YAML and is ignored.
    assert_eq!(names, ["dir-a", "dir-b"]);
    assert!(set.policies[1].source.file.ends_with("nested/b.yml"));
}

#[test]
fn the_whole_good_directory_loads_together() {
    let (set, warnings) = Loader::new()
        .add_path(fixture("good"))
        .and_then(Loader::finish_with_warnings)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(set.len(), 7);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}

#[test]
fn unknown_fields_are_warnings_with_lines() {
    let loader = Loader::new()
        .add_path(fixture("good/unknown-field.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let warnings = loader.warnings().to_vec();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].ends_with("good/unknown-field.yaml:8: unknown field `spec.validatons`"),
        "{}",
        warnings[0]
    );
    let set = loader.finish().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(set.policies[0].validations.len(), 1);
}

#[test]
fn params_files_are_params_whatever_their_kind() {
    let set = Loader::new()
        .add_path(fixture("good/replicas-multidoc.yaml"))
        .and_then(|l| l.add_params_path(fixture("params.yaml")))
        .and_then(Loader::finish)
        .unwrap_or_else(|e| panic!("{e}"));
    let kinds: Vec<_> = set
        .params
        .iter()
        .map(|p| p["kind"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(kinds, ["ReplicaLimit", "ConfigMap", "ReplicaLimit"]);
}

#[test]
fn strings_and_paths_mix_in_one_loader() {
    let text = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: b}\nspec: {policyName: dir-a, validationActions: [Warn]}\n";
    let set = Loader::new()
        .add_path(fixture("good/dir"))
        .and_then(|l| l.add_str("inline.yaml", text))
        .and_then(Loader::finish)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(set.bindings[0].source.file, "inline.yaml");
    assert_eq!(set.bindings[0].validation_actions, [Action::Warn]);
}

#[test]
fn test_suites_beside_policies_are_skipped() {
    // `kubectl suture test` suites live beside the policies they test: `check`, `test`, the
    // gateway and `lint` all skip them (a SutureTest of another group stays an unknown kind).
    let suite = "apiVersion: suture.dev/v1alpha1\nkind: SutureTest\npolicies: [.]\ncases: []\n";
    let policy = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec:\n  validations:\n  - expression: 'true'\n";
    let set = Loader::new()
        .add_str("policies.yaml", &format!("{suite}---\n{policy}"))
        .and_then(Loader::finish)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(set.len(), 1);
    assert!(set.params.is_empty());
    let other = suite.replace("suture.dev/v1alpha1", "example.com/v1");
    let error = Loader::new()
        .add_str("other.yaml", &other)
        .and_then(Loader::finish)
        .err();
    assert!(matches!(error, Some(LoadError::UnknownKind { .. })), "{error:?}");
}

#[test]
fn implicit_bindings_can_be_turned_off() {
    let set = Loader::new()
        .implicit_bindings(false)
        .add_path(fixture("good/dir"))
        .and_then(Loader::finish);
    assert!(!set.unwrap_or_else(|e| panic!("{e}")).implicit_bindings);
}

// ---------------------------------------------------------------------------------------------
// Bad input: the message must say where.

#[test]
fn yaml_syntax_error_names_file_and_line() {
    let error = load_err("bad/syntax.yaml");
    assert!(matches!(error, LoadError::Syntax { .. }), "{error:?}");
    let at = error.source_ref().unwrap_or_else(|| panic!("no source"));
    assert!(at.file.ends_with("bad/syntax.yaml"));
    assert!(
        (8..=9).contains(&at.line),
        "line {} for an unclosed flow sequence opened on line 8",
        at.line
    );
    assert_message(&error, "bad/syntax.yaml:", &["YAML syntax error at column"]);
}

#[test]
fn wrong_type_names_field_path_line_and_document() {
    let error = load_err("bad/wrong-type.yaml");
    assert_message(
        &error,
        "bad/wrong-type.yaml:18 (document 2)",
        &[
            "spec.validations[1].message",
            "invalid type: integer `42`, expected a string",
        ],
    );
    assert_eq!(error.field(), Some("spec.validations[1].message"));
}

#[test]
fn missing_expression_names_the_field() {
    let error = load_err("bad/missing-expression.yaml");
    assert_message(
        &error,
        "bad/missing-expression.yaml:7",
        &["spec.validations[0].expression", "Required value"],
    );
}

#[test]
fn unknown_kind_is_an_error_naming_kind_and_api_version() {
    let error = load_err("bad/unknown-kind.yaml");
    assert_message(
        &error,
        "bad/unknown-kind.yaml:9 (document 2)",
        &[
            "unknown kind `Deployment` (apiVersion apps/v1): expected ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding or SafetyPolicy",
        ],
    );
}

#[test]
fn binding_to_an_unknown_policy() {
    let error = load_err("bad/unknown-policy.yaml");
    assert!(matches!(error, LoadError::UnknownPolicy { .. }), "{error:?}");
    assert_message(
        &error,
        "bad/unknown-policy.yaml:1",
        &["binding `orphan-binding`", "no policy named `no-such-policy`"],
    );
}

#[test]
fn deny_and_warn_together_are_refused() {
    let error = load_err("bad/deny-and-warn.yaml");
    assert_message(
        &error,
        "bad/deny-and-warn.yaml:15 (document 2)",
        &["spec.validationActions", "Deny and Warn may not be used together"],
    );
}

#[test]
fn cel_compile_error_shows_the_caret_and_field() {
    let error = load_err("bad/cel-error.yaml");
    let LoadError::Compile {
        at, field, rendered, ..
    } = &error
    else {
        panic!("expected a compile error, got {error:?}")
    };
    assert_eq!(field, "spec.validations[1].expression");
    assert_eq!(at.line, 11);
    assert!(rendered.starts_with("ERROR: <input>:1:1: "), "{rendered}");
    assert!(
        rendered.contains("\n | objekt.spec.replicas <= 5\n | ^"),
        "{rendered}"
    );
    assert_message(
        &error,
        "bad/cel-error.yaml:11",
        &[
            "spec.validations[1].expression: invalid CEL expression:",
            "objekt",
        ],
    );
}

#[test]
fn variables_see_only_earlier_variables() {
    let error = load_err("bad/variable-order.yaml");
    assert_message(
        &error,
        "bad/variable-order.yaml:8",
        &["spec.variables[0].expression", "replicas"],
    );
}

#[test]
fn duplicate_names_name_both_places() {
    let error = load_err("bad/duplicate");
    assert!(matches!(error, LoadError::Duplicate { .. }), "{error:?}");
    assert_message(
        &error,
        "bad/duplicate/b.yaml:5",
        &[
            "duplicate policy name `same-name`",
            "first defined at",
            "bad/duplicate/a.yaml:4",
        ],
    );
}

#[test]
fn safety_policy_enum_and_subject_errors() {
    let error = load_err("bad/bad-action.yaml");
    assert_message(
        &error,
        "bad/bad-action.yaml:6",
        &["spec.action", "unknown variant `Block`"],
    );
    let error = load_err("bad/bad-subjects.yaml");
    assert_message(
        &error,
        "bad/bad-subjects.yaml:9",
        &["spec.subjects.serviceAccounts[1]", "expected `namespace/name`"],
    );
}

#[test]
fn all_problems_are_reported_at_once() {
    let error = load_paths(&[
        &fixture("bad/missing-expression.yaml"),
        &fixture("bad/unknown-policy.yaml"),
    ])
    .err()
    .unwrap_or_else(|| panic!("should fail"));
    let errors = error.errors();
    assert_eq!(errors.len(), 2, "{error}");
    assert!(error.to_string().starts_with("2 problems:\n- "), "{error}");
}

#[test]
fn a_missing_path_is_an_io_error() {
    let error = load_err("does/not/exist.yaml");
    assert!(matches!(error, LoadError::Io { .. }), "{error:?}");
    assert!(error.to_string().contains("does/not/exist.yaml"));
}

#[test]
fn documents_that_are_not_objects() {
    let error = Loader::new()
        .add_str("scalar.yaml", "a: 1\n---\n- just\n- a list\n")
        .err();
    let error = error.unwrap_or_else(|| panic!("should fail"));
    assert_message(&error, "scalar.yaml:1 (document 1)", &["kind", "Required value"]);
    assert!(
        error.errors().iter().any(|e| e
            .to_string()
            .starts_with("scalar.yaml:3 (document 2): (document): expected a Kubernetes object")),
        "{error}"
    );
}

#[test]
fn garbage_never_panics() {
    let inputs = [
        "\u{0}\u{1}",
        "{{{{",
        "- - - - -\n  - [",
        "a: &x [*x]",
        "key: !!int notanumber",
        "? [complex]\n: key",
        "apiVersion: 5\nkind: [List]\n",
        "kind: List\nitems: 7\n",
        "kind: List\nitems:\n- kind: List\n  items: []\n",
        "apiVersion: suture.dev/v1alpha1\nkind: SafetyPolicy\n",
        "apiVersion: suture.dev/v1alpha1\nkind: SafetyPolicy\nspec: null\nmetadata: {name: x}\n",
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: x}\n",
        "\t{\"json\": true}",
        "---\n...\n---\n",
        &"[".repeat(10_000),
        "a: &a [1,2]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n",
    ];
    for input in inputs {
        for name in ["garbage.yaml", "garbage.json"] {
            if let Err(error) = Loader::new().add_str(name, input) {
                assert!(error.to_string().contains(name), "{error}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// SafetyPolicy params.

const TUNED: &str = r#"apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: tuned}
spec:
  paramKind: {apiVersion: example.com/v1, kind: Limits}
  validations:
  - expression: "object.spec.replicas <= params.?spec.?max.orValue(3)"
"#;

#[test]
fn a_safety_policy_takes_params_of_its_param_kind() {
    let limits = "apiVersion: example.com/v1\nkind: Limits\nmetadata: {name: l}\nspec: {max: 5}\n";
    let set = Loader::new()
        .add_str("tuned.yaml", TUNED)
        .and_then(|l| l.add_str("limits.yaml", limits))
        .and_then(Loader::finish)
        .unwrap_or_else(|e| panic!("{e}"));
    let policy = set.policy("tuned").unwrap_or_else(|| panic!("tuned not loaded"));
    assert_eq!(
        policy.param_kind,
        Some(("example.com/v1".to_owned(), "Limits".to_owned()))
    );
    assert_eq!(set.params.len(), 1, "the Limits object is recognised as params");
}

#[test]
fn a_safety_policy_param_kind_needs_both_fields() {
    let text = TUNED.replace(
        "{apiVersion: example.com/v1, kind: Limits}",
        "{apiVersion: example.com/v1}",
    );
    let error = Loader::new()
        .add_str("tuned.yaml", &text)
        .and_then(Loader::finish)
        .err()
        .unwrap_or_else(|| panic!("should not load"));
    assert_message(&error, "tuned.yaml:", &["spec.paramKind.kind", "Required value"]);
}

#[test]
fn identical_match_conditions_share_one_text() {
    let condition = r#"
  matchConditions:
  - name: operators
    expression: "request.userInfo.username.startsWith('system:serviceaccount:')"
  - name: own
    expression: "request.name != 'NAME'"
  validations:
  - expression: "true"
"#;
    let policy = |name: &str| {
        format!(
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: {name}\nspec:\n{}",
            condition.replace("NAME", name)
        )
    };
    let set = Loader::new()
        .add_str("first.yaml", &policy("first"))
        .and_then(|loader| loader.add_str("second.yaml", &policy("second")))
        .and_then(Loader::finish)
        .unwrap();
    let text =
        |policy: usize, condition: usize| set.policies[policy].match_conditions[condition].program.source();
    assert_eq!(text(0, 0), text(1, 0));
    assert_eq!(
        text(0, 0).as_ptr(),
        text(1, 0).as_ptr(),
        "the per-request memo finds a shared condition by address"
    );
    assert_ne!(text(0, 1), text(1, 1), "different conditions keep their own text");
}
