//! Stripping objects read from the API down to what a model may keep: no
//! `metadata.managedFields`, no `kubectl.kubernetes.io/last-applied-configuration` annotation (a
//! full copy of the object, Secret values included when applied from a manifest), and no values
//! of Secrets and ConfigMaps (their key names are kept: the estimate reads which keys exist).
//! The gateway strips what its watches deliver; the plugin what it lists and what it writes
//! into snapshots.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::ApiResource;
use serde_json::{Map, Value};

/// The annotation `kubectl apply` keeps a copy of the applied object in.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// What an object keeps of the values of Secrets and ConfigMaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values {
    /// Key names only (the model: the estimate reads which keys exist).
    Blank,
    /// Everything (params objects: policies read their values).
    Keep,
}

/// The stripped object as JSON, with `apiVersion` and `kind` from `resource` (list items and
/// metadata-only objects do not carry their own), Secret and ConfigMap values blanked.
pub fn object_json(resource: &ApiResource, meta: ObjectMeta, data: Value) -> Value {
    object_json_with(resource, meta, data, Values::Blank)
}

/// [`object_json`], choosing what of Secret and ConfigMap values is kept.
pub fn object_json_with(resource: &ApiResource, mut meta: ObjectMeta, data: Value, values: Values) -> Value {
    meta.managed_fields = None;
    if let Some(annotations) = meta.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
    }
    let mut object = typed(resource, meta, data);
    if resource.group.is_empty() && values == Values::Blank {
        match resource.kind.as_str() {
            "Secret" => blank_values(&mut object, &["data", "stringData"]),
            "ConfigMap" => blank_values(&mut object, &["data", "binaryData"]),
            _ => {}
        }
    }
    Value::Object(object)
}

/// An object as the API returned it, nothing stripped (`kubectl suture snapshot --full`), with
/// its `apiVersion` and `kind` from `resource`.
pub fn full_json(resource: &ApiResource, meta: ObjectMeta, data: Value) -> Value {
    Value::Object(typed(resource, meta, data))
}

/// `data`'s fields with `apiVersion` and `kind` from `resource` and `meta` as `metadata`.
fn typed(resource: &ApiResource, meta: ObjectMeta, data: Value) -> Map<String, Value> {
    let mut object = match data {
        Value::Object(fields) => fields,
        _ => Map::new(),
    };
    object.insert("apiVersion".into(), resource.api_version.clone().into());
    object.insert("kind".into(), resource.kind.clone().into());
    object.insert(
        "metadata".into(),
        serde_json::to_value(meta).unwrap_or(Value::Null),
    );
    object
}

/// Replaces every value under each of `fields` with an empty string, keeping the keys.
fn blank_values(object: &mut Map<String, Value>, fields: &[&str]) {
    for field in fields {
        if let Some(Value::Object(entries)) = object.get_mut(*field) {
            for value in entries.values_mut() {
                *value = Value::String(String::new());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_blanked_or_kept_and_managed_fields_always_go() {
        let resource = ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
        let meta: ObjectMeta = serde_json::from_value(json!({"name": "limits", "namespace": "ops",
            "managedFields": [{"manager": "kubectl"}], "annotations": {LAST_APPLIED: "{}", "team": "a"}}))
        .unwrap();
        let data = json!({"data": {"maxReplicas": "5"}});
        let slim = object_json(&resource, meta.clone(), data.clone());
        assert_eq!(slim["data"], json!({"maxReplicas": ""}));
        let kept = object_json_with(&resource, meta, data, Values::Keep);
        assert_eq!(kept["data"], json!({"maxReplicas": "5"}));
        for object in [slim, kept] {
            assert_eq!(object["kind"], "ConfigMap");
            assert_eq!(object["metadata"]["annotations"], json!({"team": "a"}));
            assert!(object["metadata"].get("managedFields").is_none());
        }
    }
}
