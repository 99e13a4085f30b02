//! `kubectl suture test`: suites found in files and directories, the text / JSON / JUnit reports,
//! `--run`, and exit 0 (all passed) / 1 (some failed) / 2 (unreadable suite) / 3 (policies fail
//! to load).

use crate::common;

use common::{json, stderr, stdout, suture, temp_files};

const SUITES: &str = "testdata/suites";
const FAILING: &str = "cmd/tests/fixtures/failing.test.yaml";

fn test(args: &[&str]) -> std::process::Output {
    suture().arg("test").args(args).output().unwrap()
}

#[test]
fn the_example_suites_pass() {
    let out = test(&[SUITES]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains('✗'), "{text}");
    assert!(!text.contains('\x1b'), "no colour when stdout is not a terminal");
    insta::assert_snapshot!("test_example_suites_text", text);
}

#[test]
fn failures_are_explained_and_exit_1() {
    let out = test(&[FAILING]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("  ✓ passes\n"), "{text}");
    assert!(
        text.ends_with("FAIL: 1 passed, 4 failed, 5 cases in 1 suite\n"),
        "{text}"
    );
    insta::assert_snapshot!("test_failing_suite_text", text);
}

#[test]
fn json_report_shape() {
    let out = test(&[FAILING, "-o", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let doc = json(&out);
    assert_eq!(
        (
            doc["passed"].as_u64(),
            doc["failed"].as_u64(),
            doc["total"].as_u64()
        ),
        (Some(1), Some(4), Some(5))
    );
    let suite = &doc["suites"][0];
    assert_eq!(suite["name"], "failing");
    assert_eq!(suite["file"], FAILING);
    let case = &suite["cases"][1];
    assert_eq!(case["name"], "expects a denial that does not happen");
    assert_eq!(case["passed"], false);
    assert_eq!(case["line"], 17);
    assert_eq!(
        case["failures"],
        serde_json::json!(["expected the request to be denied, but it was allowed"])
    );
    assert_eq!(case["decision"]["allowed"], true);
    let denied = &suite["cases"][2]["decision"];
    assert_eq!(denied["denials"][0]["policy"], "replicas-limit");
    assert_eq!(
        denied["auditAnnotations"]["replicas-limit/requested-replicas"],
        "12"
    );
}

#[test]
fn junit_report_is_valid_xml() {
    let out = test(&[FAILING, SUITES, "-o", "junit"]);
    assert_eq!(out.status.code(), Some(1));
    let xml = stdout(&out);
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "),
        "{xml}"
    );

    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(&xml);
    let (mut stack, mut suites, mut cases, mut failures) = (Vec::<String>::new(), 0, 0, 0);
    let mut names = Vec::new();
    loop {
        let event = reader
            .read_event()
            .unwrap_or_else(|e| panic!("invalid XML: {e}\n{xml}"));
        let (element, opens) = match &event {
            Event::Start(e) => (e, true),
            Event::Empty(e) => (e, false),
            Event::End(_) => {
                stack.pop();
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let name = String::from_utf8(element.name().as_ref().to_vec()).unwrap();
        let parent = stack.last().map(String::as_str);
        match name.as_str() {
            "testsuites" => assert_eq!(parent, None),
            "testsuite" => {
                assert_eq!(parent, Some("testsuites"));
                suites += 1;
            }
            "testcase" => {
                assert_eq!(parent, Some("testsuite"));
                cases += 1;
                let attr = element.try_get_attribute("name").unwrap().unwrap();
                names.push(attr.unescape_value().unwrap().into_owned());
            }
            "failure" => {
                assert_eq!(parent, Some("testcase"));
                failures += 1;
            }
            other => panic!("unexpected element {other}"),
        }
        if opens {
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "unclosed elements {stack:?}");
    assert_eq!((suites, failures), (29, 4), "{xml}");
    assert!(cases >= 100, "{cases} testcases in:\n{xml}");
    assert!(
        names.contains(&"escaping <&> \"quotes\" in names".to_owned()),
        "{names:?}"
    );
}

#[test]
fn run_selects_cases_by_name_or_suite() {
    let out = test(&[SUITES, "--run", "namespace"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert_eq!(text.matches('✓').count(), 16, "{text}");
    assert!(text.contains("(201 filtered out by --run)"), "{text}");

    let out = test(&[SUITES, FAILING, "--run", "^replicas-limit/", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "the failing suite is filtered out");
    assert_eq!(json(&out)["total"], 6);

    let out = test(&[SUITES, "--run", "("]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--run: invalid regular expression"));
}

#[test]
fn a_suite_reached_twice_runs_once() {
    let out = test(&[
        SUITES,
        "testdata/suites/replicas-limit/replicas-limit.test.yaml",
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["suites"].as_array().unwrap().len(), 28);
}

#[test]
fn the_default_path_is_the_current_directory() {
    let out = suture()
        .current_dir(common::root().join(SUITES))
        .arg("test")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("in 28 suites"), "{}", stdout(&out));
}

#[test]
fn unreadable_suites_exit_2_naming_file_and_line() {
    let dir = temp_files(&[
        (
            "syntax.yaml",
            "apiVersion: suture.dev/v1alpha1\nkind: SutureTest\npolicies: [builtin\n",
        ),
        (
            "typo.yaml",
            "apiVersion: suture.dev/v1alpha1\nkind: SutureTest\npolicies: [builtin]\ncases:\n- name: a\n  expect: {alowed: true}\n",
        ),
        (
            "missing-object.yaml",
            "apiVersion: suture.dev/v1alpha1\nkind: SutureTest\npolicies: [builtin]\ncases:\n- name: a\n  objectFile: nope.yaml\n  expect: {allowed: true}\n",
        ),
        (
            "contradiction.yaml",
            "apiVersion: suture.dev/v1alpha1\nkind: SutureTest\npolicies: [builtin]\ncases:\n- name: ok\n  kind: Namespace\n  operation: DELETE\n  objectName: x\n  expect: {allowed: true}\n- name: create without object\n  kind: Pod\n  operation: CREATE\n  expect: {allowed: true}\n",
        ),
        (
            "duplicate.yaml",
            "apiVersion: suture.dev/v1alpha1\nkind: SutureTest\npolicies: [builtin]\ncases:\n- {name: a, kind: Namespace, objectName: x, operation: DELETE, expect: {allowed: true}}\n- {name: a, kind: Namespace, objectName: y, operation: DELETE, expect: {allowed: true}}\n",
        ),
        (
            "version.yaml",
            "apiVersion: suture.dev/v1\nkind: SutureTest\npolicies: [builtin]\ncases: []\n",
        ),
        (
            "not-a-suite.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
        ),
    ]);
    let expected = [
        ("syntax.yaml", ":4:1: "),
        (
            "typo.yaml",
            ":6:12: cases[0].expect: unknown field `alowed`, expected one of `allowed`",
        ),
        ("missing-object.yaml", ":5: case \"a\": cannot read "),
        (
            "contradiction.yaml",
            ":10: case \"create without object\": a CREATE needs the new object (`object`)",
        ),
        ("duplicate.yaml", ":6: case \"a\" appears twice in the suite"),
        (
            "version.yaml",
            ": apiVersion must be suture.dev/v1alpha1, found \"suture.dev/v1\"",
        ),
        (
            "not-a-suite.yaml",
            ": not a test suite (expected kind: SutureTest, found ConfigMap)",
        ),
    ];
    for (name, message) in expected {
        let path = dir.path().join(name);
        let out = test(&[path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{name}");
        let err = stderr(&out);
        assert!(
            err.starts_with(&format!("error: {}{message}", path.display())),
            "{name}: {err}"
        );
    }
}

#[test]
fn missing_paths_and_empty_directories_exit_2() {
    let out = test(&["testdata/no-such-suites"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot read testdata/no-such-suites"),
        "{}",
        stderr(&out)
    );

    let out = test(&["testdata/objects"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: no test suites (kind: SutureTest) found in testdata/objects\n"
    );
}

#[test]
fn a_suite_whose_policies_do_not_compile_exits_3() {
    let dir = temp_files(&[
        (
            "policies/bad.yaml",
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: bad}\nspec:\n  validations:\n  - expression: \"object.spec.replicas >\"\n",
        ),
        (
            "suites/bad.test.yaml",
            "apiVersion: suture.dev/v1alpha1\nkind: SutureTest\npolicies: [../policies]\ncases:\n- {name: a, kind: Namespace, objectName: x, operation: DELETE, expect: {allowed: true}}\n",
        ),
    ]);
    let out = test(&[dir.path().join("suites").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("bad.test.yaml: cannot load policies: "), "{err}");
    assert!(err.contains("bad.yaml:6"), "{err}");
    assert!(err.contains("^"), "{err}");
}

#[test]
fn suites_compile_their_policies_for_the_kubernetes_version() {
    let dir = temp_files(&[
        (
            "policy.yaml",
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: tiers}\nspec:\n  validations:\n  - expression: \"['web', 'db'].includes(request.name)\"\n",
        ),
        (
            "tiers.test.yaml",
            "apiVersion: suture.dev/v1alpha1\nkind: SutureTest\npolicies: [policy.yaml]\ncases:\n- {name: web, kind: Namespace, objectName: web, operation: DELETE, expect: {allowed: true}}\n- {name: other, kind: Namespace, objectName: other, operation: DELETE, expect: {allowed: false}}\n",
        ),
    ]);
    let suite = dir.path().join("tiers.test.yaml");
    let suite = suite.to_str().unwrap();
    let out = test(&[suite]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("Kubernetes 1.37 introduced it, the target is 1.36"),
        "{}",
        stderr(&out)
    );
    let out = test(&[suite, "--kubernetes-version", "1.37"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
}
