//! The report writer: owns the [`ReportBook`], fed by the handler's observations through a
//! bounded queue. The first observation after a write opens a batch; one flush interval later
//! the reports that changed are server-side applied (a report left without results is
//! deleted) — so a burst of any size writes each namespace's report once per flush interval.
//! Every minute results older than the window age out. Only the Lease holder writes: a
//! follower keeps its results and what changed, and writes them if it takes the Lease, after
//! adopting the reports the previous writer left. A failed write is retried with backoff; the
//! reports stay dirty meanwhile. It never holds up an admission.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::Utc;
use kube::Api;
use kube::api::{ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use policies_cel::reports::{self, API_VERSION, CLUSTER_KIND, KIND, ReportBook, Seen};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::metrics::Metrics;
use crate::reports::Observation;

/// The name of the gateway's report in each namespace, and of its cluster report.
pub const REPORT_NAME: &str = "suture";
/// The field manager of the reports' applies, and their managed-by label.
pub const MANAGER: &str = "suture-gateway";
/// The most results a report holds (the least recently seen go first).
pub use policies_cel::reports::MAX_RESULTS;
/// How often results are aged out.
const EXPIRY_INTERVAL: Duration = Duration::from_secs(60);
/// The longest wait between retries of a failed write.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The API resource of the namespaced (`cluster` false) or cluster report.
pub fn resource(cluster: bool) -> ApiResource {
    let (kind, plural) = if cluster {
        (CLUSTER_KIND, "clusterpolicyreports")
    } else {
        (KIND, "policyreports")
    };
    ApiResource {
        group: "wgpolicyk8s.io".into(),
        version: "v1alpha2".into(),
        api_version: API_VERSION.into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// Writes the reports of the Lease holder.
pub struct ReportWriter {
    pub client: kube::Client,
    pub book: ReportBook,
    /// How long observations are batched before a write.
    pub flush: Duration,
    /// True while this replica holds the reports' Lease.
    pub leading: Arc<AtomicBool>,
    pub metrics: Arc<Metrics>,
    /// Whether the reports in the cluster were read in since this replica took the Lease.
    adopted: bool,
}

impl std::fmt::Debug for ReportWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReportWriter")
            .field("flush", &self.flush)
            .field("leading", &self.leading)
            .finish_non_exhaustive()
    }
}

impl ReportWriter {
    pub fn new(
        client: kube::Client,
        book: ReportBook,
        flush: Duration,
        leading: Arc<AtomicBool>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            client,
            book,
            flush,
            leading,
            metrics,
            adopted: false,
        }
    }

    /// Runs until `observations` closes (the gateway stops) or the future is dropped.
    pub async fn run(mut self, mut observations: mpsc::Receiver<Observation>) {
        let mut expiry = tokio::time::interval(EXPIRY_INTERVAL);
        expiry.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut due: Option<Instant> = None;
        let mut backoff = self.flush.max(Duration::from_millis(500));
        loop {
            let deadline = due.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
            tokio::select! {
                observation = observations.recv() => match observation {
                    Some(observation) => {
                        self.observe(&observation);
                        due.get_or_insert_with(|| Instant::now() + self.flush);
                    }
                    None => return,
                },
                _ = expiry.tick() => {
                    self.book.expire(Utc::now());
                    self.metrics.set_report_results(self.book.len());
                    if self.book.is_dirty() {
                        due.get_or_insert_with(|| Instant::now() + self.flush);
                    }
                }
                () = tokio::time::sleep_until(deadline), if due.is_some() => {
                    due = None;
                    match self.write().await {
                        Ok(()) => backoff = self.flush.max(Duration::from_millis(500)),
                        Err(failed) => {
                            tracing::warn!(reports = failed, "policy reports not written; retrying");
                            due = Some(Instant::now() + backoff);
                            backoff = (backoff * 2).min(MAX_BACKOFF);
                        }
                    }
                }
            }
        }
    }

    /// Takes one observation into the book.
    pub fn observe(&mut self, observation: &Observation) {
        let seen = Seen {
            subject: &observation.subject,
            requester: &observation.requester,
            operation: &observation.operation,
            time: observation.time,
            failures: &observation.failures,
            impact: observation.impact.as_ref(),
        };
        let severities = &observation.severities;
        let failures = &observation.failures;
        self.book.observe(&seen, |policy| {
            failures
                .iter()
                .position(|f| f.policy == policy)
                .and_then(|i| severities.get(i).cloned().flatten())
        });
        self.metrics.set_report_results(self.book.len());
    }

    /// Writes every report that changed, when this replica holds the Lease. `Err` with how
    /// many failed (they stay dirty).
    pub async fn write(&mut self) -> Result<(), usize> {
        if !self.leading.load(Ordering::Acquire) {
            self.adopted = false;
            self.metrics.count_report_write("skipped");
            return Ok(());
        }
        if !self.adopted {
            match self.adopt().await {
                Ok(adopted) => {
                    self.adopted = true;
                    tracing::info!(results = adopted, "policy reports already written adopted");
                }
                Err(error) => {
                    self.metrics.count_report_write("failed");
                    tracing::warn!(%error, "cannot read the policy reports already written (is the wgpolicyk8s.io CRD installed?)");
                    return Err(1);
                }
            }
        }
        let mut failed = 0;
        for scope in self.book.take_dirty() {
            let outcome = match reports::render(&self.book, &scope, REPORT_NAME, MANAGER) {
                Some(report) => self.apply(&scope, report).await.map(|()| "applied"),
                None => self.delete(&scope).await.map(|()| "deleted"),
            };
            match outcome {
                Ok(result) => {
                    // Observations only come in between writes (this task takes them): the
                    // report written is the book's now.
                    self.book.written(&scope);
                    self.metrics.count_report_write(result);
                }
                Err(error) => {
                    failed += 1;
                    self.metrics.count_report_write("failed");
                    self.book.mark_dirty(&scope);
                    let scope = if scope.is_empty() {
                        "(cluster)"
                    } else {
                        scope.as_str()
                    };
                    tracing::warn!(namespace = scope, %error, "policy report write failed");
                }
            }
        }
        if failed == 0 { Ok(()) } else { Err(failed) }
    }

    fn api(&self, scope: &str) -> Api<DynamicObject> {
        if scope.is_empty() {
            Api::all_with(self.client.clone(), &resource(true))
        } else {
            Api::namespaced_with(self.client.clone(), scope, &resource(false))
        }
    }

    async fn apply(&self, scope: &str, report: serde_json::Value) -> Result<(), kube::Error> {
        let params = PatchParams::apply(MANAGER).force();
        self.api(scope)
            .patch(REPORT_NAME, &params, &Patch::Apply(report))
            .await
            .map(drop)
    }

    async fn delete(&self, scope: &str) -> Result<(), kube::Error> {
        match self
            .api(scope)
            .delete(REPORT_NAME, &DeleteParams::default())
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Reads the reports this gateway wrote (by their label) into the book.
    async fn adopt(&mut self) -> Result<usize, kube::Error> {
        let params = ListParams::default().labels(&format!("app.kubernetes.io/managed-by={MANAGER}"));
        let mut adopted = 0;
        for cluster in [false, true] {
            let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &resource(cluster));
            for object in api.list(&params).await? {
                if object.metadata.name.as_deref() != Some(REPORT_NAME) {
                    continue;
                }
                let value = serde_json::to_value(&object).unwrap_or_default();
                adopted += reports::adopt(&mut self.book, &value);
            }
        }
        self.book.expire(Utc::now());
        Ok(adopted)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use http::{Method, Request, Response};
    use kube::client::Body;
    use policies_cel::eval::Failure;
    use policies_cel::policy::Action;
    use policies_cel::reports::Subject;
    use tower_test::mock;

    fn observation(namespace: &str, name: &str, actions: &[Action]) -> Observation {
        Observation {
            subject: Subject {
                api_version: "v1".into(),
                kind: if namespace.is_empty() {
                    "PersistentVolume"
                } else {
                    "PersistentVolumeClaim"
                }
                .into(),
                namespace: namespace.into(),
                name: name.into(),
            },
            requester: "system:serviceaccount:db:op".into(),
            operation: "DELETE".into(),
            time: Utc::now(),
            failures: vec![Failure {
                policy: "protect-data".into(),
                binding: None,
                validation: Some(0),
                message: "would destroy data".into(),
                actions: actions.to_vec(),
            }],
            severities: vec![Some("high".into())],
            impact: None,
        }
    }

    fn list(kind: &str, items: Vec<serde_json::Value>) -> serde_json::Value {
        serde_json::json!({"apiVersion": API_VERSION, "kind": format!("{kind}List"), "metadata": {"resourceVersion": "1"}, "items": items})
    }

    /// kube's mock-service pattern: the API server is this test, which records every request.
    /// Every request the mock API server answered: method, URI and body.
    type Requests = Vec<(Method, String, serde_json::Value)>;

    fn server() -> (kube::Client, tokio::task::JoinHandle<Requests>) {
        let (service, mut handle) = mock::pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(service, "default");
        let server = tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Some((request, send)) = handle.next_request().await {
                let method = request.method().clone();
                let uri = request.uri().to_string();
                let body = request.into_body().collect_bytes().await.unwrap();
                let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                let answer = match (&method, uri.as_str()) {
                    (&Method::GET, u) if u.starts_with("/apis/wgpolicyk8s.io/v1alpha2/policyreports?") => {
                        // A report the previous writer left: one result, seen just now.
                        let earlier = observation("web", "cache", &[Action::Audit]);
                        let mut previous = ReportBook::new(chrono::Duration::hours(1), 10);
                        let seen = Seen {
                            subject: &earlier.subject,
                            requester: &earlier.requester,
                            operation: "DELETE",
                            time: earlier.time,
                            failures: &earlier.failures,
                            impact: None,
                        };
                        previous.observe(&seen, |_| None);
                        let report = reports::render(&previous, "web", REPORT_NAME, MANAGER).unwrap();
                        list("PolicyReport", vec![report])
                    }
                    (&Method::GET, _) => list("ClusterPolicyReport", vec![]),
                    _ => body.clone(),
                };
                seen.push((method, uri, body));
                send.send_response(Response::new(Body::from(answer.to_string().into_bytes())));
            }
            seen
        });
        (client, server)
    }

    #[tokio::test]
    async fn a_burst_is_one_apply_per_changed_report_and_a_follower_writes_nothing() {
        let (client, server) = server();
        let leading = Arc::new(AtomicBool::new(false));
        let metrics = Arc::new(Metrics::new());
        let book = ReportBook::new(chrono::Duration::hours(1), MAX_RESULTS);
        let mut writer = ReportWriter::new(
            client,
            book,
            Duration::from_secs(1),
            Arc::clone(&leading),
            metrics,
        );
        for i in 0..1000 {
            writer.observe(&observation("db", &format!("data-{}", i % 10), &[Action::Audit]));
        }
        writer.observe(&observation("", "pv-1", &[Action::Warn]));
        writer.write().await.unwrap();
        leading.store(true, Ordering::Release);
        writer.write().await.unwrap();
        writer.write().await.unwrap();
        drop(writer);
        let requests = server.await.unwrap();
        let writes: Vec<_> = requests.iter().filter(|(m, _, _)| *m != Method::GET).collect();
        assert_eq!(
            requests.len() - writes.len(),
            2,
            "the reports already written are read once"
        );
        assert_eq!(writes.len(), 2, "{writes:?}");
        let (_, uri, report) = writes
            .iter()
            .find(|(_, u, _)| u.contains("/namespaces/db/"))
            .unwrap();
        assert!(
            uri.starts_with("/apis/wgpolicyk8s.io/v1alpha2/namespaces/db/policyreports/suture?"),
            "{uri}"
        );
        assert!(
            uri.contains("fieldManager=suture-gateway") && uri.contains("force=true"),
            "{uri}"
        );
        assert_eq!(report["results"].as_array().unwrap().len(), 10);
        assert_eq!(report["summary"]["fail"], 10);
        assert_eq!(report["results"][0]["properties"]["count"], "100");
        assert_eq!(report["results"][0]["severity"], "high");
        let (_, uri, cluster) = writes
            .iter()
            .find(|(_, u, _)| u.contains("clusterpolicyreports/suture"))
            .unwrap();
        assert_eq!(cluster["kind"], CLUSTER_KIND, "{uri}");
        assert_eq!(cluster["summary"]["warn"], 1);
    }

    #[tokio::test]
    async fn the_adopted_reports_are_kept_and_an_emptied_report_is_deleted() {
        let (client, server) = server();
        let leading = Arc::new(AtomicBool::new(true));
        let book = ReportBook::new(chrono::Duration::hours(1), MAX_RESULTS);
        let mut writer = ReportWriter::new(
            client,
            book,
            Duration::from_secs(1),
            leading,
            Arc::new(Metrics::new()),
        );
        writer.observe(&observation("web", "cache", &[Action::Deny]));
        writer.write().await.unwrap();
        // Everything ages out: the report is deleted.
        writer.book.expire(Utc::now() + chrono::Duration::hours(2));
        writer.write().await.unwrap();
        drop(writer);
        let requests = server.await.unwrap();
        let writes: Vec<_> = requests.iter().filter(|(m, _, _)| *m != Method::GET).collect();
        assert_eq!(writes.len(), 2, "{writes:?}");
        let results = writes[0].2["results"].as_array().unwrap();
        assert_eq!(
            results.len(),
            1,
            "the adopted and the new result are the same one"
        );
        assert_eq!(results[0]["properties"]["count"], "2");
        assert_eq!(writes[1].0, Method::DELETE);
        assert!(
            writes[1]
                .1
                .starts_with("/apis/wgpolicyk8s.io/v1alpha2/namespaces/web/policyreports/suture")
        );
    }
}
