//! Where an object being loaded sits (file, document, lines of its fields), and its decoding into
//! typed structs with field-precise errors and unknown-field warnings.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::policy::LoadError;
use crate::policy::SourceRef;
use crate::policy::marked::Pos;
use crate::policy::path::{FieldPath, Seg};

/// What loading found besides results: errors (loading fails) and warnings (it does not).
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub(crate) errors: Vec<LoadError>,
    pub(crate) warnings: Vec<Warning>,
}

/// What a loader warning is about (the lint reports each under its own code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WarningKind {
    /// A field the Kubernetes type does not have (a typo, or a field of another version).
    UnknownField,
    /// An older apiVersion read as the current one.
    OlderVersion,
    /// A ValidatingAdmissionPolicy that reads Suture's own `impact` or `cluster`.
    SutureExtension,
}

/// A loader warning: where, about which field, and its text as printed (`file:line: ...`).
#[derive(Debug, Clone)]
pub(crate) struct Warning {
    pub(crate) kind: WarningKind,
    pub(crate) at: SourceRef,
    /// The field's full path in the document (`spec.validatons`).
    pub(crate) field: String,
    pub(crate) message: String,
    pub(crate) text: String,
}

/// One object of a document: the document's position tree and the object's path in it (the root,
/// or `items[3]` in a `kind: List`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub(crate) file: &'a str,
    pub(crate) document: usize,
    /// The file line of the document text's first line.
    pub(crate) first_line: usize,
    pub(crate) pos: &'a Pos,
    pub(crate) base: &'a FieldPath,
}

impl Ctx<'_> {
    /// The full path of `rel` (a path inside the object) in the document.
    pub(crate) fn path(&self, rel: &FieldPath) -> FieldPath {
        self.base.join(rel)
    }

    /// The source line of the field at `rel` (of the nearest existing parent when it is missing).
    pub(crate) fn at(&self, rel: &FieldPath) -> SourceRef {
        let line = self.pos.line_of(&self.path(rel)).max(1);
        SourceRef::new(self.file, self.document, self.first_line + line - 1)
    }

    /// Where the object itself starts.
    pub(crate) fn object_ref(&self) -> SourceRef {
        self.at(&FieldPath::root())
    }

    /// An `Invalid` error about the field at `rel`.
    pub(crate) fn invalid(&self, rel: &FieldPath, message: impl Into<String>) -> LoadError {
        LoadError::Invalid {
            at: self.at(rel),
            field: self.path(rel).to_string(),
            message: message.into(),
        }
    }

    /// A warning about the field at `rel`: `file:line: field: message`.
    pub(crate) fn warning(&self, kind: WarningKind, rel: &FieldPath, message: &str) -> Warning {
        let at = self.at(rel);
        let field = self.path(rel).to_string();
        let text = format!("{}:{}: {field}: {message}", at.file, at.line);
        Warning {
            kind,
            at,
            field,
            message: message.to_owned(),
            text,
        }
    }

    /// Decodes the object into `T`. Type errors and missing fields become an `Invalid` error at
    /// the field; fields `T` does not know become warnings (`unknown field `spec.validatons``).
    pub(crate) fn decode<T: DeserializeOwned>(&self, value: &Value, report: &mut Report) -> Option<T> {
        let mut ignored = Vec::new();
        let mut on_ignored = |path: serde_ignored::Path<'_>| ignored.push(FieldPath::from_ignored(&path));
        let result: Result<T, _> =
            serde_path_to_error::deserialize(serde_ignored::Deserializer::new(value, &mut on_ignored));
        // kube-derive's types read apiVersion and kind without keeping them: not unknown.
        let type_meta =
            |rel: &FieldPath| matches!(rel.0.as_slice(), [Seg::Key(k)] if k == "apiVersion" || k == "kind");
        for rel in ignored.iter().filter(|rel| !type_meta(rel)) {
            let at = self.at(rel);
            let field = self.path(rel).to_string();
            let text = format!("{}:{}: unknown field `{field}`", at.file, at.line);
            report.warnings.push(Warning {
                kind: WarningKind::UnknownField,
                at,
                message: format!("unknown field `{field}`"),
                field,
                text,
            });
        }
        match result {
            Ok(decoded) => Some(decoded),
            Err(error) => {
                let rel = FieldPath::from_serde(error.path());
                let message = error.inner().to_string();
                // `missing field `x`` is reported at the parent; name the field itself.
                let field_rel = missing_field(&message).map_or_else(|| rel.clone(), |name| rel.key(name));
                report.errors.push(LoadError::Invalid {
                    at: self.at(&rel),
                    field: self.path(&field_rel).to_string(),
                    message,
                });
                None
            }
        }
    }
}

fn missing_field(message: &str) -> Option<&str> {
    message.strip_prefix("missing field `")?.split('`').next()
}

/// `metadata.name` of an object, or an error at it.
pub(crate) fn required_name(ctx: &Ctx<'_>, name: Option<&String>, report: &mut Report) -> Option<String> {
    match name {
        Some(name) if !name.is_empty() => Some(name.clone()),
        _ => {
            let rel = FieldPath::root().key("metadata").key("name");
            report
                .errors
                .push(ctx.invalid(&rel, "Required value: every policy and binding needs a name"));
            None
        }
    }
}
