//! Where an object being loaded sits (file, document, lines of its fields), and its decoding into
//! typed structs with field-precise errors and unknown-field warnings.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::cel::KubernetesVersion;
use crate::policy::LoadError;
use crate::policy::SourceRef;
use crate::policy::marked::Pos;
use crate::policy::path::{FieldPath, Seg};

/// What loading found besides results: errors (loading fails) and warnings (it does not).
#[derive(Debug, Clone, Default)]
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

/// A loader warning: where, about which field, and what; displayed as printed
/// (`file:line: field: message`).
#[derive(Debug, Clone)]
pub(crate) struct Warning {
    pub(crate) kind: WarningKind,
    pub(crate) at: SourceRef,
    /// The field's full path in the document (`spec.validatons`).
    pub(crate) field: String,
    pub(crate) message: String,
}

impl fmt::Display for Warning {
    /// `file:line: field: message`; an unknown field's message names the field itself
    /// (`file:line: unknown field `spec.validatons``).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.at.file, self.at.line)?;
        if self.kind != WarningKind::UnknownField {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// One object of a document: the document's position tree and the object's path in it (the root,
/// or `items[3]` in a `kind: List`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub(crate) file: &'a str,
    /// The Kubernetes version expressions compile for.
    pub(crate) version: KubernetesVersion,
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

    /// A warning about the field at `rel`.
    pub(crate) fn warning(&self, kind: WarningKind, rel: &FieldPath, message: &str) -> Warning {
        Warning {
            kind,
            at: self.at(rel),
            field: self.path(rel).to_string(),
            message: message.to_owned(),
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
            let message = format!("unknown field `{}`", self.path(rel));
            let warning = self.warning(WarningKind::UnknownField, rel, &message);
            report.warnings.push(warning);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_print_file_line_field_and_message() {
        let pos = Pos::leaf(1);
        let root = FieldPath::root();
        let ctx = Ctx {
            file: "p.yaml",
            version: KubernetesVersion::DEFAULT,
            document: 1,
            first_line: 3,
            pos: &pos,
            base: &root,
        };
        let older = ctx.warning(
            WarningKind::OlderVersion,
            &root.key("apiVersion"),
            "admissionregistration.k8s.io/v1beta1 is read as admissionregistration.k8s.io/v1",
        );
        assert_eq!(
            older.to_string(),
            "p.yaml:3: apiVersion: admissionregistration.k8s.io/v1beta1 is read as admissionregistration.k8s.io/v1"
        );
        let mut report = Report::default();
        let decoded: Option<serde_json::Map<String, Value>> =
            ctx.decode(&serde_json::json!({"a": 1}), &mut report);
        assert!(decoded.is_some());
        // A map keeps every field: nothing unknown. A struct without the field warns.
        #[derive(serde::Deserialize)]
        struct Empty {}
        let _: Option<Empty> = ctx.decode(&serde_json::json!({"spec": {"x": 1}}), &mut report);
        let texts: Vec<String> = report.warnings.iter().map(Warning::to_string).collect();
        assert_eq!(texts, ["p.yaml:3: unknown field `spec`"]);
        assert_eq!(report.warnings[0].message, "unknown field `spec`");
        assert_eq!(report.warnings[0].field, "spec");
    }
}
