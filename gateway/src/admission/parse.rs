//! From body bytes to a [`Request`]: the one-pass reading of the usual review
//! ([`Request::from_wire`], objects kept as text until read), or else UTF-8, JSON (serde_json's
//! recursion limit turns deeply nested documents into an error) and `Request::from_review`,
//! whose errors say what is wrong. A body that cannot be judged keeps its request uid when one
//! can be read, so the answer can still be a review.

use policies_cel::Request;
use serde_json::Value;

/// Why a body is not a request we can judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// `request.uid`, when the body got far enough to have one.
    pub uid: Option<String>,
    pub message: String,
}

/// Parses an AdmissionReview v1 body: the one-pass reading, or else [`parse_typed`].
pub fn parse(body: &[u8]) -> Result<Request, Unreadable> {
    match Request::from_wire(body) {
        Some(request) => Ok(request),
        None => parse_typed(body),
    }
}

/// Parses a body the one-pass reading ([`Request::from_wire`], [`policies_cel::WireReview::read`])
/// refused: through a JSON tree and `Request::from_review`, whose errors say what is wrong (or
/// which judges an odd but valid review).
pub fn parse_typed(body: &[u8]) -> Result<Request, Unreadable> {
    let unreadable = |uid: Option<String>, message: String| Unreadable { uid, message };
    if let Err(error) = std::str::from_utf8(body) {
        return Err(unreadable(
            None,
            format!(
                "the body is not UTF-8 text (invalid byte at offset {})",
                error.valid_up_to()
            ),
        ));
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(unreadable(
            None,
            "the body is empty: expected an AdmissionReview".into(),
        ));
    }
    let value: Value = serde_json::from_slice(body).map_err(|error| {
        let message = if error.to_string().contains("recursion limit") {
            format!("the body is nested too deeply to be an AdmissionReview ({error})")
        } else {
            format!("the body is not JSON: {error}")
        };
        unreadable(None, message)
    })?;
    let uid = value
        .pointer("/request/uid")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Request::from_review(value).map_err(|error| unreadable(uid, format!("cannot judge the request: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_garbage_gets_its_own_message() {
        let err = |body: &[u8]| {
            let error = parse(body).unwrap_err();
            assert_eq!(parse_typed(body).unwrap_err(), error);
            error
        };
        assert!(err(b"{not json").message.contains("not JSON"));
        assert!(err(b"\xff\xfe").message.contains("not UTF-8"));
        assert!(err(b"  ").message.contains("empty"));
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(err(deep.as_bytes()).message.contains("nested too deeply"));
        let wrong = err(
            br#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u-9"}}"#,
        );
        assert_eq!(wrong.uid.as_deref(), Some("u-9"));
        assert!(
            wrong.message.contains("admission.k8s.io/v1beta1"),
            "{}",
            wrong.message
        );
        let none = err(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#);
        assert_eq!(none.uid, None);
        assert!(none.message.contains("no `request`"), "{}", none.message);
    }
}
