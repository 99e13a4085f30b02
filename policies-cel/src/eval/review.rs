//! The direct reading of an AdmissionReview into a [`Request`]: the request's own fields are
//! read as typed, the objects are moved out of the document as they came (their JSON is what
//! the estimate and the CEL conversions read) and typed without serde's buffering of flattened
//! fields. It gives what the typed review gives; anything unusual (an extra top-level field, an
//! object without apiVersion/kind, a malformed field) returns `None`, and the caller takes the
//! typed reading, whose result or error is the reference.

use kube_core::admission::AdmissionRequest;
use kube_core::{DynamicObject, ObjectMeta, TypeMeta};
use serde::Deserialize;
use serde_json::Value as Json;

use crate::eval::request::{ObjectsJson, Request, request_value_from_fields};

/// Reads `review` (an `admission.k8s.io/v1` AdmissionReview with a request), moving its objects
/// out of it; `None`, with `review` untouched, when it is anything but the usual shape.
pub(super) fn read(review: &mut Json) -> Option<Request> {
    let envelope = review.as_object()?;
    if envelope
        .keys()
        .any(|key| !matches!(key.as_str(), "apiVersion" | "kind" | "request"))
    {
        return None;
    }
    let types = TypeMeta {
        api_version: envelope.get("apiVersion")?.as_str()?.to_owned(),
        kind: envelope.get("kind")?.as_str()?.to_owned(),
    };
    let raw = envelope.get("request")?.as_object()?;
    let fields: serde_json::Map<String, Json> = raw
        .iter()
        .filter(|(key, _)| !matches!(key.as_str(), "object" | "oldObject"))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let fields = Json::Object(fields);
    let mut admission = AdmissionRequest::<DynamicObject>::deserialize(&fields).ok()?;
    admission.types = types;
    admission.object = typed(raw.get("object"))?;
    admission.old_object = typed(raw.get("oldObject"))?;
    let options = admission.options.as_ref().map(|options| options.0.clone());
    let Json::Object(fields) = fields else {
        return None;
    };
    let request = request_value_from_fields(fields);
    let raw = review.get_mut("request")?.as_object_mut()?;
    let mut take = |key: &str| raw.remove(key).filter(|value| !value.is_null());
    let objects = ObjectsJson {
        object: take("object"),
        old_object: take("oldObject"),
        options,
    };
    Some(Request::assemble(admission, objects, request))
}

/// The typed object (`Some(None)` for an absent or null one); `None` when it does not read.
fn typed(json: Option<&Json>) -> Option<Option<DynamicObject>> {
    match json {
        None | Some(Json::Null) => Some(None),
        Some(json) => dynamic_object(json)
            .or_else(|| DynamicObject::deserialize(json).ok())
            .map(Some),
    }
}

/// `json` as a [`DynamicObject`], equal to what its derived `Deserialize` gives, for the usual
/// shape: a map with string `apiVersion` and `kind` and a map (or no) `metadata`.
fn dynamic_object(json: &Json) -> Option<DynamicObject> {
    let map = json.as_object()?;
    let types = TypeMeta {
        api_version: map.get("apiVersion")?.as_str()?.to_owned(),
        kind: map.get("kind")?.as_str()?.to_owned(),
    };
    let metadata = match map.get("metadata") {
        None => ObjectMeta::default(),
        Some(metadata @ Json::Object(_)) => ObjectMeta::deserialize(metadata).ok()?,
        Some(_) => return None,
    };
    let data = map
        .iter()
        .filter(|(key, _)| !matches!(key.as_str(), "apiVersion" | "kind" | "metadata"))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    Some(DynamicObject {
        types: Some(types),
        metadata,
        data: Json::Object(data),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_type_as_the_derived_deserializer_types_them() {
        let objects = [
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                   "metadata": {"name": "db", "namespace": "x", "labels": {"a": "b"}, "generation": 3,
                                "creationTimestamp": "2025-01-08T17:02:11Z",
                                "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "o", "uid": "u", "controller": true}]},
                   "spec": {"replicas": 1, "f": 1.5, "big": 18446744073709551615u64}, "status": {}}),
            json!({"apiVersion": "v1", "kind": "Pod"}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}, "data": null}),
        ];
        for object in objects {
            let derived = DynamicObject::deserialize(&object).unwrap();
            assert_eq!(dynamic_object(&object), Some(derived), "{object}");
        }
        // Unusual shapes are left to the derived deserializer.
        for unusual in [
            json!({"kind": "Pod"}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": null}),
            json!("x"),
        ] {
            assert_eq!(dynamic_object(&unusual), None, "{unusual}");
        }
    }

    /// Every recorded AdmissionReview (JSON) of the repository.
    fn recorded_reviews() -> Vec<(std::path::PathBuf, Json)> {
        let mut found = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../testdata"
        ))];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "json")
                    && let Ok(json) = serde_json::from_slice::<Json>(&std::fs::read(&path).unwrap())
                    && json.get("kind").and_then(Json::as_str) == Some("AdmissionReview")
                {
                    found.push((path, json));
                }
            }
        }
        found
    }

    #[test]
    fn the_direct_reading_equals_the_typed_one_on_every_recorded_review() {
        let reviews = recorded_reviews();
        assert!(reviews.len() >= 10, "{}", reviews.len());
        let mut direct_reads = 0;
        for (path, review) in reviews {
            let typed = Request::from_review_typed(review.clone());
            let direct = read(&mut review.clone());
            let (Ok(typed), Some(direct)) = (typed, direct) else {
                continue;
            };
            direct_reads += 1;
            let wire = |r: &Request| {
                let mut admission = serde_json::to_value(&r.admission).unwrap();
                admission["types"] = json!([r.admission.types.api_version, r.admission.types.kind]);
                admission
            };
            assert_eq!(wire(&direct), wire(&typed), "{}", path.display());
            assert_eq!(direct.request(), typed.request(), "{}", path.display());
            assert_eq!(direct.object(), typed.object(), "{}", path.display());
            assert_eq!(direct.old_object(), typed.old_object(), "{}", path.display());
            let (a, b) = (direct.objects_json(), typed.objects_json());
            assert_eq!(
                (&a.object, &a.old_object, &a.options),
                (&b.object, &b.old_object, &b.options)
            );
        }
        assert!(direct_reads >= 10, "{direct_reads}");
    }

    #[test]
    fn unusual_reviews_are_left_to_the_typed_reading() {
        let review = json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                        "resource": {"group": "", "version": "v1", "resource": "pods"},
                        "operation": "CREATE", "userInfo": {"username": "me"},
                        "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}}
        });
        assert!(read(&mut review.clone()).is_some());
        let mut extra = review.clone();
        extra["response"] = json!({"uid": "u", "allowed": true});
        assert!(read(&mut extra).is_none());
        let mut malformed = review.clone();
        malformed["request"]["operation"] = json!("SMASH");
        let before = malformed.clone();
        assert!(read(&mut malformed).is_none());
        assert_eq!(malformed, before, "a review read no further is left as it was");
        let error = Request::from_review(malformed).unwrap_err().to_string();
        assert!(error.contains("request.operation"), "{error}");
    }
}
