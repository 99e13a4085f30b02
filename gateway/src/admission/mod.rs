//! `POST /validate`: read the body under its limits (size, deadline, the buffered-bytes budget),
//! read the review in one pass (the request's own fields typed, its objects kept as text), apply
//! self-protection, pre-filter the policies that could match (once per kind of request:
//! [`plans`]; none: allowed at once, without parsing the objects or touching the model), judge it within the limits (on the async worker
//! under a small cost allowance, else on the evaluation pool: [`lanes`]), answer with an
//! AdmissionReview, and record the decision (log and metrics).
//!
//! Every request gets a well-formed answer: a review (with the uid echoed) whenever a uid can be
//! read, a `v1 Status` JSON body with an HTTP error code otherwise.

pub mod body;
mod evaluate;
pub mod failure;
mod handler;
pub mod lanes;
pub mod noop;
pub mod parse;
pub mod plans;
pub mod pool;
pub mod prefilter;
pub mod rehearsal;
pub mod rejection;
pub mod review;
pub mod verdict;

use std::convert::Infallible;
use std::sync::Arc;

use warp::Filter;
use warp::reply::Response;

pub use evaluate::{EvalHook, Evaluator, FailureKind, Judged, Limits, Source};
pub use handler::Admission;
pub use lanes::{DEFAULT_INLINE_COST, Lane};

/// The webhook routes: `POST /validate`, and a Status answer for anything else.
pub fn routes(
    admission: Arc<Admission>,
) -> impl Filter<Extract = (Response,), Error = Infallible> + Clone + Send + Sync + 'static {
    warp::path!("validate")
        .and(warp::post())
        .and(warp::header::optional::<u64>("content-length"))
        .and(warp::body::stream())
        .then(move |length: Option<u64>, stream| {
            let admission = Arc::clone(&admission);
            async move {
                let (body, room) = admission.intake().read(stream, length).await.into_parts();
                let response = admission.review(body).await;
                // The body's bytes stay counted against the buffered budget until answered.
                drop(room);
                response
            }
        })
        .recover(rejection::recover)
        .unify()
}

/// The `--noop` routes: the same path and body handling, every review allowed.
pub fn noop_routes(
    intake: body::Intake,
) -> impl Filter<Extract = (Response,), Error = Infallible> + Clone + Send + Sync + 'static {
    warp::path!("validate")
        .and(warp::post())
        .and(warp::header::optional::<u64>("content-length"))
        .and(warp::body::stream())
        .then(move |length: Option<u64>, stream| {
            let intake = intake.clone();
            async move { noop::answer(intake.read(stream, length).await.body) }
        })
        .recover(rejection::recover)
        .unify()
}
