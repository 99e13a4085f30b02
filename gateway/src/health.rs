//! The plain-HTTP operations routes: `/healthz` (the process answers), `/readyz` (the model is
//! ready, policies are loaded, and no shutdown is under way; the body gives the detail, including
//! the last policy or snapshot reload error) and `/metrics` (Prometheus text).

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use warp::http::StatusCode;
use warp::reply::Response;
use warp::{Filter, Reply};

use crate::admission::rejection::status_response;
use crate::metrics::Metrics;
use crate::model::LiveModel;
use crate::policies::PolicyStore;

/// What readiness is computed from.
#[derive(Debug)]
pub struct Health {
    model: Arc<LiveModel>,
    policies: Arc<PolicyStore>,
    metrics: Arc<Metrics>,
    shutting_down: AtomicBool,
    snapshot_error: Mutex<Option<String>>,
}

/// The `/readyz` body.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Readiness {
    pub ready: bool,
    pub shutting_down: bool,
    pub model_ready: bool,
    pub model_age_seconds: Option<f64>,
    pub policies: usize,
    pub policy_generation: u64,
    pub policy_reload_failures: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_policy_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_snapshot_error: Option<String>,
}

impl Health {
    /// Readiness over `model` and `policies`.
    pub fn new(model: Arc<LiveModel>, policies: Arc<PolicyStore>, metrics: Arc<Metrics>) -> Self {
        Self {
            model,
            policies,
            metrics,
            shutting_down: AtomicBool::new(false),
            snapshot_error: Mutex::new(None),
        }
    }

    /// Readiness turns false for good: the gateway is draining.
    pub fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::Release);
    }

    /// Records the outcome of the last snapshot reload (offline mode).
    pub fn set_snapshot_error(&self, error: Option<String>) {
        *self.snapshot_error.lock().unwrap_or_else(|p| p.into_inner()) = error;
    }

    /// The readiness detail now.
    pub fn readiness(&self) -> Readiness {
        let status = self.policies.status();
        let shutting_down = self.shutting_down.load(Ordering::Acquire);
        let model_ready = self.model.is_ready();
        Readiness {
            ready: model_ready && status.generation > 0 && !shutting_down,
            shutting_down,
            model_ready,
            model_age_seconds: self.model.age().map(|age| age.as_secs_f64()),
            policies: self.policies.current().len(),
            policy_generation: status.generation,
            policy_reload_failures: status.failures,
            last_policy_error: status.last_error,
            last_snapshot_error: self
                .snapshot_error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        }
    }

    fn readyz(&self) -> Response {
        let readiness = self.readiness();
        let code = if readiness.ready {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        warp::reply::with_status(warp::reply::json(&readiness), code).into_response()
    }

    fn metrics(&self) -> Response {
        match self.metrics.encode(&self.model, &self.policies) {
            Ok(text) => warp::reply::with_header(
                text,
                "content-type",
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )
            .into_response(),
            Err(_) => status_response(500, "cannot encode the metrics"),
        }
    }
}

/// `/healthz`, `/readyz` and `/metrics`.
pub fn routes(
    health: Arc<Health>,
) -> impl Filter<Extract = (Response,), Error = Infallible> + Clone + Send + Sync + 'static {
    let healthz = warp::path!("healthz")
        .and(warp::get())
        .map(|| warp::reply::with_header("ok\n", "content-type", "text/plain").into_response());
    let ready = Arc::clone(&health);
    let readyz = warp::path!("readyz").and(warp::get()).map(move || ready.readyz());
    let metrics = warp::path!("metrics")
        .and(warp::get())
        .map(move || health.metrics());
    healthz
        .or(readyz)
        .unify()
        .or(metrics)
        .unify()
        .recover(|rejection: warp::Rejection| async move {
            Ok::<_, Infallible>(if rejection.is_not_found() {
                status_response(404, "not found: try /healthz, /readyz or /metrics")
            } else {
                status_response(405, "method not allowed: use GET")
            })
        })
        .unify()
}

#[cfg(test)]
mod tests {
    use super::*;
    use policies_cel::cluster::ClusterModel;

    fn health(model: LiveModel) -> Health {
        Health::new(
            Arc::new(model),
            Arc::new(PolicyStore::new(policies_cel::PolicySet::default())),
            Arc::new(Metrics::new()),
        )
    }

    #[test]
    fn readiness_waits_for_the_model_and_ends_with_shutdown() {
        let waiting = health(LiveModel::new());
        let readiness = waiting.readiness();
        assert!(!readiness.ready);
        assert!(!readiness.model_ready);
        assert_eq!(readiness.model_age_seconds, None);

        let serving = health(LiveModel::ready_with(ClusterModel::new()));
        assert!(serving.readiness().ready);
        serving.set_snapshot_error(Some("bad.yaml: line 3".into()));
        assert_eq!(
            serving.readiness().last_snapshot_error.as_deref(),
            Some("bad.yaml: line 3")
        );
        serving.begin_shutdown();
        let readiness = serving.readiness();
        assert!(!readiness.ready);
        assert!(readiness.shutting_down);
    }
}
