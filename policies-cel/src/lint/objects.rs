//! The objects of the linted files with the line of every field: each file read as the loader
//! reads it ([`read`]: documents parsed into the marked tree, `.json` files as JSON, `kind: List`
//! items taken one by one).

use std::rc::Rc;

use serde_json::Value;

use crate::policy::LoadError;
use crate::policy::marked::{Marked, Pos};
use crate::policy::path::FieldPath;
use crate::policy::read::{self, ParsedDocument, ReadAs};

use crate::lint::source::SourceFile;

/// One object of a linted file.
#[derive(Debug)]
pub(crate) struct Object {
    /// Index of its file.
    pub(crate) file: usize,
    /// The file line of its document's first line.
    first_line: usize,
    pos: Rc<Pos>,
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
    /// An OperatorProfile: its expressions are checked by the loader.
    OperatorProfile,
    /// A CustomResourceDefinition: read for the schema of its custom resources.
    CustomResourceDefinition,
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

    /// A policy, a binding, or something else, as the loader reads it ([`read::read_as`]); or
    /// a CRD.
    pub(crate) fn kind(&self) -> ObjectKind {
        let text = |field: &str| self.value.get(field).and_then(Value::as_str).unwrap_or_default();
        if crate::lint::crds::is_crd(text("apiVersion"), text("kind")) {
            return ObjectKind::CustomResourceDefinition;
        }
        match read::read_as(text("apiVersion"), text("kind")) {
            ReadAs::Policy { .. } => ObjectKind::ValidatingAdmissionPolicy,
            ReadAs::Binding { .. } => ObjectKind::Binding,
            ReadAs::SafetyPolicy => ObjectKind::SafetyPolicy,
            ReadAs::OperatorProfile => ObjectKind::OperatorProfile,
            ReadAs::UnsupportedVersion | ReadAs::TestSuite | ReadAs::Other => ObjectKind::Other,
        }
    }
}

/// The documents of one linted file, parsed once for the loader and the lint's own checks.
pub(crate) type FileDocuments = Vec<Result<ParsedDocument, LoadError>>;

/// The documents of each of `files`, as the loader reads them ([`read::documents`]).
pub(crate) fn documents(files: &[SourceFile]) -> Vec<FileDocuments> {
    files
        .iter()
        .map(|source| read::documents(&source.name, &source.text))
        .collect()
}

/// Every object of the files numbered `files` that parses (syntax errors are the loader's to
/// report); `documents` holds every file's documents.
pub(crate) fn objects(documents: &[FileDocuments], files: &[usize]) -> Vec<Object> {
    let mut out = Vec::new();
    for &file in files {
        for document in documents[file].iter().flatten() {
            let ParsedDocument {
                line,
                marked: Marked { value, pos },
                ..
            } = document;
            // A List whose items are not a list holds no object (the loader reports it).
            let Ok(objects) = read::objects(value) else {
                continue;
            };
            let pos = Rc::new(pos.clone());
            for (base, value) in objects {
                out.push(Object {
                    file,
                    first_line: *line,
                    pos: pos.clone(),
                    base,
                    value: value.clone(),
                });
            }
        }
    }
    out
}
