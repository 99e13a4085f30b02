//! The wire form of the answer: an `admission.k8s.io/v1` AdmissionReview carrying the
//! response, and the `v1 Status` body of requests that are not reviews at all.

use std::collections::BTreeMap;

use serde::Serialize;

/// `{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewResponse {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub response: AdmissionResponse,
}

/// The `response` of an AdmissionReview.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    pub uid: String,
    pub allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub audit_annotations: BTreeMap<String, String>,
}

/// The `status` of a denial (a `meta/v1 Status` without type meta).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    pub status: &'static str,
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
}

impl Status {
    /// A failure with `code`, its Kubernetes reason, and `message`.
    pub fn failure(code: u16, message: impl Into<String>) -> Self {
        Self {
            status: "Failure",
            code,
            reason: reason_of(code),
            message: message.into(),
        }
    }
}

/// A whole `v1 Status` document: the body of an HTTP error that carries no review.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDocument {
    pub api_version: &'static str,
    pub kind: &'static str,
    #[serde(flatten)]
    pub status: Status,
}

impl StatusDocument {
    /// A `v1 Status` failure document.
    pub fn failure(code: u16, message: impl Into<String>) -> Self {
        Self {
            api_version: "v1",
            kind: "Status",
            status: Status::failure(code, message),
        }
    }
}

impl ReviewResponse {
    /// Wraps `response` in an AdmissionReview.
    pub fn new(response: AdmissionResponse) -> Self {
        Self {
            api_version: "admission.k8s.io/v1",
            kind: "AdmissionReview",
            response,
        }
    }

    /// Allowed, nothing else said.
    pub fn allow(uid: &str) -> Self {
        Self::new(AdmissionResponse {
            uid: uid.to_owned(),
            allowed: true,
            status: None,
            warnings: Vec::new(),
            audit_annotations: BTreeMap::new(),
        })
    }

    /// Denied with `code` and `message`.
    pub fn deny(uid: &str, code: u16, message: impl Into<String>) -> Self {
        Self::new(AdmissionResponse {
            uid: uid.to_owned(),
            allowed: false,
            status: Some(Status::failure(code, message)),
            warnings: Vec::new(),
            audit_annotations: BTreeMap::new(),
        })
    }
}

/// The Kubernetes `StatusReason` of an HTTP code.
pub fn reason_of(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        413 => "RequestEntityTooLarge",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "InternalError",
    }
}

/// The code a webhook denial is answered with: 403 Forbidden (how kube-apiserver reports webhook
/// denials), unless the policy chose Unauthorized or RequestEntityTooLarge, or the gateway could
/// not evaluate a failurePolicy Fail policy (InternalError, 500: worth a retry).
pub fn denial_code(reason: &str) -> u16 {
    match reason {
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        "InternalError" => 500,
        _ => 403,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_form_matches_kubernetes() {
        let mut review = ReviewResponse::deny("u-1", 403, "no");
        review.response.warnings.push("careful".into());
        let json = serde_json::to_value(&review).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "response": {
                    "uid": "u-1",
                    "allowed": false,
                    "status": {"status": "Failure", "code": 403, "reason": "Forbidden", "message": "no"},
                    "warnings": ["careful"],
                }
            })
        );
        let allow = serde_json::to_value(ReviewResponse::allow("u-2")).unwrap();
        assert_eq!(
            allow["response"],
            serde_json::json!({"uid": "u-2", "allowed": true})
        );
    }
}
