//! Denials and warnings as Kubernetes Events on the objects concerned (`events.k8s.io/v1`, read
//! by `kubectl events --for KIND/NAME` and `kubectl describe`): reason `SutureDenied` or
//! `SutureWarned`, the policy's message and the requester in the note.
//!
//! Aggregated as client-go's event recorder does (`k8s.io/client-go/tools/events`): the first
//! occurrence of an event (same object, reason and note) is created at once; repeats only count,
//! and the count is written as the Event's `series` at most once per refresh interval; an event
//! not seen for six minutes is forgotten (its next occurrence is a new Event). A hot loop on one
//! object therefore writes one Event and then one patch per refresh interval, whatever its
//! rate. (kube's `runtime::events::Recorder` aggregates into a series too, but writes on every
//! publish — a patch per occurrence — so it is not used here.) At most [`MAX_CACHED`] events are
//! tracked at once; beyond, new ones are dropped and counted.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use policies_cel::policy::Action;
use policies_cel::reports::Subject;
use tokio::sync::mpsc;

use crate::metrics::Metrics;
use crate::reports::Observation;

/// The reason of a denial's Event.
pub const DENIED: &str = "SutureDenied";
/// The reason of a warning's Event.
pub const WARNED: &str = "SutureWarned";
/// The Events' reporting controller.
pub const CONTROLLER: &str = "suture.dev/gateway";
/// How long an event is remembered after its last occurrence (client-go's isomorphic cache).
pub const CACHE_TTL: Duration = Duration::from_secs(6 * 60);
/// The most events tracked at once.
pub const MAX_CACHED: usize = 4096;
/// The longest note (the API refuses notes over 1 kB).
const MAX_NOTE: usize = 1000;

/// One Event to record.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Notice {
    pub subject: Subject,
    /// [`DENIED`] or [`WARNED`].
    pub reason: &'static str,
    pub note: String,
}

/// The Events of an observation: one per policy failure with action Deny (`SutureDenied`) or,
/// failing that, Warn (`SutureWarned`); Audit alone makes none.
pub fn notices(observation: &Observation) -> Vec<Notice> {
    let mut notices: Vec<Notice> = Vec::new();
    for failure in &observation.failures {
        let reason = if failure.actions.contains(&Action::Deny) {
            DENIED
        } else if failure.actions.contains(&Action::Warn) {
            WARNED
        } else {
            continue;
        };
        let verb = if reason == DENIED {
            "denied"
        } else {
            "warned about"
        };
        let note = note(&format!(
            "policy {} {verb} {} by {}: {}",
            failure.policy, observation.operation, observation.requester, failure.message
        ));
        let notice = Notice {
            subject: observation.subject.clone(),
            reason,
            note,
        };
        if !notices.contains(&notice) {
            notices.push(notice);
        }
    }
    notices
}

fn note(text: &str) -> String {
    if text.len() <= MAX_NOTE {
        return text.to_owned();
    }
    let mut end = MAX_NOTE;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// An event already written, and what is not yet.
#[derive(Debug)]
struct Tracked {
    namespace: String,
    name: String,
    /// Occurrences seen, and how many the API server has.
    count: i32,
    written: i32,
    last_observed: DateTime<Utc>,
    last_seen_at: Instant,
    last_write: Instant,
}

/// Writes the Events of one replica.
pub struct EventWriter {
    pub client: kube::Client,
    /// This replica (the Events' `reportingInstance`).
    pub instance: String,
    /// How often a repeated event's count is written at most.
    pub refresh: Duration,
    pub metrics: Arc<Metrics>,
    tracked: HashMap<Notice, Tracked>,
}

impl std::fmt::Debug for EventWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventWriter")
            .field("instance", &self.instance)
            .field("refresh", &self.refresh)
            .finish_non_exhaustive()
    }
}

impl EventWriter {
    pub fn new(client: kube::Client, instance: &str, refresh: Duration, metrics: Arc<Metrics>) -> Self {
        let mut instance = instance.to_owned();
        instance.truncate(128);
        Self {
            client,
            instance,
            refresh,
            metrics,
            tracked: HashMap::new(),
        }
    }

    /// Runs until `notices` closes (the gateway stops) or the future is dropped.
    pub async fn run(mut self, mut notices: mpsc::Receiver<Notice>) {
        let mut ticks = tokio::time::interval(self.refresh.max(Duration::from_millis(100)));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                notice = notices.recv() => match notice {
                    Some(notice) => self.notice(notice).await,
                    None => {
                        self.refresh_series(true).await;
                        return;
                    }
                },
                _ = ticks.tick() => self.refresh_series(false).await,
            }
        }
    }

    /// One occurrence: a new event is created at once, a repeat only counted.
    pub async fn notice(&mut self, notice: Notice) {
        let now = Utc::now();
        if let Some(tracked) = self.tracked.get_mut(&notice) {
            tracked.count = tracked.count.saturating_add(1);
            tracked.last_observed = now;
            tracked.last_seen_at = Instant::now();
            return;
        }
        if self.tracked.len() >= MAX_CACHED {
            self.metrics.count_event("dropped");
            return;
        }
        let event = self.event(&notice, now);
        let namespace = event.metadata.namespace.clone().unwrap_or_default();
        let name = event.metadata.name.clone().unwrap_or_default();
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        match api.create(&PostParams::default(), &event).await {
            Ok(_) => {
                self.metrics.count_event("created");
                self.tracked.insert(
                    notice,
                    Tracked {
                        namespace,
                        name,
                        count: 1,
                        written: 1,
                        last_observed: now,
                        last_seen_at: Instant::now(),
                        last_write: Instant::now(),
                    },
                );
            }
            Err(error) => {
                self.metrics.count_event("failed");
                tracing::warn!(reason = notice.reason, object = %notice.subject.display(), %error,
                    "cannot create an Event");
            }
        }
    }

    /// Writes the counts of repeated events not written for a refresh interval (every one when
    /// `all`), then forgets the events not seen for [`CACHE_TTL`].
    pub async fn refresh_series(&mut self, all: bool) {
        let now = Instant::now();
        let mut due: Vec<(String, String, i32, DateTime<Utc>)> = Vec::new();
        for tracked in self.tracked.values_mut() {
            if tracked.count > tracked.written
                && (all || now.duration_since(tracked.last_write) >= self.refresh)
            {
                due.push((
                    tracked.namespace.clone(),
                    tracked.name.clone(),
                    tracked.count,
                    tracked.last_observed,
                ));
                tracked.written = tracked.count;
                tracked.last_write = now;
            }
        }
        for (namespace, name, count, last_observed) in due {
            let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
            let patch = serde_json::json!({
                "series": {
                    "count": count,
                    "lastObservedTime": last_observed.to_rfc3339_opts(SecondsFormat::Micros, true),
                }
            });
            match api
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => self.metrics.count_event("updated"),
                Err(error) => {
                    self.metrics.count_event("failed");
                    tracing::warn!(event = %name, %namespace, %error, "cannot update an Event's count");
                }
            }
        }
        self.tracked.retain(|_, tracked| {
            now.duration_since(tracked.last_seen_at) < CACHE_TTL || tracked.count > tracked.written
        });
    }

    /// Events tracked now.
    pub fn tracked(&self) -> usize {
        self.tracked.len()
    }

    fn event(&self, notice: &Notice, now: DateTime<Utc>) -> Event {
        let subject = &notice.subject;
        // client-go's recorder: a cluster-scoped object's Events go to `default`.
        let namespace = if subject.namespace.is_empty() {
            "default".to_owned()
        } else {
            subject.namespace.clone()
        };
        let mut prefix = subject.name.clone();
        prefix.truncate(200);
        let nanos = now.timestamp_nanos_opt().unwrap_or_default();
        let time = k8s_openapi::jiff::Timestamp::from_microsecond(now.timestamp_micros())
            .unwrap_or_else(|_| k8s_openapi::jiff::Timestamp::now());
        Event {
            metadata: ObjectMeta {
                name: Some(format!("{prefix}.{nanos:x}")),
                namespace: Some(namespace),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(time)),
            action: Some(if notice.reason == DENIED { "Deny" } else { "Warn" }.to_owned()),
            reason: Some(notice.reason.to_owned()),
            note: Some(notice.note.clone()),
            type_: Some("Warning".to_owned()),
            regarding: Some(ObjectReference {
                api_version: Some(subject.api_version.clone()),
                kind: Some(subject.kind.clone()),
                namespace: (!subject.namespace.is_empty()).then(|| subject.namespace.clone()),
                name: Some(subject.name.clone()),
                ..ObjectReference::default()
            }),
            reporting_controller: Some(CONTROLLER.to_owned()),
            reporting_instance: Some(self.instance.clone()),
            ..Event::default()
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use http::{Method, Request, Response};
    use kube::client::Body;
    use policies_cel::eval::Failure;
    use tower_test::mock;

    fn observation(actions: &[Action]) -> Observation {
        Observation {
            subject: Subject {
                api_version: "apps/v1".into(),
                kind: "StatefulSet".into(),
                namespace: "db".into(),
                name: "pg".into(),
            },
            requester: "system:serviceaccount:db:op".into(),
            operation: "DELETE".into(),
            time: Utc::now(),
            failures: vec![Failure {
                policy: "protect-quorum".into(),
                binding: None,
                validation: Some(0),
                message: "would break quorum".into(),
                actions: actions.to_vec(),
            }],
            severities: vec![None],
            impact: None,
        }
    }

    #[test]
    fn denials_and_warnings_make_events_audit_alone_does_not() {
        let denied = notices(&observation(&[Action::Deny, Action::Warn]));
        assert_eq!(denied.len(), 1);
        assert_eq!(denied[0].reason, DENIED);
        assert_eq!(
            denied[0].note,
            "policy protect-quorum denied DELETE by system:serviceaccount:db:op: would break quorum"
        );
        assert_eq!(notices(&observation(&[Action::Warn]))[0].reason, WARNED);
        assert!(notices(&observation(&[Action::Audit])).is_empty());
    }

    /// kube's mock-service pattern: the API server is this test, which counts the writes.
    #[tokio::test]
    async fn a_hot_loop_writes_one_event_and_one_count_per_refresh() {
        let (service, mut handle) = mock::pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(service, "default");
        let server = tokio::spawn(async move {
            let mut writes = Vec::new();
            while let Some((request, send)) = handle.next_request().await {
                let method = request.method().clone();
                let path = request.uri().path().to_owned();
                let body = request.into_body().collect_bytes().await.unwrap();
                let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
                let answer = if method == Method::POST {
                    assert_eq!(path, "/apis/events.k8s.io/v1/namespaces/db/events");
                    assert_eq!(body["reason"], DENIED);
                    assert_eq!(body["regarding"]["kind"], "StatefulSet");
                    assert_eq!(body["regarding"]["name"], "pg");
                    assert_eq!(body["reportingController"], CONTROLLER);
                    body.clone()
                } else {
                    assert_eq!(method, Method::PATCH);
                    assert!(
                        path.starts_with("/apis/events.k8s.io/v1/namespaces/db/events/pg."),
                        "{path}"
                    );
                    body.clone()
                };
                writes.push((method, body));
                send.send_response(Response::new(Body::from(answer.to_string().into_bytes())));
            }
            writes
        });
        let metrics = Arc::new(Metrics::new());
        let mut writer = EventWriter::new(
            client,
            "gateway-0",
            Duration::from_secs(3600),
            Arc::clone(&metrics),
        );
        let notice = notices(&observation(&[Action::Deny])).remove(0);
        for _ in 0..1000 {
            writer.notice(notice.clone()).await;
        }
        writer.refresh_series(false).await;
        assert_eq!(writer.tracked(), 1);
        writer.refresh_series(true).await;
        writer.refresh_series(true).await;
        drop(writer);
        let writes = server.await.unwrap();
        assert_eq!(writes.len(), 2, "one create, one count: {writes:?}");
        assert_eq!(writes[1].1["series"]["count"], 1000);
    }
}
