//! The admission path of one request, from body to answer, with its decision recorded.

use std::sync::Arc;
use std::time::Instant;

use kube_core::DynamicObject;
use kube_core::admission::AdmissionRequest;
use policies_cel::{Request, WireReview, stages};
use warp::reply::Response;

use crate::admission::Lane;
use crate::admission::body::{Body, Intake};
use crate::admission::evaluate::{Evaluator, Judged, Source};
use crate::admission::parse::{Unreadable, parse_typed};
use crate::admission::rehearsal::{self, Due, Rehearsal, Rehearsed};
use crate::admission::rejection::{refusal, status_response};
use crate::admission::review::ReviewResponse;
use crate::admission::{prefilter, verdict};
use crate::decision_log::{DecisionLog, DecisionRecord, ResourceRef, StageTime, now};
use crate::guard::SelfProtection;
use crate::metrics::Metrics;
use crate::policies::PolicyStore;
use crate::reports::{Observation, Reporting};

/// Everything the webhook needs to judge requests.
#[derive(Debug)]
pub struct Admission {
    policies: Arc<PolicyStore>,
    guard: SelfProtection,
    /// The guard's objects, computed once for the cheap pre-check.
    evaluator: Evaluator,
    metrics: Arc<Metrics>,
    log: Arc<DecisionLog>,
    intake: Intake,
    /// Whether each request's stages are timed and logged (`--stage-timings`).
    stage_timings: bool,
    /// The last judged bodies, rehearsed while the path is idle (`--keep-warm`).
    rehearsal: Rehearsal,
    /// Where failures go for PolicyReports and Events (none: off).
    reporting: Option<Reporting>,
}

impl Admission {
    /// The admission path over `policies`, judging with `evaluator`.
    pub fn new(
        policies: Arc<PolicyStore>,
        guard: SelfProtection,
        evaluator: Evaluator,
        metrics: Arc<Metrics>,
        log: Arc<DecisionLog>,
        intake: Intake,
    ) -> Self {
        Self {
            policies,
            guard,
            evaluator,
            metrics,
            log,
            intake,
            stage_timings: false,
            rehearsal: Rehearsal::off(),
            reporting: None,
        }
    }

    /// Hands the failures of judged requests to the PolicyReport and Event writers.
    #[must_use]
    pub fn with_reporting(mut self, reporting: Reporting) -> Self {
        self.reporting = Some(reporting).filter(Reporting::enabled);
        self
    }

    /// Times each request's stages, written with its decision (`policies_cel::stages`).
    #[must_use]
    pub fn with_stage_timings(mut self, timed: bool) -> Self {
        self.stage_timings = timed;
        self
    }

    /// Rehearses the last judged requests after `period` without one, for `window` after the
    /// last one judged for real (`--keep-warm`, `--keep-warm-for`; a zero period: never).
    #[must_use]
    pub fn with_keep_warm(mut self, period: std::time::Duration, window: std::time::Duration) -> Self {
        self.rehearsal = Rehearsal::new(period, window);
        self
    }

    /// How long the judged path may stay idle before it is rehearsed (zero: never).
    pub fn keep_warm(&self) -> std::time::Duration {
        self.rehearsal.period()
    }

    /// Returns once a request is judged after a rehearsal found the path [`Rehearsed::Dormant`].
    pub async fn rehearsals_resumed(&self) {
        self.rehearsal.resumed().await;
    }

    /// Rehearses a last judged request (each kept kind in turn) when none was judged for the `--keep-warm`
    /// period: the same reading, self-protection, plan, judging and answer as a request, with
    /// nothing recorded and the answer dropped ([`rehearsal`](super::rehearsal)).
    pub fn rehearse(&self) -> Rehearsed {
        let body = match self.rehearsal.due(std::time::Instant::now()) {
            Due::Body(body) => body,
            Due::NotYet => return Rehearsed::Skipped,
            Due::Dormant => return Rehearsed::Dormant,
        };
        let Some(review) = WireReview::read(&body) else {
            return Rehearsed::Skipped;
        };
        let source = Source::Wire(Box::new(review));
        let light = source.admission();
        let unnamed = unnamed_target(&source);
        let record = self.log.enabled().then(|| record_of(light, unnamed.as_deref()));
        if self.self_protection(light, unnamed.as_deref()).is_some() {
            return Rehearsed::Skipped;
        }
        let enforced = self.policies.enforced();
        let plan = enforced.plans.plan(&enforced.set, light);
        if plan.candidates.is_empty() {
            return Rehearsed::Skipped;
        }
        let uid = light.uid.clone();
        let Some(decision) = self.evaluator.rehearse(&enforced, &plan, source) else {
            return Rehearsed::Skipped;
        };
        let answer = verdict::respond(&uid, &decision).reply();
        drop((record, answer));
        Rehearsed::Judged
    }

    /// The limits bodies are read under.
    pub fn intake(&self) -> &Intake {
        &self.intake
    }

    /// Answers one body.
    pub async fn review(&self, body: Body) -> Response {
        let started = Instant::now();
        let timing = self.stage_timings.then(stages::begin);
        let bytes = match body {
            Body::Complete(bytes) => bytes,
            Body::TooLarge => {
                return self.invalid(
                    started,
                    status_response(
                        413,
                        format!(
                            "the request body is larger than the gateway accepts ({} bytes, --max-body-bytes)",
                            self.intake.limit()
                        ),
                    ),
                );
            }
            refused @ (Body::TimedOut(_) | Body::NoRoom(_)) => {
                return self.invalid(started, refusal(&refused));
            }
            Body::Failed(message) => {
                return self.invalid(
                    started,
                    status_response(400, format!("cannot read the body: {message}")),
                );
            }
        };
        let read = WireReview::read(&bytes);
        stages::mark("read: objects");
        match read {
            Some(review) => {
                self.judge(Source::Wire(Box::new(review)), Some(&bytes), started, timing)
                    .await
            }
            // Not a plain review: the typed parse says precisely what is wrong (or, for an odd
            // but valid document, judges it); the one-pass reading is not tried again.
            None => match parse_typed(&bytes) {
                Ok(request) => {
                    self.judge(Source::Parsed(Box::new(request)), None, started, timing)
                        .await
                }
                Err(unreadable) => self.unreadable(unreadable, started),
            },
        }
    }

    fn unreadable(&self, unreadable: Unreadable, started: Instant) -> Response {
        match unreadable {
            Unreadable {
                uid: Some(uid),
                message,
            } => {
                tracing::warn!(%uid, "unreadable AdmissionReview answered with a denial");
                let review = ReviewResponse::deny(&uid, 400, message);
                self.invalid(started, review.reply())
            }
            Unreadable { uid: None, message } => {
                tracing::warn!("a body that is not an AdmissionReview was refused");
                self.invalid(started, status_response(400, message))
            }
        }
    }

    /// The guard's verdict; asked only when the request may concern what it protects (its named
    /// objects, or Suture's own policy kinds).
    fn self_protection(&self, light: &Light, unnamed: Option<&str>) -> Option<String> {
        let name = unnamed.unwrap_or(&light.name);
        if self
            .guard
            .may_concern(&light.resource.group, &light.resource.resource, name)
        {
            let mut light = light.clone();
            light.name = name.to_owned();
            self.guard.check(&Request::new(light))
        } else {
            None
        }
    }

    fn invalid(&self, started: Instant, response: Response) -> Response {
        self.metrics
            .observe_request("invalid", started.elapsed().as_secs_f64());
        response
    }

    /// Judges a request by its own fields first (self-protection, the pre-filter); the request
    /// is finished for evaluation only when some policy could apply. `body` is its review when
    /// read in one pass (kept for rehearsals when judged); `timing` times its stages
    /// (`--stage-timings`).
    async fn judge(
        &self,
        source: Source,
        body: Option<&bytes::Bytes>,
        started: Instant,
        timing: Option<stages::Timing>,
    ) -> Response {
        let light = source.admission();
        let unnamed = unnamed_target(&source);
        let record = self.log.enabled().then(|| record_of(light, unnamed.as_deref()));
        let uid = light.uid.clone();
        let mut reported: Option<Target> = None;
        let judged = if let Some(message) = self.self_protection(light, unnamed.as_deref()) {
            self_protection(message)
        } else {
            stages::mark("self-protection");
            let enforced = self.policies.enforced();
            let plan = enforced.plans.plan(&enforced.set, light);
            stages::mark("plan");
            if plan.candidates.is_empty() {
                allowed()
            } else {
                let kind = rehearsal::Kind {
                    operation: prefilter::operation_name(light),
                    group: &light.resource.group,
                    resource: &light.resource.resource,
                    subresource: light.sub_resource.as_deref().unwrap_or_default(),
                };
                self.rehearsal.judged(body, kind);
                // Who asked for what, kept only when failures are reported (the request moves
                // into the evaluation).
                reported = self
                    .reporting
                    .as_ref()
                    .filter(|_| !light.dry_run)
                    .map(|_| target_of(light, unnamed.as_deref()));
                let judged = self.evaluator.judge(&enforced, &plan, source).await;
                stages::mark("evaluation end");
                judged
            }
        };
        let response = verdict::respond(&uid, &judged.decision);
        stages::mark("answer");
        let verdict_word = if judged.decision.allowed {
            "allowed"
        } else {
            "denied"
        };
        // Before the request's time is taken: its latency includes handing over its failures.
        if let (Some(reporting), Some(target)) = (&self.reporting, reported)
            && !judged.decision.failures.is_empty()
        {
            let enforced = self.policies.enforced();
            let severity = |policy: &str| {
                enforced
                    .set
                    .policies
                    .iter()
                    .find(|p| p.name == policy)
                    .and_then(|p| p.severity.clone())
            };
            reporting.observe(Observation {
                severities: judged
                    .decision
                    .failures
                    .iter()
                    .map(|f| severity(&f.policy))
                    .collect(),
                failures: judged.decision.failures.clone(),
                subject: target.subject,
                requester: target.requester,
                operation: target.operation,
                time: chrono::Utc::now(),
                impact: judged.impact,
            });
        }
        let elapsed = started.elapsed();
        self.metrics.observe_request(verdict_word, elapsed.as_secs_f64());
        for (policy, outcome) in verdict::policy_verdicts(&judged.decision) {
            self.metrics.count_policy(policy, outcome);
        }
        if let Some(kind) = judged.failure {
            self.metrics.count_error(kind.as_str());
        }
        stages::mark("metrics");
        if let Some(mut record) = record {
            if let Some(timing) = timing {
                let stages = stages::take(timing);
                // Only a request answered on the thread that read it has all its stages there.
                let on_this_thread = match judged.lane {
                    Some(lane) => lane == Lane::Inline,
                    None => judged.failure.is_none(),
                };
                if on_this_thread {
                    record.stages = StageTime::all(stages);
                }
            }
            record.verdict = verdict_word;
            record.denied_by = verdict::denied_by(&judged.decision);
            record.warned_by = verdict::warned_by(&judged.decision);
            record.failure = judged.failure.map(|k| k.as_str().to_owned());
            record.impact = judged.impact;
            record.lane = judged.lane.map(Lane::as_str);
            record.latency_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
            self.log.write(&record);
        }
        response.reply()
    }
}

/// The name of an unnamed request's object: a deletecollection's objects come unnamed, their
/// name in oldObject.
fn unnamed_target(source: &Source) -> Option<String> {
    source
        .admission()
        .name
        .is_empty()
        .then(|| source.target_name().into_owned())
        .filter(|name| !name.is_empty())
}

/// The object and requester of a request whose failures are reported.
struct Target {
    subject: policies_cel::reports::Subject,
    requester: String,
    operation: String,
}

fn target_of(admission: &Light, unnamed: Option<&str>) -> Target {
    Target {
        subject: policies_cel::reports::Subject::of(admission, unnamed.unwrap_or(&admission.name)),
        requester: admission.user_info.username.clone().unwrap_or_default(),
        operation: prefilter::operation_name(admission).to_owned(),
    }
}

/// A request's own fields, without its objects: what self-protection and the pre-filter read.
type Light = AdmissionRequest<DynamicObject>;

fn allowed() -> Judged {
    Judged {
        decision: policies_cel::Decision {
            allowed: true,
            ..policies_cel::Decision::default()
        },
        ..Judged::default()
    }
}

/// The gateway refusing a change to its own objects.
fn self_protection(message: String) -> Judged {
    Judged {
        decision: policies_cel::Decision {
            allowed: false,
            denials: vec![policies_cel::Denial {
                policy: verdict::SELF_PROTECTION.into(),
                binding: None,
                validation: None,
                message,
                reason: "Forbidden".into(),
            }],
            ..policies_cel::Decision::default()
        },
        ..Judged::default()
    }
}

/// The request part of a decision record: who asked for what (never object bodies); `unnamed`
/// names the object of an unnamed request (a deletecollection's).
fn record_of(admission: &Light, unnamed: Option<&str>) -> DecisionRecord {
    DecisionRecord {
        time: now(),
        uid: admission.uid.clone(),
        user: admission.user_info.username.clone().unwrap_or_default(),
        operation: prefilter::operation_name(admission).to_owned(),
        resource: ResourceRef {
            group: admission.resource.group.clone(),
            version: admission.resource.version.clone(),
            resource: admission.resource.resource.clone(),
            subresource: admission.sub_resource.clone().unwrap_or_default(),
        },
        namespace: admission.namespace.clone().unwrap_or_default(),
        name: unnamed.unwrap_or(&admission.name).to_owned(),
        dry_run: admission.dry_run,
        ..DecisionRecord::default()
    }
}
