//! Where the lint finds CustomResourceDefinitions: among the linted files (a policy directory
//! often ships its operator's CRDs; they are read, not reported as unknown kinds, and a broken
//! one is an `invalid-field` finding), and in the files given apart (`--crds`: YAML or JSON, one
//! CRD per document or a `kind: List` of them as `kubectl get crd -o yaml` prints; other objects
//! are skipped, and a broken CRD is an error naming its file and line).

use crate::policy::LoadError;
use crate::policy::path::FieldPath;
use crate::policy::read::{self, ParsedDocument};

use crate::lint::LintError;
use crate::lint::crds::{self, Crds};
use crate::lint::finding::{Code, Severity};
use crate::lint::objects::{Object, ObjectKind};
use crate::lint::sink::{Says, Sink};
use crate::lint::source::last_key;

/// The CRDs among the linted `objects`; each broken one is reported and gives no kind.
pub(crate) fn in_objects(sink: &mut Sink<'_>, objects: &[Object]) -> Crds {
    let mut found = Crds::default();
    for object in objects
        .iter()
        .filter(|o| o.kind() == ObjectKind::CustomResourceDefinition)
    {
        match crds::read(&object.value) {
            Ok(kinds) => found.add(kinds),
            Err(broken) => {
                let field = object.path(&broken.field);
                let line = object.line_of(&broken.field);
                let place = sink.files[object.file].field(line, last_key(&field));
                let says = Says::new(
                    Severity::Error,
                    Code::InvalidField,
                    format!("{field} {}", broken.message),
                )
                .help(format!(
                    "the CustomResourceDefinition `{}` is not read: lint checks no field of its custom resources",
                    object.name().unwrap_or_default()
                ))
                .field(field);
                sink.push(object.file, place, says);
            }
        }
    }
    found
}

/// The CRDs of a file given apart, `name` holding `text`, and how many CRD objects it holds.
pub(crate) fn in_file(name: &str, text: &str) -> Result<(Crds, usize), LintError> {
    let mut found = Crds::default();
    let mut count = 0;
    for document in read::documents(name, text) {
        let ParsedDocument { line, marked, .. } = document.map_err(|error| syntax(name, error))?;
        let line_of = |at: &FieldPath| line + marked.pos.line_of(at).max(1) - 1;
        let objects = read::objects(&marked.value).map_err(|items| LintError::Crd {
            file: name.to_owned(),
            line: line_of(&items),
            message: "the List's items must be a list".to_owned(),
        })?;
        for (base, value) in objects {
            let text = |field: &str| value.get(field).and_then(|v| v.as_str()).unwrap_or_default();
            if !crds::is_crd(text("apiVersion"), text("kind")) {
                continue;
            }
            count += 1;
            let kinds = crds::read(value).map_err(|broken| {
                let at = base.join(&broken.field);
                let crd = value.pointer("/metadata/name").and_then(|v| v.as_str());
                LintError::Crd {
                    file: name.to_owned(),
                    line: line_of(&at),
                    message: format!(
                        "CustomResourceDefinition `{}`: {at} {}",
                        crd.unwrap_or_default(),
                        broken.message
                    ),
                }
            })?;
            found.add(kinds);
        }
    }
    Ok((found, count))
}

fn syntax(name: &str, error: LoadError) -> LintError {
    match error {
        LoadError::Syntax { at, column, message } => LintError::Crd {
            file: at.file,
            line: at.line,
            message: format!("YAML syntax error at column {column}: {message}"),
        },
        other => LintError::Crd {
            file: name.to_owned(),
            line: other.source_ref().map_or(1, |at| at.line),
            message: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: backups.example.com\nspec:\n  group: example.com\n  names:\n    kind: Backup\n    plural: backups\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n";

    #[test]
    fn crds_lists_and_other_objects() {
        let (crds, count) = in_file(
            "crds.yaml",
            &format!("{CRD}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\n"),
        )
        .unwrap();
        assert_eq!((crds.len(), count), (1, 1));
        let list: serde_json::Value = serde_yaml_ng::from_str(CRD).unwrap();
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [list]});
        let (crds, count) = in_file("crds.json", &list.to_string()).unwrap();
        assert_eq!((crds.len(), count), (1, 1));
    }

    #[test]
    fn a_broken_crd_names_its_file_and_line() {
        let broken = CRD.replace("    plural: backups\n", "");
        let error = in_file("crds.yaml", &format!("a: 1\n---\n{broken}")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "crds.yaml:9: CustomResourceDefinition `backups.example.com`: spec.names.plural is required"
        );
        let error = in_file("crds.yaml", "a: [\n").unwrap_err();
        assert!(
            error.to_string().starts_with("crds.yaml:2: YAML syntax error"),
            "{error}"
        );
    }
}
