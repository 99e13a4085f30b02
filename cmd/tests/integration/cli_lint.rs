//! `kubectl suture lint`: findings with file:line:column and a caret (golden text), the JSON
//! document, stdin, and exit 0 (clean or warnings) / 1 (errors, or warnings with --strict) /
//! 2 (unreadable) / 3 (policies that do not load).

use crate::common;

use common::{json, stderr, stdout, suture, temp_files};

fn lint(args: &[&str]) -> std::process::Output {
    suture().arg("lint").args(args).output().unwrap()
}

/// (code, line, column) of every finding in `file` of a `-o json` document.
fn positions(document: &serde_json::Value, file: &str) -> Vec<(String, u64, u64)> {
    document["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"] == file)
        .map(|f| {
            (
                f["code"].as_str().unwrap().to_owned(),
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn findings_are_printed_with_a_caret_under_the_problem() {
    let out = lint(&["testdata/lint/findings"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains('\u{1b}'), "no colour into a pipe");
    insta::assert_snapshot!("lint_findings_text", text);
}

#[test]
fn a_clean_set_exits_0() {
    let out = lint(&["testdata/lint/clean"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(
        stdout(&out),
        "clean: 2 policies, 1 binding, 7 expressions in 2 files\n"
    );
}

#[test]
fn the_builtin_pack_lints_clean() {
    let out = lint(&["builtin", "--strict"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).starts_with("clean: 10 policies"), "{}", stdout(&out));
}

#[test]
fn the_operator_profile_catalog_lints_clean_and_is_counted() {
    let out = lint(&["policies-cel/operators", "--strict"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(
        stdout(&out),
        "clean: 0 policies, 0 bindings, 15 operator profiles, 0 expressions in 8 files\n"
    );
    let out = lint(&["policies-cel/operators", "-o", "json"]);
    assert_eq!(json(&out)["summary"]["profiles"], 15);
}

#[test]
fn json_lists_every_finding_with_its_position() {
    let out = lint(&["testdata/lint/findings", "-o", "json"]);
    assert_eq!(out.status.code(), Some(3));
    let document = json(&out);
    let compile: Vec<_> = positions(&document, "testdata/lint/findings/compile-errors.yaml")
        .into_iter()
        .filter(|(code, _, _)| code == "compile-error")
        .collect();
    assert_eq!(
        compile,
        [
            ("compile-error".to_owned(), 9, 36),
            ("compile-error".to_owned(), 12, 18),
            ("compile-error".to_owned(), 16, 84),
            ("compile-error".to_owned(), 17, 67),
            ("compile-error".to_owned(), 20, 52),
        ],
        "every expression that does not compile, not only the first"
    );
    assert_eq!(
        positions(&document, "testdata/lint/findings/never-true.yaml"),
        [
            ("never-true".to_owned(), 9, 43),
            ("never-true".to_owned(), 10, 20),
            ("always-true".to_owned(), 12, 46),
        ]
    );
    assert_eq!(
        positions(&document, "testdata/lint/findings/types.yaml"),
        [
            ("result-type".to_owned(), 8, 18),
            ("message-type".to_owned(), 10, 25),
            ("compile-error".to_owned(), 11, 39),
            ("compile-error".to_owned(), 12, 49),
        ]
    );
    assert_eq!(
        positions(&document, "testdata/lint/findings/schema-field.yaml"),
        [
            ("schema-field".to_owned(), 15, 30),
            ("schema-field".to_owned(), 16, 62),
        ],
        "a typo of a matched kind's field; nothing for the policy matched through a wildcard"
    );
    assert_eq!(
        positions(&document, "testdata/lint/findings/crd-field.yaml"),
        [("schema-field".to_owned(), 60, 40)],
        "the CRD beside the policy is read, not an unknown kind; only its typo is reported"
    );
    let first = &document["findings"][1];
    assert_eq!(first["severity"], "error");
    assert_eq!(first["field"], "spec.matchConditions[0].expression");
    assert!(first.get("source_line").is_none());
    let summary = &document["summary"];
    assert_eq!(summary["errors"], 17);
    assert_eq!(summary["warnings"], 11);
    assert_eq!(summary["policies"], 11);
}

#[test]
fn stdin_with_dash_f_and_strict_warnings() {
    let policy = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: p\nspec:\n  validations:\n  - expression: 'object.spec.replicas > 1 || true'\n";
    let out = suture()
        .args(["lint", "-f", "-"])
        .write_stdin(policy)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "warnings alone pass: {}",
        stdout(&out)
    );
    assert!(
        stdout(&out).starts_with("<stdin>:7:46: warning[always-true]: validation is always true"),
        "{}",
        stdout(&out)
    );
    let out = suture()
        .args(["lint", "-f", "-", "--strict", "-o", "yaml"])
        .write_stdin(policy)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("code: always-true"), "{}", stdout(&out));
}

#[test]
fn errors_that_load_exit_1_and_unreadable_paths_exit_2() {
    let dir = temp_files(&[(
        "p.yaml",
        "apiVersion: suture.dev/v1alpha1\nkind: SafetyPolicy\nmetadata:\n  name: p\nspec:\n  action: Deny\n  validations:\n  - expression: '1 == 2'\n",
    )]);
    let out = lint(&[dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stdout(&out).contains(":8:20: error[never-true]"),
        "{}",
        stdout(&out)
    );

    let out = lint(&["testdata/lint/no-such-dir"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot read `testdata/lint/no-such-dir`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn crds_given_apart_type_their_custom_resources() {
    let policy = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: p\nspec:\n  matchConstraints:\n    resourceRules:\n    - apiGroups: [\"example.com\"]\n      apiVersions: [\"v1\"]\n      operations: [\"CREATE\"]\n      resources: [\"backups\"]\n  validations:\n  - expression: \"object.spec.retention.dyas <= 30 && has(object.spec.options.level) && object.status.lastRun != ''\"\n";
    let out = suture()
        .args(["lint", "-f", "-", "--strict"])
        .write_stdin(policy)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "without the CRD, object is dyn: {}",
        stdout(&out)
    );
    for crds in ["testdata/lint/crds", "testdata/lint/crds/backups.yaml"] {
        let out = suture()
            .args(["lint", "-f", "-", "--crds", crds, "-o", "json"])
            .write_stdin(policy)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let document = json(&out);
        let found: Vec<_> = document["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["line"].as_u64().unwrap(),
                    f["column"].as_u64().unwrap(),
                    f["message"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(
            found,
            [(
                13,
                40,
                "undefined field 'dyas' (Backup example.com/v1)".to_owned()
            )]
        );
    }
    // A path with no CRD, and a broken CRD, are usage errors naming the file (and line).
    let out = lint(&["testdata/lint/clean", "--crds", "testdata/lint/clean"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("holds no CustomResourceDefinition"),
        "{}",
        stderr(&out)
    );
    let dir = temp_files(&[(
        "crd.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\nspec:\n  group: example.com\n  names: {kind: X}\n",
    )]);
    let out = lint(&["testdata/lint/clean", "--crds", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("crd.yaml:6: CustomResourceDefinition `x`: spec.names.plural is required"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_loader_fixtures() {
    // good/ loads, but its placeholder validations (`true`) and its typo fixture are findings.
    let document = json(&lint(&["testdata/policies/good", "-o", "json"]));
    let codes: Vec<_> = document["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(
        codes
            .iter()
            .all(|c| ["always-true", "unbound-policy", "unknown-field"].contains(c)),
        "{codes:?}"
    );
    for expected in ["always-true", "unbound-policy", "unknown-field"] {
        assert!(codes.contains(&expected), "{expected} missing from {codes:?}");
    }
    // bad/ shows each loader error as a finding, and exits 3.
    let out = lint(&["testdata/policies/bad", "-o", "json"]);
    assert_eq!(out.status.code(), Some(3));
    let document = json(&out);
    for code in [
        "compile-error",
        "yaml-syntax",
        "invalid-field",
        "unknown-kind",
        "duplicate-name",
        "unreachable-match",
    ] {
        assert!(
            document["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["code"] == code),
            "no {code} finding for testdata/policies/bad"
        );
    }
}

#[test]
fn the_command_reference_shows_real_output() {
    let out = lint(&["testdata/lint/findings/never-true.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let first: Vec<&str> = text.lines().take(6).collect();
    let reference = std::fs::read_to_string(common::root().join("docs/commands.md")).unwrap();
    assert!(
        reference.contains(&first.join("\n")),
        "docs/commands.md's lint example differs from:\n{text}"
    );
    assert!(reference.contains(text.lines().last().unwrap()));
}

#[test]
fn a_function_of_a_later_kubernetes_version_is_its_own_finding() {
    let dir = temp_files(&[(
        "p.yaml",
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec:\n  validations:\n  - expression: \"['a'].includes(object.metadata.name)\"\n",
    )]);
    let path = dir.path().to_str().unwrap();
    let out = lint(&[path, "-o", "json"]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let document = json(&out);
    let finding = &document["findings"][0];
    assert_eq!(finding["code"], "kubernetes-version");
    assert_eq!(
        finding["message"],
        "`includes` needs Kubernetes 1.37: the policies are linted for 1.36"
    );
    assert_eq!(
        (finding["line"].as_u64(), finding["column"].as_u64()),
        (Some(6), Some(24))
    );
    let out = lint(&[path, "--kubernetes-version", "1.37"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}
