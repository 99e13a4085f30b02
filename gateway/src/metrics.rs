//! Prometheus metrics (text exposition on the plain-HTTP listener): request latency by verdict,
//! decisions by policy and verdict, evaluation errors, model object counts and age, watch errors,
//! restarts and failing watches by what they feed (the model or the policy set), and policy
//! reload generation and failures, rehearsals (`--keep-warm`). Model, watch and reload figures
//! are read at scrape time.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::model::{Feeds, LiveModel};
use crate::policies::PolicyStore;
use crate::series::Resolved;

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

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FeedsLabels {
    feeds: String,
}

impl From<Feeds> for FeedsLabels {
    fn from(feeds: Feeds) -> Self {
        Self {
            feeds: feeds.as_str().to_owned(),
        }
    }
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
    watch_errors: Family<FeedsLabels, Counter>,
    watch_restarts: Family<FeedsLabels, Counter>,
    watches_failing: Family<FeedsLabels, Gauge>,
    policies_loaded: Gauge,
    reload_generation: Gauge,
    reload_failures: Counter,
    snapshot_failures: Counter,
    ledger: std::sync::OnceLock<std::sync::Arc<crate::ledger::SharedLedger>>,
    ledger_records: Gauge,
    ledger_queue_full: Counter,
    ledger_writes: Family<ResultLabels, Counter>,
    report_writes: Family<ResultLabels, Counter>,
    report_results: Gauge,
    events: Family<ResultLabels, Counter>,
    /// Rehearsals of the judged path (`--keep-warm`) judged to their end.
    rehearsals: Counter,
    /// The latency series of the verdicts the gateway answers with, created at start.
    latency_by_verdict: [(&'static str, Histogram); 3],
    /// The decision series, resolved once per policy and verdict (see [`Resolved`]).
    decision_series: Resolved<Counter>,
}

/// The outcome of a write.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: String,
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
        let watch_errors = Family::<FeedsLabels, Counter>::default();
        let watch_restarts = Family::<FeedsLabels, Counter>::default();
        let watches_failing = Family::<FeedsLabels, Gauge>::default();
        let policies_loaded = Gauge::default();
        let reload_generation = Gauge::default();
        let reload_failures = Counter::default();
        let snapshot_failures = Counter::default();
        let ledger_records = Gauge::default();
        let ledger_queue_full = Counter::default();
        let ledger_writes = Family::<ResultLabels, Counter>::default();
        let rehearsals = Counter::default();
        let report_writes = Family::<ResultLabels, Counter>::default();
        let report_results = Gauge::default();
        let events = Family::<ResultLabels, Counter>::default();
        registry.register(
            "policy_report_writes",
            "Policy report writes, by result (applied, deleted, failed; skipped: a batch this replica did not write, another holds the Lease; dropped: an observation that found the writer's queue full)",
            report_writes.clone(),
        );
        for result in ["applied", "deleted", "failed", "skipped", "dropped"] {
            let _ = report_writes.get_or_create(&ResultLabels {
                result: result.to_owned(),
            });
        }
        registry.register(
            "policy_report_results",
            "Results this replica keeps for the policy reports (every namespace)",
            report_results.clone(),
        );
        registry.register(
            "events",
            "Kubernetes Events on denied or warned objects, by result (created; updated: a repeat count written; failed; dropped: the queue or the tracked events were full)",
            events.clone(),
        );
        for result in ["created", "updated", "failed", "dropped"] {
            let _ = events.get_or_create(&ResultLabels {
                result: result.to_owned(),
            });
        }
        registry.register(
            "rehearsals",
            "Rehearsals of the last judged request while the judged path was idle (--keep-warm): each one request's warm work, nothing recorded",
            rehearsals.clone(),
        );
        registry.register(
            "ledger_records",
            "Records of admitted disruption this replica judges `history` with (its own and every other replica's shard)",
            ledger_records.clone(),
        );
        registry.register(
            "ledger_queue_full",
            "Admitted records that found the shard writer's queue full (published with its next write all the same)",
            ledger_queue_full.clone(),
        );
        registry.register(
            "ledger_writes",
            "Writes of this replica's ledger shard, by result (ok, failed)",
            ledger_writes.clone(),
        );
        for result in ["ok", "failed"] {
            let _ = ledger_writes.get_or_create(&ResultLabels {
                result: result.to_owned(),
            });
        }
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
            "watch_errors",
            "Live-mode watch errors since start, by what the watches feed (model, policies)",
            watch_errors.clone(),
        );
        registry.register(
            "watch_restarts",
            "Live-mode watch re-lists after an error since start, by what the watches feed",
            watch_restarts.clone(),
        );
        registry.register(
            "watches_failing",
            "Live-mode watches failing now, by what they feed: a failing model watch lets the model \
             age grow, a failing policies watch keeps the last good policy set serving",
            watches_failing.clone(),
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
        // So are the latency series of the three verdicts; the request path keeps their handles.
        let latency_by_verdict = ["allowed", "denied", "invalid"].map(|verdict| {
            let histogram = latency
                .get_or_create(&VerdictLabels {
                    verdict: verdict.to_owned(),
                })
                .clone();
            (verdict, histogram)
        });
        for feeds in Feeds::ALL {
            let _ = watch_errors.get_or_create(&feeds.into());
            let _ = watch_restarts.get_or_create(&feeds.into());
            let _ = watches_failing.get_or_create(&feeds.into());
        }
        Self {
            registry,
            latency,
            decisions,
            errors,
            model_objects,
            model_age,
            model_ready,
            watch_errors,
            watch_restarts,
            watches_failing,
            policies_loaded,
            reload_generation,
            reload_failures,
            snapshot_failures,
            ledger: std::sync::OnceLock::new(),
            ledger_records,
            ledger_queue_full,
            ledger_writes,
            report_writes,
            report_results,
            events,
            rehearsals,
            latency_by_verdict,
            decision_series: Resolved::default(),
        }
    }

    /// Exports the figures of `ledger` (set once, at start).
    pub fn attach_ledger(&self, ledger: std::sync::Arc<crate::ledger::SharedLedger>) {
        let _ = self.ledger.set(ledger);
    }

    /// One policy report write (or skip, or dropped observation), by result.
    pub fn count_report_write(&self, result: &str) {
        self.report_writes
            .get_or_create(&ResultLabels {
                result: result.to_owned(),
            })
            .inc();
    }

    /// The results kept for the policy reports now.
    pub fn set_report_results(&self, results: usize) {
        self.report_results
            .set(i64::try_from(results).unwrap_or(i64::MAX));
    }

    /// One Event written (or failed, or dropped), by result.
    pub fn count_event(&self, result: &str) {
        self.events
            .get_or_create(&ResultLabels {
                result: result.to_owned(),
            })
            .inc();
    }

    /// One answered request (`allowed`, `denied` or `invalid`).
    pub fn observe_request(&self, verdict: &str, seconds: f64) {
        match self.latency_by_verdict.iter().find(|(word, _)| *word == verdict) {
            Some((_, histogram)) => histogram.observe(seconds),
            None => self
                .latency
                .get_or_create(&VerdictLabels {
                    verdict: verdict.to_owned(),
                })
                .observe(seconds),
        }
    }

    /// One policy's outcome on a request it matched.
    pub fn count_policy(&self, policy: &str, verdict: &'static str) {
        self.decision_series.with(
            policy,
            verdict,
            || {
                self.decisions
                    .get_or_create(&PolicyLabels {
                        policy: policy.to_owned(),
                        verdict: verdict.to_owned(),
                    })
                    .clone()
            },
            |counter| {
                counter.inc();
            },
        );
    }

    /// A request answered by failurePolicy (`timeout`, `panic`, `internal`, `stale`).
    pub fn count_error(&self, kind: &str) {
        self.errors
            .get_or_create(&ErrorLabels {
                kind: kind.to_owned(),
            })
            .inc();
    }

    /// A rehearsal of the judged path judged to its end (`--keep-warm`).
    pub fn count_rehearsal(&self) {
        self.rehearsals.inc();
    }

    /// An offline snapshot reload that failed.
    pub fn snapshot_reload_failed(&self) {
        self.snapshot_failures.inc();
    }

    /// The text exposition, with model and reload figures read now.
    pub fn encode(&self, model: &LiveModel, policies: &PolicyStore) -> Result<String, std::fmt::Error> {
        let counts = model.read_briefly().counts();
        self.model_objects.clear();
        for (kind, count) in counts {
            self.model_objects
                .get_or_create(&KindLabels { kind })
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
        self.model_age
            .set(model.age().map_or(-1.0, |age| age.as_secs_f64()));
        self.model_ready.set(i64::from(model.is_ready()));
        for feeds in Feeds::ALL {
            let totals = model.watch_totals(feeds);
            let labels = FeedsLabels::from(feeds);
            catch_up(&self.watch_errors.get_or_create(&labels), totals.errors);
            catch_up(&self.watch_restarts.get_or_create(&labels), totals.restarts);
            self.watches_failing
                .get_or_create(&labels)
                .set(i64::try_from(totals.failing).unwrap_or(i64::MAX));
        }
        self.policies_loaded
            .set(i64::try_from(policies.current().len()).unwrap_or(i64::MAX));
        let status = policies.status();
        self.reload_generation
            .set(i64::try_from(status.generation).unwrap_or(i64::MAX));
        catch_up(&self.reload_failures, status.failures);
        if let Some(ledger) = self.ledger.get() {
            self.ledger_records
                .set(i64::try_from(ledger.len()).unwrap_or(i64::MAX));
            catch_up(&self.ledger_queue_full, ledger.queue_full());
            let (ok, failed) = ledger.writes();
            for (result, total) in [("ok", ok), ("failed", failed)] {
                let labels = ResultLabels {
                    result: result.to_owned(),
                };
                catch_up(&self.ledger_writes.get_or_create(&labels), total);
            }
        }
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)?;
        Ok(text)
    }
}

/// Brings `counter` up to `total`, a count kept elsewhere that never goes down.
fn catch_up(counter: &Counter, total: u64) {
    let seen = counter.get();
    if total > seen {
        counter.inc_by(total - seen);
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
        // The second call finds the series the first resolved: both are counted.
        metrics.count_policy("p", "deny");
        metrics.count_policy("p", "deny");
        metrics.count_error("timeout");
        let model = LiveModel::ready_with(policies_cel::cluster::ClusterModel::new());
        let text = metrics
            .encode(&model, &PolicyStore::new(PolicySet::default()))
            .unwrap();
        for series in [
            "suture_gateway_request_duration_seconds_bucket{",
            "suture_gateway_request_duration_seconds_count{verdict=\"allowed\"} 1",
            // Every verdict's series exists from the start.
            "suture_gateway_request_duration_seconds_count{verdict=\"denied\"} 0",
            "suture_gateway_decisions_total{policy=\"p\",verdict=\"deny\"} 2",
            "suture_gateway_evaluation_errors_total{kind=\"timeout\"} 1",
            "suture_gateway_model_age_seconds ",
            "suture_gateway_model_ready 1",
            "suture_gateway_policy_reload_generation 1",
            "suture_gateway_policy_reload_failures_total 0",
        ] {
            assert!(text.contains(series), "{series} missing from\n{text}");
        }
    }

    #[test]
    fn watch_series_say_what_the_watches_feed() {
        let metrics = Metrics::new();
        let model = LiveModel::new();
        model.watch_registered("pods", Feeds::Model);
        model.watch_registered("ConfigMap v1 (params)", Feeds::Policies);
        model.watch_failed("ConfigMap v1 (params)", "refused".into());
        model.watch_listing("ConfigMap v1 (params)");
        model.watch_failed("ConfigMap v1 (params)", "refused".into());
        model.watch_listing("ConfigMap v1 (params)");
        let policies = PolicyStore::new(PolicySet::default());
        let text = metrics.encode(&model, &policies).unwrap();
        for series in [
            "suture_gateway_watch_errors_total{feeds=\"policies\"} 2",
            "suture_gateway_watch_errors_total{feeds=\"model\"} 0",
            "suture_gateway_watch_restarts_total{feeds=\"policies\"} 1",
            "suture_gateway_watches_failing{feeds=\"policies\"} 1",
            "suture_gateway_watches_failing{feeds=\"model\"} 0",
        ] {
            assert!(text.contains(series), "{series} missing from\n{text}");
        }
        // A forgotten watch's counts stay; the counters do not go down.
        model.watch_forgotten("ConfigMap v1 (params)");
        let text = metrics.encode(&model, &policies).unwrap();
        assert!(text.contains("suture_gateway_watch_errors_total{feeds=\"policies\"} 2"));
        assert!(text.contains("suture_gateway_watches_failing{feeds=\"policies\"} 0"));
    }
}
