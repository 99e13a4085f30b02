//! Stripping on arrival: an object from a watch becomes the JSON the projection reads, through
//! policies-cel's [`object_json`] — no `metadata.managedFields`, no last-applied annotation, no
//! values of Secrets and ConfigMaps (their key names are kept).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::{ApiResource, DynamicObject, PartialObjectMeta};
pub use policies_cel::cluster::api::strip::{LAST_APPLIED, Values, object_json, object_json_with};
use serde_json::Value;

/// An object a watch delivers: its metadata and the rest of its fields.
pub trait Watched:
    kube::Resource<DynamicType = ApiResource>
    + Clone
    + serde::de::DeserializeOwned
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
    /// Metadata, and every other field as a JSON object (`Value::Null` when only metadata is
    /// watched).
    fn into_parts(self) -> (ObjectMeta, Value);
}

impl Watched for DynamicObject {
    fn into_parts(self) -> (ObjectMeta, Value) {
        (self.metadata, self.data)
    }
}

impl Watched for PartialObjectMeta<DynamicObject> {
    fn into_parts(self) -> (ObjectMeta, Value) {
        (self.metadata, Value::Null)
    }
}

/// A watched object, stripped.
pub fn watched_json<K: Watched>(resource: &ApiResource, object: K) -> Value {
    watched_json_with(resource, object, Values::Blank)
}

/// A watched object, stripped, keeping Secret and ConfigMap values when `values` says so
/// (params objects).
pub fn watched_json_with<K: Watched>(resource: &ApiResource, object: K, values: Values) -> Value {
    let (meta, data) = object.into_parts();
    object_json_with(resource, meta, data, values)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
    use serde_json::json;

    fn dynamic(value: Value) -> DynamicObject {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn secrets_keep_key_names_only() {
        let secret = dynamic(json!({
            "metadata": {
                "name": "db", "namespace": "shop",
                "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
                "annotations": {LAST_APPLIED: "{\"data\":{\"password\":\"aHVudGVyMg==\"}}", "team": "a"}
            },
            "type": "Opaque",
            "data": {"password": "aHVudGVyMg==", "user": "YWRtaW4="},
            "stringData": {"token": "plain"}
        }));
        let json = watched_json(&ApiResource::erase::<Secret>(&()), secret);
        assert_eq!(json["apiVersion"], "v1");
        assert_eq!(json["kind"], "Secret");
        assert_eq!(json["data"], json!({"password": "", "user": ""}));
        assert_eq!(json["stringData"], json!({"token": ""}));
        assert_eq!(json["metadata"]["annotations"], json!({"team": "a"}));
        assert!(json["metadata"].get("managedFields").is_none());
        let text = json.to_string();
        assert!(!text.contains("aHVudGVyMg") && !text.contains("plain"), "{text}");
    }

    #[test]
    fn config_maps_keep_key_names_only() {
        let config = dynamic(json!({
            "metadata": {"name": "app", "namespace": "shop"},
            "data": {"app.yaml": "password: x"},
            "binaryData": {"blob": "AAAA"}
        }));
        let json = watched_json(&ApiResource::erase::<ConfigMap>(&()), config);
        assert_eq!(json["data"], json!({"app.yaml": ""}));
        assert_eq!(json["binaryData"], json!({"blob": ""}));
    }

    #[test]
    fn other_kinds_keep_their_fields_and_lose_managed_fields() {
        let pod = dynamic(json!({
            "metadata": {"name": "web", "namespace": "shop", "managedFields": [{"manager": "k"}]},
            "spec": {"nodeName": "n1", "containers": []},
            "status": {"phase": "Running"}
        }));
        let json = watched_json(&ApiResource::erase::<Pod>(&()), pod);
        assert_eq!(json["spec"]["nodeName"], "n1");
        assert_eq!(json["status"]["phase"], "Running");
        assert_eq!(json["metadata"], json!({"name": "web", "namespace": "shop"}));
    }

    #[test]
    fn metadata_only_objects_get_their_type() {
        let resource = ApiResource {
            group: "example.com".into(),
            version: "v1".into(),
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
        };
        let meta: PartialObjectMeta<DynamicObject> = serde_json::from_value(
            json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
                "metadata": {"name": "w", "namespace": "ns"}}),
        )
        .unwrap();
        let json = watched_json(&resource, meta);
        assert_eq!(
            json,
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "ns"}})
        );
    }
}
