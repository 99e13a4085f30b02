//! Reading policy files: the files of a path, the parsed documents of a file, the objects of a
//! document (`kind: List` items one by one) and what each object is read as. The loader and the
//! lint both read through here, so the lint judges exactly the objects the commands load.

use std::path::Path;

use serde_json::Value;

use crate::policy::marked::{self, Marked, Pos};
use crate::policy::path::FieldPath;
use crate::policy::{LoadError, SourceRef, safety, split_documents, vap};

/// The kind of `kubectl suture test` suites: they live beside the policies they test.
const SUITE_KIND: &str = "SutureTest";

/// A file or directory that could not be read: its path as named, and why.
pub(crate) type Unreadable = (String, std::io::Error);

/// True for the files read from a directory: `.yaml`, `.yml` and `.json`, in any case.
fn has_policy_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "yaml" | "yml" | "json"))
}

/// The files of `path` with their text, each named as it is in messages: `path` itself when it is
/// a file (any name), else the `.yaml`/`.yml`/`.json` files under the directory, recursively, in
/// sorted order. What cannot be read comes first (the directory walk's errors), then each file
/// as it is read.
pub(crate) fn files(path: &Path) -> impl Iterator<Item = Result<(String, String), Unreadable>> {
    let unreadable = |path: &Path, source| (path.display().to_string(), source);
    let (paths, errors) = match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            let (found, errors) = crate::files::files_under(path, &has_policy_extension);
            let errors: Vec<Unreadable> = errors
                .into_iter()
                .map(|(path, source)| unreadable(&path, source))
                .collect();
            (found.into_iter().map(|f| f.path).collect(), errors)
        }
        Ok(_) => (vec![path.to_path_buf()], Vec::new()),
        Err(source) => (Vec::new(), vec![unreadable(path, source)]),
    };
    errors
        .into_iter()
        .map(Err)
        .chain(paths.into_iter().map(move |path| {
            std::fs::read_to_string(&path)
                .map(|text| (path.display().to_string(), text))
                .map_err(|source| unreadable(&path, source))
        }))
}

/// One document of a file, parsed.
#[derive(Debug)]
pub(crate) struct ParsedDocument {
    /// 1-based index of the document in the file.
    pub(crate) index: usize,
    /// The file line of the document text's first line.
    pub(crate) line: usize,
    /// Its value and the line of every field.
    pub(crate) marked: Marked,
}

/// The documents of `text`, the content of `file`: one JSON document when the name ends in
/// `.json` (valid JSON the YAML parser refuses, with tabs, is read without lines below the
/// document), else every YAML document ([`split_documents`]). Empty documents are skipped; one
/// that does not parse is a `Syntax` error, in its place among the others.
pub(crate) fn documents(file: &str, text: &str) -> Vec<Result<ParsedDocument, LoadError>> {
    let is_json = file.to_ascii_lowercase().ends_with(".json");
    let documents = if is_json {
        vec![crate::policy::Document {
            index: 1,
            line: 1,
            text: text.to_owned(),
        }]
    } else {
        split_documents(text)
    };
    let mut out = Vec::new();
    for document in documents.iter().filter(|d| !d.is_empty()) {
        let parsed = match marked::parse(&document.text) {
            Ok(parsed) => parsed,
            Err(error) if is_json => match serde_json::from_str::<Value>(&document.text) {
                Ok(value) => Some(Marked {
                    value,
                    pos: Pos::leaf(1),
                }),
                Err(json_error) => {
                    out.push(Err(LoadError::Syntax {
                        at: SourceRef::new(file, document.index, json_error.line().max(error.line)),
                        column: json_error.column(),
                        message: json_error.to_string(),
                    }));
                    continue;
                }
            },
            Err(error) => {
                out.push(Err(LoadError::Syntax {
                    at: SourceRef::new(file, document.index, document.line + error.line.max(1) - 1),
                    column: error.column,
                    message: error.message,
                }));
                continue;
            }
        };
        if let Some(marked) = parsed {
            out.push(Ok(ParsedDocument {
                index: document.index,
                line: document.line,
                marked,
            }));
        }
    }
    out
}

/// The objects of a document's `value`, each with its path in the document: every item of a
/// `kind: List` (`items[3]`; none when `items` is absent or null), or the document itself (the
/// root). `Err` with the path of `items` when a List's items are not a list.
pub(crate) fn objects(value: &Value) -> Result<Vec<(FieldPath, &Value)>, FieldPath> {
    if value.get("kind").and_then(Value::as_str) != Some("List") {
        return Ok(vec![(FieldPath::root(), value)]);
    }
    let items_at = FieldPath::root().key("items");
    match value.get("items") {
        Some(Value::Array(items)) => Ok(items
            .iter()
            .enumerate()
            .map(|(i, item)| (items_at.index(i), item))
            .collect()),
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(_) => Err(items_at),
    }
}

/// What an object is read as, from its apiVersion and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadAs {
    /// A ValidatingAdmissionPolicy; `older`: of an older apiVersion, read as the current one.
    Policy {
        older: bool,
    },
    /// A ValidatingAdmissionPolicyBinding; `older` as for a policy.
    Binding {
        older: bool,
    },
    SafetyPolicy,
    /// An operator's semantics for its custom kind.
    OperatorProfile,
    /// One of those kinds under an apiVersion that does not have it.
    UnsupportedVersion,
    /// A `kubectl suture test` suite: not a policy, and skipped among them.
    TestSuite,
    /// Anything else: a param object if some policy's paramKind names it, else an unknown kind.
    Other,
}

/// What an object of `api_version` and `kind` is read as.
pub(crate) fn read_as(api_version: &str, kind: &str) -> ReadAs {
    let vap_version = || {
        if api_version == vap::API_VERSION {
            Some(false)
        } else {
            vap::OLDER_API_VERSIONS.contains(&api_version).then_some(true)
        }
    };
    match kind {
        "ValidatingAdmissionPolicy" => {
            vap_version().map_or(ReadAs::UnsupportedVersion, |older| ReadAs::Policy { older })
        }
        "ValidatingAdmissionPolicyBinding" => {
            vap_version().map_or(ReadAs::UnsupportedVersion, |older| ReadAs::Binding { older })
        }
        "SafetyPolicy" if api_version == safety::API_VERSION => ReadAs::SafetyPolicy,
        "SafetyPolicy" => ReadAs::UnsupportedVersion,
        "OperatorProfile" if api_version == crate::operators::spec::API_VERSION => ReadAs::OperatorProfile,
        "OperatorProfile" => ReadAs::UnsupportedVersion,
        SUITE_KIND if api_version == safety::API_VERSION => ReadAs::TestSuite,
        _ => ReadAs::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_by_api_version() {
        let vap = "admissionregistration.k8s.io/v1";
        assert_eq!(
            read_as(vap, "ValidatingAdmissionPolicy"),
            ReadAs::Policy { older: false }
        );
        assert_eq!(
            read_as(
                "admissionregistration.k8s.io/v1beta1",
                "ValidatingAdmissionPolicyBinding"
            ),
            ReadAs::Binding { older: true }
        );
        assert_eq!(read_as(vap, "SafetyPolicy"), ReadAs::UnsupportedVersion);
        assert_eq!(
            read_as("suture.dev/v1alpha1", "ValidatingAdmissionPolicy"),
            ReadAs::UnsupportedVersion
        );
        assert_eq!(
            read_as("suture.dev/v1alpha1", "SafetyPolicy"),
            ReadAs::SafetyPolicy
        );
        assert_eq!(read_as("suture.dev/v1alpha1", "SutureTest"), ReadAs::TestSuite);
        assert_eq!(read_as("example.com/v1", "SutureTest"), ReadAs::Other);
        assert_eq!(read_as("apps/v1", "Deployment"), ReadAs::Other);
    }

    #[test]
    fn json_the_yaml_parser_refuses_is_read_as_json() {
        // A tab between a colon and a plain scalar: valid JSON, not YAML.
        let text = "{\n\t\"kind\": \"Widget\",\n\t\"size\":\t3\n}\n";
        let read = documents("tabs.json", text);
        assert_eq!(read.len(), 1);
        let Ok(document) = &read[0] else {
            panic!("{read:?}")
        };
        assert_eq!(document.marked.value, json!({"kind": "Widget", "size": 3}));
        // The same text under a YAML name is a syntax error.
        assert!(matches!(
            documents("tabs.yaml", text).as_slice(),
            [Err(LoadError::Syntax { .. })]
        ));
    }

    #[test]
    fn list_items_one_by_one() {
        let list = json!({"kind": "List", "items": [{"kind": "A"}, {"kind": "B"}]});
        let found = objects(&list).unwrap_or_default();
        let paths: Vec<String> = found.iter().map(|(path, _)| path.to_string()).collect();
        assert_eq!(paths, ["items[0]", "items[1]"]);
        assert_eq!(objects(&json!({"kind": "List"})).map(|o| o.len()), Ok(0));
        assert!(objects(&json!({"kind": "List", "items": 3})).is_err());
        assert_eq!(objects(&json!({"kind": "Pod"})).map(|o| o.len()), Ok(1));
    }
}
