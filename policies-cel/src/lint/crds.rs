//! CustomResourceDefinitions as kinds the lint knows: each served version of a CRD
//! (`apiextensions.k8s.io/v1`) becomes a [`CustomKind`] whose schema is that version's
//! `openAPIV3Schema`, and [`Crds`] holds them by group, version and plural.
//!
//! The schema is a plain structural JSON schema (properties, items, additionalProperties,
//! `x-kubernetes-preserve-unknown-fields`, `x-kubernetes-int-or-string`), walked as the built-in
//! ones are ([`crate::lint::schema`]). What Kubernetes adds to every custom resource is added
//! here: `apiVersion` and `kind` are strings and `metadata` is the standard `ObjectMeta` (its
//! schema taken from k8s-openapi, whatever the CRD declares below `metadata`). A version with no
//! schema, or not served, gives no kind.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::lint::builtin::object_meta;
use crate::policy::path::FieldPath;

/// The apiVersion of the CRDs the lint reads (`v1beta1` was removed in Kubernetes 1.22).
pub(crate) const API_VERSION: &str = "apiextensions.k8s.io/v1";
/// Their kind.
pub(crate) const KIND: &str = "CustomResourceDefinition";

/// True for a CustomResourceDefinition document the lint reads.
pub(crate) fn is_crd(api_version: &str, kind: &str) -> bool {
    api_version == API_VERSION && kind == KIND
}

/// One served version of a custom resource.
#[derive(Debug)]
pub(crate) struct CustomKind {
    pub(crate) group: String,
    pub(crate) version: String,
    /// The plural the resource is served as (`backups`).
    pub(crate) resource: String,
    pub(crate) kind: String,
    /// The version's `openAPIV3Schema`, with `apiVersion`, `kind` and `metadata` filled in.
    pub(crate) schema: Value,
}

/// What is wrong with a CRD: the field (relative to the CRD object) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Broken {
    pub(crate) field: FieldPath,
    pub(crate) message: String,
}

impl Broken {
    fn new(field: FieldPath, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}

/// The custom kinds a CRD object serves (one per served version with a schema).
pub(crate) fn read(crd: &Value) -> Result<Vec<CustomKind>, Broken> {
    let spec = FieldPath::root().key("spec");
    let names = spec.key("names");
    let text = |at: &FieldPath| -> Result<String, Broken> {
        match get(crd, at) {
            Some(Value::String(text)) if !text.is_empty() => Ok(text.clone()),
            Some(_) => Err(Broken::new(at.clone(), "must be a non-empty string")),
            None => Err(Broken::new(at.clone(), "is required")),
        }
    };
    let group = text(&spec.key("group"))?;
    let resource = text(&names.key("plural"))?;
    let kind = text(&names.key("kind"))?;
    let versions_at = spec.key("versions");
    let Some(Value::Array(versions)) = get(crd, &versions_at) else {
        return Err(Broken::new(versions_at, "must be a list of versions"));
    };
    let mut out = Vec::new();
    for i in 0..versions.len() {
        let at = versions_at.index(i);
        let name = text(&at.key("name"))?;
        let served = match get(crd, &at.key("served")) {
            None => true,
            Some(Value::Bool(served)) => *served,
            Some(_) => return Err(Broken::new(at.key("served"), "must be a boolean")),
        };
        let schema_at = at.key("schema").key("openAPIV3Schema");
        let schema = match get(crd, &schema_at) {
            None | Some(Value::Null) => continue,
            Some(Value::Object(schema)) => schema,
            Some(_) => return Err(Broken::new(schema_at, "must be an object (a JSON schema)")),
        };
        if !served {
            continue;
        }
        out.push(CustomKind {
            group: group.clone(),
            version: name,
            resource: resource.clone(),
            kind: kind.clone(),
            schema: typed(schema.clone()),
        });
    }
    Ok(out)
}

fn get<'a>(value: &'a Value, at: &FieldPath) -> Option<&'a Value> {
    at.0.iter().try_fold(value, |value, seg| match seg {
        crate::policy::path::Seg::Key(key) => value.get(key),
        crate::policy::path::Seg::Index(index) => value.get(index),
    })
}

/// `schema` with what every custom resource has: `apiVersion`, `kind` and the standard
/// `metadata` (whose `$ref`s resolve in the `$defs` added to the root; a structural schema has
/// none of its own).
fn typed(mut schema: Map<String, Value>) -> Value {
    let meta = object_meta();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        let mut metadata = meta.as_object().cloned().unwrap_or_default();
        for key in ["$defs", "$schema", "title"] {
            metadata.remove(key);
        }
        properties.insert("metadata".to_owned(), Value::Object(metadata));
        for key in ["apiVersion", "kind"] {
            properties.insert(key.to_owned(), json!({"type": "string"}));
        }
        if let Some(defs) = meta.get("$defs") {
            schema.insert("$defs".to_owned(), defs.clone());
        }
    }
    Value::Object(schema)
}

/// The custom kinds known to a lint run, found by group, version and plural (the first CRD to
/// serve one wins).
#[derive(Debug, Clone, Default)]
pub(crate) struct Crds(Vec<Arc<CustomKind>>);

impl Crds {
    /// Adds `kinds`, but those already served by an earlier CRD.
    pub(crate) fn add(&mut self, kinds: Vec<CustomKind>) {
        for kind in kinds {
            if self.find(&kind.group, &kind.version, &kind.resource).is_none() {
                self.0.push(Arc::new(kind));
            }
        }
    }

    /// Adds the kinds of another set.
    pub(crate) fn extend(&mut self, other: &Crds) {
        for kind in &other.0 {
            if self.find(&kind.group, &kind.version, &kind.resource).is_none() {
                self.0.push(kind.clone());
            }
        }
    }

    /// The kind served as `resource` by `group`/`version`.
    pub(crate) fn find(&self, group: &str, version: &str, resource: &str) -> Option<Arc<CustomKind>> {
        self.0
            .iter()
            .find(|k| k.group == group && k.version == version && k.resource == resource)
            .cloned()
    }

    /// How many kinds (CRD versions) are known.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(versions: Value) -> Value {
        json!({
            "apiVersion": API_VERSION,
            "kind": KIND,
            "metadata": {"name": "backups.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"plural": "backups", "kind": "Backup"},
                "scope": "Namespaced",
                "versions": versions,
            },
        })
    }

    #[test]
    fn every_served_version_with_a_schema_is_a_kind() {
        let schema =
            json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}});
        let kinds = read(&crd(json!([
            {"name": "v1", "served": true, "storage": true, "schema": schema},
            {"name": "v1beta1", "served": false, "storage": false, "schema": schema},
            {"name": "v1alpha1", "served": true, "storage": false},
        ])))
        .unwrap();
        assert_eq!(kinds.len(), 1);
        let kind = &kinds[0];
        assert_eq!(
            (kind.group.as_str(), kind.version.as_str()),
            ("example.com", "v1")
        );
        assert_eq!(
            (kind.resource.as_str(), kind.kind.as_str()),
            ("backups", "Backup")
        );
        assert!(
            kind.schema
                .pointer("/properties/metadata/properties/labels")
                .is_some()
        );
        assert!(kind.schema.pointer("/properties/apiVersion").is_some());
        assert!(kind.schema.pointer("/$defs").is_some());
    }

    #[test]
    fn a_broken_crd_names_the_field() {
        let mut broken = crd(json!([]));
        broken["spec"]["names"] = json!({"kind": "Backup"});
        let error = read(&broken).unwrap_err();
        assert_eq!(error.field.to_string(), "spec.names.plural");
        let wrong = crd(json!([{"name": "v1", "served": true, "schema": {"openAPIV3Schema": "x"}}]));
        let error = read(&wrong).unwrap_err();
        assert_eq!(error.field.to_string(), "spec.versions[0].schema.openAPIV3Schema");
        assert!(read(&crd(json!({"v1": {}}))).is_err());
    }

    #[test]
    fn the_first_crd_serving_a_resource_wins() {
        let mut crds = Crds::default();
        let schema = json!({"openAPIV3Schema": {"type": "object"}});
        crds.add(read(&crd(json!([{"name": "v1", "served": true, "schema": schema}]))).unwrap());
        crds.add(read(&crd(json!([{"name": "v1", "served": true, "schema": schema}]))).unwrap());
        assert_eq!(crds.len(), 1);
        assert!(crds.find("example.com", "v1", "backups").is_some());
        assert!(crds.find("example.com", "v2", "backups").is_none());
    }
}
