//! The benchmark floor (`--noop`): the same TLS/HTTP stack and body handling, answering every
//! review allowed with its uid echoed, without evaluation.

use serde::Deserialize;
use warp::reply::Response;

use crate::admission::body::Body;
use crate::admission::rejection::{refusal, status_response};
use crate::admission::review::ReviewResponse;

#[derive(Deserialize)]
struct UidOnly<'a> {
    #[serde(borrow)]
    request: Option<RequestUid<'a>>,
}

#[derive(Deserialize)]
struct RequestUid<'a> {
    #[serde(borrow)]
    uid: std::borrow::Cow<'a, str>,
}

/// Allowed, uid echoed.
pub fn answer(body: Body) -> Response {
    match body {
        Body::Complete(bytes) => match serde_json::from_slice::<UidOnly<'_>>(&bytes) {
            Ok(UidOnly {
                request: Some(request),
            }) => ReviewResponse::allow(&request.uid).reply(),
            _ => status_response(400, "not an AdmissionReview with a request uid"),
        },
        Body::TooLarge => status_response(413, "the body is larger than --max-body-bytes"),
        Body::Failed(message) => status_response(400, message),
        refused @ (Body::TimedOut(_) | Body::NoRoom(_)) => refusal(&refused),
    }
}
