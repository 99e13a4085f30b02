//! Every request that misses the webhook route, or whose body is not read, still gets a
//! well-formed answer: a `v1 Status` JSON body with the right HTTP code (404, 405, 400, 408, 503).

use std::convert::Infallible;

use warp::Reply;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::admission::body::Body;
use crate::admission::review::StatusDocument;

/// A JSON `v1 Status` response with `code`.
pub fn status_response(code: u16, message: impl Into<String>) -> Response {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    warp::reply::with_status(warp::reply::json(&StatusDocument::failure(code, message)), status)
        .into_response()
}

/// The answer to a body that was not read: too slow (408), or no room to buffer it in time
/// (503); kube-apiserver then applies the webhook's failurePolicy.
pub fn refusal(body: &Body) -> Response {
    match body {
        Body::TimedOut(timeout) => status_response(
            408,
            format!("the request body did not arrive within {timeout:?} (--body-timeout)"),
        ),
        Body::NoRoom(timeout) => status_response(
            503,
            format!(
                "the gateway could not buffer the request body within {timeout:?}: other requests hold --max-buffered-bytes"
            ),
        ),
        _ => status_response(500, "the request body was refused"),
    }
}

/// The answer to a rejected route.
pub async fn recover(rejection: warp::Rejection) -> Result<Response, Infallible> {
    Ok(if rejection.is_not_found() {
        status_response(404, "not found: the webhook is POST /validate")
    } else if rejection.find::<warp::reject::MethodNotAllowed>().is_some() {
        status_response(405, "method not allowed: the webhook is POST /validate")
    } else if let Some(header) = rejection.find::<warp::reject::InvalidHeader>() {
        status_response(400, format!("invalid header {}", header.name()))
    } else {
        status_response(400, "bad request")
    })
}
