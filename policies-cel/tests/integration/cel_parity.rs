//! The CEL parity table: expressions with the outcome Kubernetes documents for them, transcribed
//! (data only) from cel-go's extension tests, the apiserver's CEL library tests and the
//! Kubernetes CEL documentation, run against the engine.
//!
//! Each file under `testdata/cel-parity/` names its source and lists cases. A case is an `expr`
//! that must evaluate to `true`, unless it says `error` (evaluation fails with a message
//! containing this text) or `compileError` (Kubernetes refuses it when the policy is created:
//! loading fails with a message containing this text). A case compiles for the default
//! Kubernetes version unless it names one (`kubernetesVersion: "1.33"`): what a version's
//! environment lacks is a compile error there. A case with `skip` states why it is not run (a
//! Kubernetes version the project does not target); docs/cel-compatibility.md lists every such
//! case, and its parity line must report the counts this test finds.

use std::fmt;
use std::path::{Path, PathBuf};

use policies_cel::cel::value::display;
use policies_cel::cel::{Bindings, Budget, Env, KubernetesVersion, Value};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    /// Where the cases come from, and which version.
    #[allow(dead_code)] // documentation for readers of the file
    source: String,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    expr: String,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    compile_error: Option<String>,
    #[serde(default)]
    skip: Option<String>,
    /// The Kubernetes version compiled for (the default one when absent).
    #[serde(default)]
    kubernetes_version: Option<String>,
}

enum Outcome {
    Value(Value),
    EvalError(String),
    CompileError(String),
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Value(v) => write!(f, "value {}", display(v)),
            Outcome::EvalError(e) => write!(f, "evaluation error {e:?}"),
            Outcome::CompileError(e) => write!(f, "compile error {e:?}"),
        }
    }
}

fn run(expr: &str, version: KubernetesVersion) -> Outcome {
    match Env::admission_at(version).compile(expr) {
        Err(e) => Outcome::CompileError(e.to_string()),
        Ok(program) => match program.eval(&Bindings::new(), &Budget::default()) {
            Ok(v) => Outcome::Value(v),
            Err(e) => Outcome::EvalError(e.to_string()),
        },
    }
}

/// Whether `outcome` is what `case` expects; `None` when it is, the expectation otherwise.
fn mismatch(case: &Case, outcome: &Outcome) -> Option<String> {
    match (&case.error, &case.compile_error, outcome) {
        (Some(want), _, Outcome::EvalError(got)) if got.contains(want.as_str()) => None,
        (Some(want), _, _) => Some(format!("an evaluation error containing {want:?}")),
        (_, Some(want), Outcome::CompileError(got)) if got.contains(want.as_str()) => None,
        (_, Some(want), _) => Some(format!("a compile error containing {want:?}")),
        (None, None, Outcome::Value(Value::Bool(true))) => None,
        (None, None, _) => Some("true".to_owned()),
    }
}

fn table_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/cel-parity")
}

#[derive(Default, Debug, PartialEq)]
struct Counts {
    rows: usize,
    passed: usize,
    skipped: usize,
}

fn tables() -> Vec<(String, Table)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(table_dir())
        .expect("testdata/cel-parity")
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable table");
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let table: Table = serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, table)
        })
        .collect()
}

#[test]
fn every_row_of_the_parity_table_behaves_as_kubernetes_documents() {
    let mut counts = Counts::default();
    let mut failures = Vec::new();
    for (name, table) in tables() {
        assert!(!table.cases.is_empty(), "{name} has no cases");
        for (index, case) in table.cases.iter().enumerate() {
            counts.rows += 1;
            if let Some(reason) = &case.skip {
                assert!(
                    !reason.trim().is_empty(),
                    "{name} case {index}: skip needs a reason"
                );
                counts.skipped += 1;
                continue;
            }
            let version = match &case.kubernetes_version {
                Some(text) => text
                    .parse()
                    .unwrap_or_else(|e| panic!("{name} case {index}: {e}")),
                None => KubernetesVersion::DEFAULT,
            };
            let outcome = run(&case.expr, version);
            match mismatch(case, &outcome) {
                None => counts.passed += 1,
                Some(want) => failures.push(format!(
                    "{name} case {index} (Kubernetes {version}): {}\n    want {want}, got {outcome}",
                    case.expr
                )),
            }
        }
    }
    println!(
        "cel parity: {} rows, {} passed, {} failed, {} skipped",
        counts.rows,
        counts.passed,
        failures.len(),
        counts.skipped
    );
    assert!(
        failures.is_empty(),
        "{} of {} rows differ from Kubernetes:\n{}",
        failures.len(),
        counts.rows,
        failures.join("\n")
    );
    let line = format!(
        "CEL parity table: {} rows, {} pass, {} skipped",
        counts.rows, counts.passed, counts.skipped
    );
    assert!(
        compatibility_doc().contains(&line),
        "docs/cel-compatibility.md must say {line:?} (the counts this test found)"
    );
}

fn compatibility_doc() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cel-compatibility.md"))
        .expect("docs/cel-compatibility.md")
}

/// Every skipped row is listed in docs/cel-compatibility.md with its reason.
#[test]
fn skipped_rows_are_listed_in_the_compatibility_doc() {
    let doc = compatibility_doc();
    for (name, table) in tables() {
        for case in table.cases.iter().filter(|c| c.skip.is_some()) {
            assert!(
                doc.contains(&format!("`{}`", case.expr)),
                "docs/cel-compatibility.md must list the skipped {name} row `{}`",
                case.expr
            );
        }
    }
}
