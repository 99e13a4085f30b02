//! Prometheus metrics (text exposition on the plain-HTTP listener): request latency by verdict,
//! decisions by policy and verdict, evaluation errors, model object counts and age, and policy
//! reload generation and failures. Model and reload figures are read at scrape time.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::model::LiveModel;
use crate::policies::PolicyStore;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerdictLabels {
    verdict: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PolicyLabels {
    policy: String,
    verdict: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    kind: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: String,
}

type HistogramFamily = Family<VerdictLabels, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    // 50µs .. ~3.3s
    Histogram::new(exponential_buckets(0.000_05, 2.0, 17))
}

/// Every series the gateway exports.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    latency: HistogramFamily,
    decisions: Family<PolicyLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
    model_objects: Family<KindLabels, Gauge>,
    model_age: Gauge<f64, AtomicU64>,
    model_ready: Gauge,
    policies_loaded: Gauge,
    reload_generation: Gauge,
    reload_failures: Counter,
    snapshot_failures: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A registry with every series registered under the `suture_gateway` prefix.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("suture_gateway");
        let latency = HistogramFamily::new_with_constructor(latency_histogram as fn() -> Histogram);
        let decisions = Family::<PolicyLabels, Counter>::default();
        let errors = Family::<ErrorLabels, Counter>::default();
        let model_objects = Family::<KindLabels, Gauge>::default();
        let model_age = Gauge::<f64, AtomicU64>::default();
        let model_ready = Gauge::default();
        let policies_loaded = Gauge::default();
        let reload_generation = Gauge::default();
        let reload_failures = Counter::default();
        let snapshot_failures = Counter::default();
        registry.register(
            "request_duration_seconds",
            "Time to answer one AdmissionReview, by verdict (allowed, denied, invalid)",
            latency.clone(),
        );
        registry.register(
            "decisions",
            "Policy outcomes on requests they matched, by policy and verdict (pass, deny, warn, audit, skip, error)",
            decisions.clone(),
        );
        registry.register(
            "evaluation_errors",
            "Requests answered by failurePolicy: timeout, panic, internal, stale",
            errors.clone(),
        );
        registry.register(
            "model_objects",
            "Objects in the cluster model, by kind",
            model_objects.clone(),
        );
        registry.register(
            "model_age_seconds",
            "Seconds since the cluster model was last known current (-1: never)",
            model_age.clone(),
        );
        registry.register(
            "model_ready",
            "1 once the initial lists (or snapshots) are in",
            model_ready.clone(),
        );
        registry.register(
            "policies",
            "Policies in the enforced set",
            policies_loaded.clone(),
        );
        registry.register(
            "policy_reload_generation",
            "Successful policy loads since start",
            reload_generation.clone(),
        );
        registry.register(
            "policy_reload_failures",
            "Policy reloads that failed (the last good set kept serving)",
            reload_failures.clone(),
        );
        registry.register(
            "snapshot_reload_failures",
            "Offline snapshot reloads that failed (the previous model kept serving)",
            snapshot_failures.clone(),
        );
        // Zero-valued error series exist from the start, so alerts can rate() them at once.
        for kind in ["timeout", "panic", "internal", "stale"] {
            let _ = errors.get_or_create(&ErrorLabels {
                kind: kind.to_owned(),
            });
        }
        Self {
            registry,
            latency,
            decisions,
            errors,
            model_objects,
            model_age,
            model_ready,
            policies_loaded,
            reload_generation,
            reload_failures,
            snapshot_failures,
        }
    }

    /// One answered request.
    pub fn observe_request(&self, verdict: &str, seconds: f64) {
        self.latency
            .get_or_create(&VerdictLabels {
                verdict: verdict.to_owned(),
            })
            .observe(seconds);
    }

    /// One policy's outcome on a request it matched.
    pub fn count_policy(&self, policy: &str, verdict: &str) {
        self.decisions
            .get_or_create(&PolicyLabels {
                policy: policy.to_owned(),
                verdict: verdict.to_owned(),
            })
            .inc();
    }

    /// A request answered by failurePolicy (`timeout`, `panic`, `internal`, `stale`).
    pub fn count_error(&self, kind: &str) {
        self.errors
            .get_or_create(&ErrorLabels {
                kind: kind.to_owned(),
            })
            .inc();
    }

    /// An offline snapshot reload that failed.
    pub fn snapshot_reload_failed(&self) {
        self.snapshot_failures.inc();
    }

    /// The text exposition, with model and reload figures read now.
    pub fn encode(&self, model: &LiveModel, policies: &PolicyStore) -> Result<String, std::fmt::Error> {
        let counts = model.read().counts();
        self.model_objects.clear();
        for (kind, count) in counts {
            self.model_objects
                .get_or_create(&KindLabels { kind })
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
        self.model_age
            .set(model.age().map_or(-1.0, |age| age.as_secs_f64()));
        self.model_ready.set(i64::from(model.is_ready()));
        self.policies_loaded
            .set(i64::try_from(policies.current().len()).unwrap_or(i64::MAX));
        let status = policies.status();
        self.reload_generation
            .set(i64::try_from(status.generation).unwrap_or(i64::MAX));
        let seen = self.reload_failures.get();
        if status.failures > seen {
            self.reload_failures.inc_by(status.failures - seen);
        }
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policies_cel::PolicySet;

    #[test]
    fn every_named_series_is_exported() {
        let metrics = Metrics::new();
        metrics.observe_request("allowed", 0.0004);
        metrics.count_policy("p", "deny");
        metrics.count_error("timeout");
        let model = LiveModel::ready_with(policies_cel::cluster::ClusterModel::new());
        let text = metrics
            .encode(&model, &PolicyStore::new(PolicySet::default()))
            .unwrap();
        for series in [
            "suture_gateway_request_duration_seconds_bucket{",
            "suture_gateway_decisions_total{policy=\"p\",verdict=\"deny\"} 1",
            "suture_gateway_evaluation_errors_total{kind=\"timeout\"} 1",
            "suture_gateway_model_age_seconds ",
            "suture_gateway_model_ready 1",
            "suture_gateway_policy_reload_generation 1",
            "suture_gateway_policy_reload_failures_total 0",
        ] {
            assert!(text.contains(series), "{series} missing from\n{text}");
        }
    }
}
