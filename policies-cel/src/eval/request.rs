//! An admission request prepared for evaluation: the wire form plus its CEL values, built once.

use kube_core::DynamicObject;
use kube_core::admission::{AdmissionRequest, AdmissionReview};
use serde_json::Value as Json;

use crate::cel::Value;
use crate::cel::value::from_json;

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
    pub(crate) object: Value,
    pub(crate) old_object: Value,
    pub(crate) request: Value,
}

impl Request {
    /// Prepares a request received on the wire.
    pub fn new(admission: AdmissionRequest<DynamicObject>) -> Self {
        let object = admission.object.as_ref().map_or(Value::Null, object_value);
        let old_object = admission.old_object.as_ref().map_or(Value::Null, object_value);
        let request = request_value(&admission);
        Self {
            admission,
            object,
            old_object,
            request,
        }
    }

    /// Reads an `admission.k8s.io/v1` AdmissionReview (already parsed from JSON or YAML).
    pub fn from_review(review: Json) -> Result<Self, RequestError> {
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
        let Some(raw) = review.get("request").filter(|r| !r.is_null()) else {
            return Err(RequestError::NoRequest);
        };
        // CEL values straight from the wire JSON: no round trip through the typed objects.
        let object = raw.get("object").map_or(Value::Null, from_json);
        let old_object = raw.get("oldObject").map_or(Value::Null, from_json);
        let request = request_value_from_json(raw);
        let review: AdmissionReview<DynamicObject> =
            serde_path_to_error::deserialize(review).map_err(|e| RequestError::Malformed {
                path: e.path().to_string(),
                message: e.inner().to_string(),
            })?;
        let admission: AdmissionRequest<DynamicObject> =
            review.try_into().map_err(|_| RequestError::NoRequest)?;
        Ok(Self {
            admission,
            object,
            old_object,
            request,
        })
    }

    /// The request's operation as Kubernetes spells it (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`).
    pub fn operation(&self) -> &'static str {
        operation_name(&self.admission)
    }

    /// `object` as CEL sees it (null on DELETE).
    pub fn object(&self) -> &Value {
        &self.object
    }

    /// `oldObject` as CEL sees it (null on CREATE).
    pub fn old_object(&self) -> &Value {
        &self.old_object
    }

    /// `request` as CEL sees it.
    pub fn request(&self) -> &Value {
        &self.request
    }
}

fn object_value(object: &DynamicObject) -> Value {
    serde_json::to_value(object).map_or(Value::Null, |json| from_json(&json))
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
    let mut fields: serde_json::Map<String, Json> = raw
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.as_str() != "object" && k.as_str() != "oldObject")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    fields.entry("dryRun").or_insert(Json::Bool(false));
    fields.entry("options").or_insert(Json::Null);
    from_json(&Json::Object(fields))
}
