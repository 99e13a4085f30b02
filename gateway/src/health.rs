//! The plain-HTTP operations routes: `/healthz` (the process answers), `/readyz` (the model is
//! ready, policies are loaded, and no shutdown is under way; the body gives the detail, including
//! the last policy or snapshot reload error and the failing watches with what each feeds) and
//! `/metrics` (Prometheus text).

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use warp::http::StatusCode;
use warp::reply::Response;
use warp::{Filter, Reply};

use crate::admission::rejection::status_response;
use crate::metrics::Metrics;
use crate::model::{Feeds, LiveModel};
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
    /// Live mode: the watches failing now (they do not make the gateway unready).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failing_watches: Vec<FailingWatch>,
}

/// A failing watch in the `/readyz` body.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailingWatch {
    pub watch: String,
    /// The cluster model or the policy set.
    pub feeds: Feeds,
    /// What the failure means for admission meanwhile.
    pub effect: String,
    pub errors: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
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
            failing_watches: self.failing_watches(),
        }
    }

    fn failing_watches(&self) -> Vec<FailingWatch> {
        self.model
            .watch_states()
            .into_iter()
            .filter(|(_, state)| state.failing)
            .map(|(watch, state)| FailingWatch {
                watch,
                feeds: state.feeds,
                effect: state.feeds.while_failing().to_owned(),
                errors: state.errors,
                last_error: state.last_error,
            })
            .collect()
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
        assert!(serving.readiness().failing_watches.is_empty());
        serving.begin_shutdown();
        let readiness = serving.readiness();
        assert!(!readiness.ready);
        assert!(readiness.shutting_down);
    }

    #[test]
    fn readiness_lists_failing_watches_with_what_they_feed() {
        let model = LiveModel::new();
        model.watch_registered("pods", Feeds::Model);
        model.watch_registered("ConfigMap v1 (params)", Feeds::Policies);
        for name in ["pods", "ConfigMap v1 (params)"] {
            model.watch_listing(name);
            model.watch_synced(name);
        }
        model.watch_failed("ConfigMap v1 (params)", "mock: Internal Server Error".into());
        let readiness = health(model).readiness();
        assert!(
            readiness.ready,
            "a failing watch does not make the gateway unready"
        );
        assert_eq!(readiness.failing_watches.len(), 1);
        let failing = &readiness.failing_watches[0];
        assert_eq!(
            (failing.watch.as_str(), failing.feeds, failing.errors),
            ("ConfigMap v1 (params)", Feeds::Policies, 1)
        );
        assert!(failing.effect.contains("last good version"), "{}", failing.effect);
        let body = serde_json::to_value(&readiness).unwrap();
        assert_eq!(body["failingWatches"][0]["feeds"], "policies");
        assert_eq!(
            body["failingWatches"][0]["lastError"],
            "mock: Internal Server Error"
        );
    }
}
