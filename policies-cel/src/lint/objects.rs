//! The objects of the linted files with the line of every field: each document parsed into the
//! loader's marked tree, `kind: List` items taken one by one.

use serde_json::Value;

use crate::policy::marked::{self, Pos};
use crate::policy::path::FieldPath;
use crate::policy::{safety, split_documents, vap};

use crate::lint::source::SourceFile;

/// One object of a linted file.
#[derive(Debug)]
pub(crate) struct Object {
    /// Index of its file.
    pub(crate) file: usize,
    /// The file line of its document's first line.
    first_line: usize,
    pos: std::rc::Rc<Pos>,
    /// Its path in the document (the root, or `items[3]`).
    base: FieldPath,
    pub(crate) value: Value,
}

/// What an object is, for the lint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ObjectKind {
    ValidatingAdmissionPolicy,
    Binding,
    SafetyPolicy,
    Other,
}

impl Object {
    /// The file line of the field at `rel` (of its nearest existing parent).
    pub(crate) fn line_of(&self, rel: &FieldPath) -> usize {
        self.first_line + self.pos.line_of(&self.base.join(rel)).max(1) - 1
    }

    /// The file line the object starts on.
    pub(crate) fn start_line(&self) -> usize {
        self.line_of(&FieldPath::root())
    }

    /// The full path of `rel` in the document, as messages print it.
    pub(crate) fn path(&self, rel: &FieldPath) -> String {
        self.base.join(rel).to_string()
    }

    /// The field at `rel`, if present.
    pub(crate) fn get(&self, rel: &FieldPath) -> Option<&Value> {
        rel.0.iter().try_fold(&self.value, |value, seg| match seg {
            crate::policy::path::Seg::Key(key) => value.get(key),
            crate::policy::path::Seg::Index(index) => value.get(index),
        })
    }

    /// `metadata.name`.
    pub(crate) fn name(&self) -> Option<&str> {
        self.value.pointer("/metadata/name").and_then(Value::as_str)
    }

    /// A policy, a binding, or something else.
    pub(crate) fn kind(&self) -> ObjectKind {
        let text = |field: &str| self.value.get(field).and_then(Value::as_str).unwrap_or_default();
        let api_version = text("apiVersion");
        let is_vap_version =
            api_version == vap::API_VERSION || vap::OLDER_API_VERSIONS.contains(&api_version);
        match text("kind") {
            "ValidatingAdmissionPolicy" if is_vap_version => ObjectKind::ValidatingAdmissionPolicy,
            "ValidatingAdmissionPolicyBinding" if is_vap_version => ObjectKind::Binding,
            "SafetyPolicy" if api_version == safety::API_VERSION => ObjectKind::SafetyPolicy,
            _ => ObjectKind::Other,
        }
    }
}

/// Every object of `files` that parses (syntax errors are the loader's to report).
pub(crate) fn objects(files: &[SourceFile]) -> Vec<Object> {
    let mut out = Vec::new();
    for (file, source) in files.iter().enumerate() {
        let is_json = source.name.to_ascii_lowercase().ends_with(".json");
        let documents = if is_json {
            vec![crate::policy::Document {
                index: 1,
                line: 1,
                text: source.text.clone(),
            }]
        } else {
            split_documents(&source.text)
        };
        for document in documents.iter().filter(|d| !d.is_empty()) {
            let Ok(Some(parsed)) = marked::parse(&document.text) else {
                continue;
            };
            let pos = std::rc::Rc::new(parsed.pos);
            let list_items = match (&parsed.value.get("kind"), parsed.value.get("items")) {
                (Some(Value::String(kind)), Some(Value::Array(items))) if kind == "List" => {
                    Some(items.clone())
                }
                _ => None,
            };
            let objects: Vec<(FieldPath, Value)> = match list_items {
                Some(items) => items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| (FieldPath::root().key("items").index(i), item))
                    .collect(),
                None => vec![(FieldPath::root(), parsed.value)],
            };
            for (base, value) in objects {
                out.push(Object {
                    file,
                    first_line: document.line,
                    pos: pos.clone(),
                    base,
                    value,
                });
            }
        }
    }
    out
}
