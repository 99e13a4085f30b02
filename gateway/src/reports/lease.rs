//! One replica writes the reports: the holder of a `coordination.k8s.io/v1` Lease in the
//! gateway's namespace. Each replica tries to take or renew it every `duration / 3`; a Lease
//! held by another is taken only once its record (holder and renew time) has not changed for a
//! whole lease duration as this replica observed it (client-go's leader election: robust to
//! clock skew between replicas, as it never compares another replica's clock with its own).
//! Conflicting writes are settled by the resourceVersion: one replica wins, the others see 409
//! and stay followers. A replica that cannot reach the API server stops writing at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Api;
use kube::api::PostParams;

/// Who holds the Lease as last observed, and since when (this replica's clock).
#[derive(Debug, Clone, PartialEq)]
struct Observed {
    holder: Option<String>,
    renew: Option<String>,
    at: Instant,
}

/// Takes and renews the reports' Lease.
#[derive(Debug)]
pub struct Elector {
    pub api: Api<Lease>,
    pub name: String,
    pub identity: String,
    pub duration: Duration,
    leading: Arc<AtomicBool>,
    observed: Option<Observed>,
}

impl Elector {
    pub fn new(api: Api<Lease>, name: &str, identity: &str, duration: Duration) -> Self {
        Self {
            api,
            name: name.to_owned(),
            identity: identity.to_owned(),
            duration: duration.max(Duration::from_secs(1)),
            leading: Arc::new(AtomicBool::new(false)),
            observed: None,
        }
    }

    /// True while this replica holds the Lease (shared with the writer).
    pub fn leading(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.leading)
    }

    /// Runs until the future is dropped.
    pub async fn run(mut self) {
        let mut ticks = tokio::time::interval(self.duration / 3);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let was = self.leading.load(Ordering::Acquire);
            let now = match self.try_acquire_or_renew().await {
                Ok(leading) => leading,
                Err(error) => {
                    tracing::warn!(lease = %self.name, %error, "cannot take or renew the reports' Lease; not writing reports meanwhile");
                    false
                }
            };
            self.leading.store(now, Ordering::Release);
            if now != was {
                tracing::info!(lease = %self.name, identity = %self.identity, leading = now,
                    "{}", if now { "this replica writes the policy reports" } else { "another replica writes the policy reports" });
            }
        }
    }

    /// One attempt: true when this replica holds the Lease afterwards.
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let now = k8s_openapi::jiff::Timestamp::now();
        let Some(mut lease) = self.api.get_opt(&self.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(self.spec(now, now, 0)),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(error) => Err(error),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let ours = holder.as_deref() == Some(self.identity.as_str());
        let record = Observed {
            holder: holder.clone(),
            renew: spec.renew_time.as_ref().map(|t| t.0.to_string()),
            at: Instant::now(),
        };
        match &self.observed {
            Some(seen) if seen.holder == record.holder && seen.renew == record.renew => {}
            _ => self.observed = Some(record),
        }
        let duration = spec
            .lease_duration_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(self.duration, Duration::from_secs);
        let expired = self
            .observed
            .as_ref()
            .is_some_and(|seen| seen.at.elapsed() >= duration);
        if !(ours || holder.is_none() || expired) {
            return Ok(false);
        }
        let transitions = spec.lease_transitions.unwrap_or(0);
        let (acquired, transitions) = match (&spec.acquire_time, ours) {
            (Some(acquired), true) => (acquired.0, transitions),
            _ => (now, transitions.saturating_add(1)),
        };
        lease.spec = Some(self.spec(acquired, now, transitions));
        match self.api.replace(&self.name, &PostParams::default(), &lease).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(error),
        }
    }

    fn spec(
        &self,
        acquired: k8s_openapi::jiff::Timestamp,
        renewed: k8s_openapi::jiff::Timestamp,
        transitions: i32,
    ) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(i32::try_from(self.duration.as_secs()).unwrap_or(i32::MAX)),
            acquire_time: Some(MicroTime(acquired)),
            renew_time: Some(MicroTime(renewed)),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use http::{Method, Request, Response, StatusCode};
    use kube::client::Body;
    use tower_test::mock;

    type Handle = mock::Handle<Request<Body>, Response<Body>>;

    fn elector(identity: &str) -> (Elector, Handle) {
        let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(service, "suture-system");
        let api = Api::namespaced(client, "suture-system");
        (
            Elector::new(api, "suture-gateway-reports", identity, Duration::from_secs(15)),
            handle,
        )
    }

    fn json(status: StatusCode, body: serde_json::Value) -> Response<Body> {
        Response::builder()
            .status(status)
            .body(Body::from(body.to_string().into_bytes()))
            .unwrap()
    }

    fn not_found() -> serde_json::Value {
        serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404, "message": "not found"})
    }

    fn held_by(holder: &str, renew: &str) -> serde_json::Value {
        serde_json::json!({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "suture-gateway-reports", "namespace": "suture-system", "resourceVersion": "7"},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15, "renewTime": renew,
                     "acquireTime": "2026-01-01T00:00:00.000000Z", "leaseTransitions": 2}
        })
    }

    /// kube's mock-service pattern: the API server is this test.
    #[tokio::test]
    async fn the_first_replica_creates_the_lease_and_renews_it() {
        let (mut elector, mut handle) = elector("gateway-a");
        let server = tokio::spawn(async move {
            let (request, send) = handle.next_request().await.unwrap();
            assert_eq!(request.method(), Method::GET);
            assert_eq!(
                request.uri().path(),
                "/apis/coordination.k8s.io/v1/namespaces/suture-system/leases/suture-gateway-reports"
            );
            send.send_response(json(StatusCode::NOT_FOUND, not_found()));
            let (request, send) = handle.next_request().await.unwrap();
            assert_eq!(request.method(), Method::POST);
            let body: serde_json::Value =
                serde_json::from_slice(&request.into_body().collect_bytes().await.unwrap()).unwrap();
            assert_eq!(body["spec"]["holderIdentity"], "gateway-a");
            send.send_response(json(StatusCode::CREATED, body));
            // The renewal: ours, so replaced with the same resourceVersion.
            let (request, send) = handle.next_request().await.unwrap();
            assert_eq!(request.method(), Method::GET);
            send.send_response(json(
                StatusCode::OK,
                held_by("gateway-a", "2026-01-01T00:00:05.000000Z"),
            ));
            let (request, send) = handle.next_request().await.unwrap();
            assert_eq!(request.method(), Method::PUT);
            let body: serde_json::Value =
                serde_json::from_slice(&request.into_body().collect_bytes().await.unwrap()).unwrap();
            assert_eq!(body["metadata"]["resourceVersion"], "7");
            assert_eq!(body["spec"]["leaseTransitions"], 2, "a renewal is no transition");
            send.send_response(json(StatusCode::OK, body));
        });
        assert!(elector.try_acquire_or_renew().await.unwrap());
        assert!(elector.try_acquire_or_renew().await.unwrap());
        server.await.unwrap();
    }

    #[tokio::test]
    async fn a_lease_held_by_another_is_left_until_it_stops_renewing_and_a_conflict_loses() {
        let (mut elector, mut handle) = elector("gateway-b");
        elector.duration = Duration::from_secs(15);
        let server = tokio::spawn(async move {
            // Held and fresh: left alone, no write.
            let (_, send) = handle.next_request().await.unwrap();
            send.send_response(json(
                StatusCode::OK,
                held_by("gateway-a", "2026-01-01T00:00:05.000000Z"),
            ));
            // Held with a record that changed: still fresh.
            let (_, send) = handle.next_request().await.unwrap();
            send.send_response(json(
                StatusCode::OK,
                held_by("gateway-a", "2026-01-01T00:00:10.000000Z"),
            ));
            // Unchanged for longer than its duration (the test moves `observed` back): taken,
            // but another replica took it first.
            let (_, send) = handle.next_request().await.unwrap();
            send.send_response(json(
                StatusCode::OK,
                held_by("gateway-a", "2026-01-01T00:00:10.000000Z"),
            ));
            let (request, send) = handle.next_request().await.unwrap();
            assert_eq!(request.method(), Method::PUT);
            let body: serde_json::Value =
                serde_json::from_slice(&request.into_body().collect_bytes().await.unwrap()).unwrap();
            assert_eq!(body["spec"]["holderIdentity"], "gateway-b");
            assert_eq!(body["spec"]["leaseTransitions"], 3);
            send.send_response(json(StatusCode::CONFLICT, serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Conflict", "code": 409, "message": "conflict"})));
        });
        assert!(!elector.try_acquire_or_renew().await.unwrap());
        assert!(!elector.try_acquire_or_renew().await.unwrap());
        if let Some(seen) = &mut elector.observed {
            seen.at = Instant::now().checked_sub(Duration::from_secs(16)).unwrap();
        }
        assert!(
            !elector.try_acquire_or_renew().await.unwrap(),
            "the conflict is lost"
        );
        server.await.unwrap();
    }
}
