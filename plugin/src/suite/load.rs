//! Finding suites (files and directories), parsing them with file/line errors, and preparing every
//! case into a ready-to-judge request — so a suite that loads cannot fail for reasons of its own.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use policies_cel::Request;
use serde::Deserialize;
use serde_json::Value as Json;

use crate::exit::Failure;
use crate::history::History;
use crate::input::{self, Source};
use crate::policies::PolicySource;
use crate::review::{self, RequestSpec};
use crate::suite::expect::Expect;
use crate::suite::model::{API_VERSION, CaseDoc, KIND, SuiteDoc};

/// A loaded suite.
#[derive(Debug)]
pub struct Suite {
    /// The file, as found (relative to where the command was run when given relatively).
    pub file: PathBuf,
    /// `metadata.name`, or the file name without its extension.
    pub name: String,
    pub policies: Vec<PolicySource>,
    pub params: Vec<PathBuf>,
    /// Cluster snapshots the cases are judged against (empty: an empty cluster).
    pub cluster: Vec<PathBuf>,
    /// The history of admitted disruption the cases are judged with (none: empty).
    pub history: Option<History>,
    pub cases: Vec<Case>,
}

/// A prepared case.
#[derive(Debug)]
pub struct Case {
    pub name: String,
    /// The line of the case in its file, when it could be found.
    pub line: Option<usize>,
    pub request: Request,
    pub expect: Expect,
    /// The case's own history, instead of the suite's.
    pub history: Option<History>,
}

/// Loads every suite in `paths` (files or directories, searched recursively for `*.yaml` and
/// `*.yml` files whose documents have `kind: SutureTest`). Any problem exits 2.
pub fn load(paths: &[PathBuf]) -> Result<Vec<Suite>, Failure> {
    let mut suites = Vec::new();
    let mut seen = HashSet::new();
    for path in paths {
        if !path.exists() {
            return Err(Failure::usage(anyhow!(
                "cannot read {}: no such file or directory",
                path.display()
            )));
        }
        let (files, explicit) = if path.is_dir() {
            (yaml_files(path)?, false)
        } else {
            (vec![path.clone()], true)
        };
        for file in files {
            // A file reached twice (a directory and a file in it) runs once.
            if seen.insert(std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone())) {
                suites.extend(load_file(&file, explicit)?);
            }
        }
    }
    if suites.is_empty() {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Failure::usage(anyhow!(
            "no test suites (kind: {KIND}) found in {}",
            names.join(", ")
        )));
    }
    Ok(suites)
}

/// The `*.yaml`/`*.yml` files under `dir`, sorted, skipping hidden entries.
fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let is_yaml = |path: &Path| path.extension().is_some_and(|ext| ext == "yaml" || ext == "yml");
    let (found, errors) = policies_cel::files::files_under(dir, &is_yaml);
    if let Some((path, error)) = errors.into_iter().next() {
        return Err(Failure::usage(anyhow!("cannot read {}: {error}", path.display())));
    }
    Ok(found.into_iter().map(|f| f.path).collect())
}

/// The suites of one file. A file found in a directory that is not a suite is skipped; a file
/// named explicitly must be one.
fn load_file(path: &Path, explicit: bool) -> Result<Vec<Suite>, Failure> {
    let source = input::read_source(path).map_err(Failure::usage)?;
    let kinds = match document_kinds(&source) {
        Ok(kinds) => kinds,
        Err(error) if explicit || source.text.contains(KIND) => return Err(Failure::usage(error)),
        Err(_) => return Ok(Vec::new()),
    };
    let suite_count = kinds.iter().filter(|k| k.as_deref() == Some(KIND)).count();
    if suite_count == 0 {
        if explicit {
            let found = kinds
                .first()
                .cloned()
                .flatten()
                .unwrap_or_else(|| "no kind".into());
            return Err(Failure::usage(anyhow!(
                "{}: not a test suite (expected kind: {KIND}, found {found})",
                source.name
            )));
        }
        return Ok(Vec::new());
    }
    let mut suites = Vec::new();
    for (index, document) in serde_yaml_ng::Deserializer::from_str(&source.text).enumerate() {
        if kinds.get(index).and_then(Option::as_deref) != Some(KIND) {
            continue;
        }
        let doc =
            SuiteDoc::deserialize(document).map_err(|e| Failure::usage(input::yaml_error(&source, &e)))?;
        let ordinal = (suite_count > 1).then_some(suites.len() + 1);
        suites.push(prepare_suite(path, &source, doc, ordinal)?);
    }
    Ok(suites)
}

/// The `kind` of every document of the file (None for documents without one).
fn document_kinds(source: &Source) -> Result<Vec<Option<String>>, input::InputError> {
    let mut kinds = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&source.text) {
        let value = serde_yaml_ng::Value::deserialize(document).map_err(|e| input::yaml_error(source, &e))?;
        kinds.push(value.get("kind").and_then(|k| k.as_str()).map(str::to_owned));
    }
    Ok(kinds)
}

fn prepare_suite(
    path: &Path,
    source: &Source,
    doc: SuiteDoc,
    ordinal: Option<usize>,
) -> Result<Suite, Failure> {
    let fail = |message: String| Failure::usage(anyhow!("{}: {message}", source.name));
    if doc.api_version != API_VERSION {
        return Err(fail(format!(
            "apiVersion must be {API_VERSION}, found {:?}",
            doc.api_version
        )));
    }
    if doc.policies.is_empty() {
        return Err(fail(
            "policies: give at least one policy file or directory, or `builtin`".into(),
        ));
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = doc.metadata.name.clone().unwrap_or_else(|| match ordinal {
        Some(n) => format!("{stem}#{n}"),
        None => stem,
    });
    let policies = doc
        .policies
        .iter()
        .map(|p| {
            if p == "builtin" {
                PolicySource::Builtin
            } else {
                PolicySource::Path(source.dir.join(p))
            }
        })
        .collect();
    let params = doc.params.iter().map(|p| source.dir.join(p)).collect();
    let cluster = doc.cluster.iter().map(|p| source.dir.join(p)).collect();
    let history = doc
        .history
        .as_ref()
        .map(|value| history_of(source, value))
        .transpose()
        .map_err(|message| fail(format!("history: {message}")))?;
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut cases = Vec::with_capacity(doc.cases.len());
    for case in &doc.cases {
        let occurrence = seen.entry(case.name.as_str()).or_default();
        *occurrence += 1;
        let line = case_lines(&source.text, &case.name).get(*occurrence - 1).copied();
        let at = match line {
            Some(line) => format!("{}:{line}", source.name),
            None => source.name.clone(),
        };
        if *occurrence > 1 {
            return Err(Failure::usage(anyhow!(
                "{at}: case {:?} appears twice in the suite",
                case.name
            )));
        }
        let invalid = |message: String| Failure::usage(anyhow!("{at}: case {:?}: {message}", case.name));
        let prepared = prepare_case(source, path, case).map_err(invalid)?;
        let history = case
            .history
            .as_ref()
            .map(|value| history_of(source, value))
            .transpose()
            .map_err(|message| invalid(format!("history: {message}")))?;
        cases.push(Case {
            name: case.name.clone(),
            line,
            request: prepared.0,
            expect: prepared.1,
            history,
        });
    }
    Ok(Suite {
        file: path.to_path_buf(),
        name,
        policies,
        params,
        cluster,
        history,
        cases,
    })
}

/// A `history:` value: a fixture file relative to the suite, or the fixture inline.
fn history_of(source: &Source, value: &Json) -> Result<History, String> {
    match value {
        Json::String(file) => crate::history::load(&source.dir.join(file)).map_err(|e| e.to_string()),
        inline => crate::history::from_value(inline),
    }
}

fn prepare_case(source: &Source, path: &Path, case: &CaseDoc) -> Result<(Request, Expect), String> {
    let expect = Expect::compile(&case.expect)?;
    let review = match &case.review {
        Some(review) => {
            let conflicting = case.request_fields_set();
            if !conflicting.is_empty() {
                return Err(format!(
                    "`review` cannot be combined with {}",
                    conflicting.join(", ")
                ));
            }
            input::read_one(&source.dir.join(review)).map_err(|e| e.to_string())?
        }
        None => {
            let spec = RequestSpec {
                uid: case.uid.clone(),
                seed: format!("{}#{}", path.display(), case.name),
                operation: case.operation,
                object: object(source, "object", &case.object, &case.object_file)?,
                old_object: object(source, "oldObject", &case.old_object, &case.old_object_file)?,
                kind: case.kind.clone(),
                resource: case.resource.clone(),
                sub_resource: case.sub_resource.clone(),
                namespace: case.namespace.clone(),
                name: case.object_name.clone(),
                user_info: case.user_info.clone(),
                dry_run: case.dry_run.unwrap_or(false),
                options: case.options.clone(),
            };
            review::build_review(&spec).map_err(|e| e.to_string())?
        }
    };
    let request = Request::from_review(review).map_err(|e| e.to_string())?;
    Ok((request, expect))
}

/// An object given inline or as a file (relative to the suite).
fn object(
    source: &Source,
    field: &str,
    inline: &Option<Json>,
    file: &Option<String>,
) -> Result<Option<Json>, String> {
    match (inline, file) {
        (Some(_), Some(_)) => Err(format!("give either `{field}` or `{field}File`, not both")),
        (Some(value), None) => Ok(Some(value.clone())),
        (None, Some(file)) => input::read_one(&source.dir.join(file))
            .map(Some)
            .map_err(|e| e.to_string()),
        (None, None) => Ok(None),
    }
}

/// The lines where a case named `name` starts (`- name: <name>`, also in flow style
/// `- {name: <name>, ...}`), in file order, for messages.
fn case_lines(text: &str, name: &str) -> Vec<usize> {
    let value_of = |line: &str| -> Option<String> {
        let line = line.trim_start().strip_prefix('-')?.trim_start();
        let (flow, line) = match line.strip_prefix('{') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, line),
        };
        let value = line.strip_prefix("name:")?.trim_start();
        let value = value.split(" #").next().unwrap_or_default();
        Some(match value.chars().next() {
            Some(quote @ ('"' | '\'')) => value[1..].split(quote).next().unwrap_or_default().to_owned(),
            _ if flow => value
                .split([',', '}'])
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned(),
            _ => value.trim().to_owned(),
        })
    };
    text.lines()
        .enumerate()
        .filter(|(_, line)| value_of(line).is_some_and(|v| v == name))
        .map(|(index, _)| index + 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_lines_of_a_case() {
        let text = "metadata:\n  name: first\ncases:\n  - name: first\n    expect: {}\n  - name: \"second, one\"\n\
                    - {name: first, expect: {}}\n- name: 'third' # comment\n- name: a, b # c\n";
        assert_eq!(case_lines(text, "first"), [4, 7]);
        assert_eq!(case_lines(text, "second, one"), [6]);
        assert_eq!(case_lines(text, "third"), [8]);
        assert_eq!(case_lines(text, "a, b"), [9]);
        assert!(case_lines(text, "fourth").is_empty());
    }
}
