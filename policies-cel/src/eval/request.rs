//! An admission request prepared for evaluation: the typed wire form, the objects' JSON (read
//! once, by the estimate and the CEL conversions alike) and their CEL values, each built at most
//! once per request: `request` at once (every policy reads it), `object` and `oldObject` on first
//! read (most policies never do).

use std::sync::OnceLock;

use kube_core::DynamicObject;
use kube_core::admission::{AdmissionRequest, AdmissionReview};
use serde_json::Value as Json;

use crate::cel::Value;
use crate::cel::value::{from_json, from_json_owned};
use crate::eval::review;

/// Why a document is not an admission request we can judge.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("expected an AdmissionReview of apiVersion admission.k8s.io/v1, found {found}")]
    NotAReview { found: String },
    #[error("the AdmissionReview has no `request`")]
    NoRequest,
    #[error("the AdmissionReview is malformed at `{path}`: {message}")]
    Malformed { path: String, message: String },
}

/// One admission request, ready to be judged by any number of policies.
#[derive(Debug, Clone)]
pub struct Request {
    pub admission: AdmissionRequest<DynamicObject>,
    json: ObjectsJson,
    object: OnceLock<Value>,
    old_object: OnceLock<Value>,
    request: Value,
}

/// The request's objects and delete options as JSON documents (`None`: absent or null).
#[derive(Debug, Clone, Default)]
pub(crate) struct ObjectsJson {
    pub object: Option<Json>,
    pub old_object: Option<Json>,
    pub options: Option<Json>,
}

impl Request {
    /// Prepares a request received on the wire.
    pub fn new(admission: AdmissionRequest<DynamicObject>) -> Self {
        let json =
            |object: &Option<DynamicObject>| object.as_ref().and_then(|o| serde_json::to_value(o).ok());
        let objects = ObjectsJson {
            object: json(&admission.object),
            old_object: json(&admission.old_object),
            options: admission
                .options
                .as_ref()
                .and_then(|o| serde_json::to_value(o).ok()),
        };
        let request = request_value(&admission);
        Self::assemble(admission, objects, request)
    }

    /// The parts, with the objects' CEL values still to be built.
    pub(crate) fn assemble(
        admission: AdmissionRequest<DynamicObject>,
        json: ObjectsJson,
        request: Value,
    ) -> Self {
        Self {
            admission,
            json,
            object: OnceLock::new(),
            old_object: OnceLock::new(),
            request,
        }
    }

    /// Reads an `admission.k8s.io/v1` AdmissionReview (already parsed from JSON or YAML).
    pub fn from_review(mut review: Json) -> Result<Self, RequestError> {
        let api_version = review.get("apiVersion").and_then(Json::as_str).unwrap_or("");
        let kind = review.get("kind").and_then(Json::as_str).unwrap_or("");
        if api_version != "admission.k8s.io/v1" || kind != "AdmissionReview" {
            let found = if api_version.is_empty() && kind.is_empty() {
                "a document without apiVersion/kind".to_owned()
            } else {
                format!("{api_version} {kind}")
            };
            return Err(RequestError::NotAReview { found });
        }
        if review.get("request").is_none_or(Json::is_null) {
            return Err(RequestError::NoRequest);
        }
        if let Some(request) = review::read(&mut review) {
            return Ok(request);
        }
        Self::from_review_typed(review)
    }

    /// The reference reading, through the typed review: taken when the review is unusual in any
    /// way (and so for every malformed one, whose error names the field at fault).
    pub(super) fn from_review_typed(review: Json) -> Result<Self, RequestError> {
        let Some(raw) = review.get("request") else {
            return Err(RequestError::NoRequest);
        };
        let objects = ObjectsJson {
            object: raw.get("object").filter(|o| !o.is_null()).cloned(),
            old_object: raw.get("oldObject").filter(|o| !o.is_null()).cloned(),
            options: raw.get("options").filter(|o| !o.is_null()).cloned(),
        };
        let request = request_value_from_json(raw);
        let review: AdmissionReview<DynamicObject> =
            serde_path_to_error::deserialize(review).map_err(|e| RequestError::Malformed {
                path: e.path().to_string(),
                message: e.inner().to_string(),
            })?;
        let admission: AdmissionRequest<DynamicObject> =
            review.try_into().map_err(|_| RequestError::NoRequest)?;
        Ok(Self::assemble(admission, objects, request))
    }

    /// The request's operation as Kubernetes spells it (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`).
    pub fn operation(&self) -> &'static str {
        operation_name(&self.admission)
    }

    /// `object` as CEL sees it (null on DELETE), converted on first use.
    pub fn object(&self) -> &Value {
        self.object.get_or_init(|| cel_of(self.json.object.as_ref()))
    }

    /// `oldObject` as CEL sees it (null on CREATE), converted on first use.
    pub fn old_object(&self) -> &Value {
        self.old_object
            .get_or_init(|| cel_of(self.json.old_object.as_ref()))
    }

    /// `request` as CEL sees it.
    pub fn request(&self) -> &Value {
        &self.request
    }

    /// The objects and options as JSON, for the impact estimate.
    pub(crate) fn objects_json(&self) -> &ObjectsJson {
        &self.json
    }
}

fn cel_of(json: Option<&Json>) -> Value {
    json.map_or(Value::Null, from_json)
}

/// The operation of `admission` as Kubernetes spells it (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`).
pub fn operation_name(admission: &AdmissionRequest<DynamicObject>) -> &'static str {
    use kube_core::admission::Operation;
    match admission.operation {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
        Operation::Connect => "CONNECT",
    }
}

/// The `request` variable: the AdmissionRequest fields without the objects.
fn request_value(admission: &AdmissionRequest<DynamicObject>) -> Value {
    request_value_from_json(&serde_json::to_value(admission).unwrap_or(Json::Null))
}

fn request_value_from_json(raw: &Json) -> Value {
    let fields: serde_json::Map<String, Json> = raw
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.as_str() != "object" && k.as_str() != "oldObject")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    request_value_from_fields(fields)
}

/// The `request` variable from the request's fields other than the objects.
pub(crate) fn request_value_from_fields(mut fields: serde_json::Map<String, Json>) -> Value {
    fields.entry("dryRun").or_insert(Json::Bool(false));
    fields.entry("options").or_insert(Json::Null);
    from_json_owned(Json::Object(fields))
}
