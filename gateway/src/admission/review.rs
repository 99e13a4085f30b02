//! The wire form of the answer: an `admission.k8s.io/v1` AdmissionReview carrying the
//! response, and the `v1 Status` body of requests that are not reviews at all.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::json_out;

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

impl ReviewResponse {
    /// The review as JSON, byte for byte what serde_json writes for it (`json_out`).
    pub fn to_json(&self) -> Vec<u8> {
        let response = &self.response;
        let message = response.status.as_ref().map_or(0, |s| s.message.len());
        let mut out = Vec::with_capacity(160 + response.uid.len() + message);
        out.push(b'{');
        json_out::key(&mut out, "apiVersion");
        json_out::string(&mut out, self.api_version);
        json_out::next_key(&mut out, "kind");
        json_out::string(&mut out, self.kind);
        json_out::next_key(&mut out, "response");
        out.push(b'{');
        json_out::key(&mut out, "uid");
        json_out::string(&mut out, &response.uid);
        json_out::next_key(&mut out, "allowed");
        json_out::boolean(&mut out, response.allowed);
        if let Some(status) = &response.status {
            json_out::next_key(&mut out, "status");
            out.push(b'{');
            json_out::key(&mut out, "status");
            json_out::string(&mut out, status.status);
            json_out::next_key(&mut out, "code");
            json_out::number(&mut out, u64::from(status.code));
            json_out::next_key(&mut out, "reason");
            json_out::string(&mut out, status.reason);
            json_out::next_key(&mut out, "message");
            json_out::string(&mut out, &status.message);
            out.push(b'}');
        }
        if !response.warnings.is_empty() {
            json_out::next_key(&mut out, "warnings");
            json_out::strings(&mut out, response.warnings.iter().map(String::as_str));
        }
        if !response.audit_annotations.is_empty() {
            json_out::next_key(&mut out, "auditAnnotations");
            out.push(b'{');
            for (index, (key, value)) in response.audit_annotations.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                json_out::string(&mut out, key);
                out.push(b':');
                json_out::string(&mut out, value);
            }
            out.push(b'}');
        }
        out.extend_from_slice(b"}}");
        out
    }

    /// The HTTP answer carrying the review (`application/json`).
    pub fn reply(&self) -> warp::reply::Response {
        let mut answer = warp::reply::Response::new(self.to_json().into());
        answer.headers_mut().insert(
            warp::http::header::CONTENT_TYPE,
            warp::http::HeaderValue::from_static("application/json"),
        );
        answer
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

    /// The hand-written review is serde_json's, byte for byte, whatever it carries.
    #[test]
    fn the_written_review_is_serde_jsons() {
        let message = "the request \"scales\" StatefulSet db/pg\nto 1: \u{1}\t😀 \\ done";
        let mut reviews = vec![
            ReviewResponse::allow("u-1"),
            ReviewResponse::allow(""),
            ReviewResponse::deny("u-\"2", 403, message),
            ReviewResponse::deny("u-3", 500, ""),
            ReviewResponse::deny("u-4", 413, "x".repeat(1000)),
        ];
        let mut full = ReviewResponse::deny("u-5", 401, message);
        full.response.warnings = vec!["one".into(), "two \"quoted\"".into(), String::new()];
        full.response
            .audit_annotations
            .insert("suture.dev/b".into(), "2".into());
        full.response
            .audit_annotations
            .insert("suture.dev/a".into(), message.into());
        reviews.push(full);
        let mut warned = ReviewResponse::allow("u-6");
        warned.response.warnings.push("w".into());
        reviews.push(warned);
        for review in &reviews {
            let written = review.to_json();
            assert_eq!(
                String::from_utf8(written).unwrap(),
                serde_json::to_string(review).unwrap()
            );
        }
    }
}
