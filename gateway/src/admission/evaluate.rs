//! Bounded evaluation: a concurrency limit (semaphore), `evaluate()` under a read view of the
//! model, and a per-request deadline. A request is first judged on the async worker that read it
//! under a small cost allowance (a trial: no thread hand-off); when that does not suffice, the
//! model is busy or no slot is free at once, on the evaluation pool ([`pool`](super::pool):
//! one thread per core) with the policies' whole budgets. A timeout, a panic or an internal error
//! is answered by the failurePolicy of the policies that could match; so are impact-reading
//! policies when the model is stale or not ready (they are left out of the evaluated set).
//! Requests of a shape whose evaluations ran long are judged on a lane of their own
//! ([`lanes`](super::lanes)), so that they cannot take the threads the others need.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use kube_core::DynamicObject;
use kube_core::admission::AdmissionRequest;
use policies_cel::impact::Summary;
use policies_cel::policy::{Policy, PolicySet};
use policies_cel::stages;
use policies_cel::{ClusterView, Decision, EvalContext, Request, Trial, WireReview};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::admission::failure;
use crate::admission::lanes::{HEAVY_CONCURRENCY, HEAVY_EVALUATION, Lane, Shape, ShapeMemory};
use crate::admission::plans::Plan;
use crate::admission::pool::{EvalPool, PoolError};
use crate::ledger::SharedLedger;
use crate::model::LiveModel;
use crate::policies::Enforced;

/// A function run on the evaluation pool before each evaluation (tests: slow or panicking
/// evaluations).
pub type EvalHook = Arc<dyn Fn(&Request) + Send + Sync>;

/// The whole request, finished on the evaluation thread (where its values are also dropped: no
/// cross-thread frees, and no CEL conversion on the async workers).
#[derive(Debug)]
pub enum Source {
    /// A body read in one pass, its request still to be finished.
    Wire(Box<WireReview>),
    /// Already parsed (a body the one-pass reading could not read).
    Parsed(Box<Request>),
}

impl Source {
    /// The request's own fields: what self-protection and the pre-filter read.
    pub fn admission(&self) -> &AdmissionRequest<DynamicObject> {
        match self {
            Self::Wire(review) => &review.admission,
            Self::Parsed(request) => &request.admission,
        }
    }

    /// The name of the object the request acts on (a deletecollection's objects come unnamed,
    /// their name in oldObject).
    pub fn target_name(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Self::Wire(review) => review.target_name(),
            Self::Parsed(request) => request.target_name(),
        }
    }

    fn into_request(self) -> Request {
        match self {
            Self::Wire(review) => review.into_request(),
            Self::Parsed(request) => *request,
        }
    }
}

/// Why the failure policy answered instead of (part of) an evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    Timeout,
    Panic,
    Internal,
    Stale,
}

impl FailureKind {
    /// The metric label and decision-log word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::Panic => "panic",
            Self::Internal => "internal",
            Self::Stale => "stale",
        }
    }
}

/// The outcome of judging one request.
#[derive(Debug, Clone, Default)]
pub struct Judged {
    pub decision: Decision,
    pub failure: Option<FailureKind>,
    /// The impact summary, when a policy read `impact`, the decision denies or warns, and the
    /// caller asked for it.
    pub impact: Option<Summary>,
    /// Where the request was evaluated (none: it was not).
    pub lane: Option<Lane>,
}

/// Runs evaluations within the limits.
pub struct Evaluator {
    model: Arc<LiveModel>,
    /// What admitted requests disrupted (the `history` variable), recorded into after each
    /// admission judged by a policy that reads it.
    ledger: Arc<SharedLedger>,
    pool: EvalPool,
    slots: Arc<Semaphore>,
    /// The heavy lane: its own thread and slots.
    heavy_pool: EvalPool,
    heavy_slots: Arc<Semaphore>,
    /// Shapes judged on the heavy lane.
    heavy_shapes: ShapeMemory,
    /// Shapes whose trial ran out lately: judged on the pool at once.
    beyond_trial: ShapeMemory,
    timeout: Duration,
    max_model_age: Duration,
    /// Recompute the impact summary for the decision log (evaluate() does not return it).
    summarize_impact: bool,
    /// The trial allowance on the async worker (0: always on the pool).
    inline_cost: u64,
    hook: Option<EvalHook>,
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator")
            .field("timeout", &self.timeout)
            .field("max_model_age", &self.max_model_age)
            .field("available_slots", &self.slots.available_permits())
            .field("threads", &self.pool.threads())
            .finish_non_exhaustive()
    }
}

/// The limits of an [`Evaluator`].
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_concurrency: usize,
    pub timeout: Duration,
    pub max_model_age: Duration,
    /// The cost allowance of a trial on the async worker (0: none).
    pub inline_cost: u64,
}

impl Evaluator {
    /// An evaluator over `model` and `ledger` within `limits`, evaluating on `pool`, and
    /// requests of heavy shapes on `heavy_pool`.
    pub fn new(
        model: Arc<LiveModel>,
        ledger: Arc<SharedLedger>,
        pool: EvalPool,
        heavy_pool: EvalPool,
        limits: Limits,
        summarize_impact: bool,
        hook: Option<EvalHook>,
    ) -> Self {
        Self {
            model,
            ledger,
            pool,
            slots: Arc::new(Semaphore::new(limits.max_concurrency.max(1))),
            heavy_pool,
            heavy_slots: Arc::new(Semaphore::new(HEAVY_CONCURRENCY)),
            heavy_shapes: ShapeMemory::default(),
            beyond_trial: ShapeMemory::default(),
            timeout: limits.timeout,
            max_model_age: limits.max_model_age,
            summarize_impact,
            inline_cost: limits.inline_cost,
            hook,
        }
    }

    /// Why impact-reading policies cannot be trusted now, if they cannot.
    pub fn staleness(&self) -> Option<String> {
        if !self.model.is_ready() {
            return Some("the cluster model is not ready (its initial lists are not in yet)".into());
        }
        match self.model.age() {
            None => Some("the cluster model has never been current".into()),
            Some(age) if age > self.max_model_age => Some(format!(
                "the cluster model is stale (last current {:.1}s ago; the limit is {:.1}s)",
                age.as_secs_f64(),
                self.max_model_age.as_secs_f64()
            )),
            Some(_) => None,
        }
    }

    /// Judges the request in `source` with the enforced set; `plan` holds the policies that
    /// could match it (never none: requests no policy could match are answered without the
    /// evaluator).
    pub async fn judge(&self, enforced: &Enforced, plan: &Plan, source: Source) -> Judged {
        let deadline = Instant::now() + self.timeout;
        let Some((stale_policies, why)) = self.split_stale(&plan.candidates) else {
            return self.run(Arc::clone(&enforced.set), plan, source, deadline).await;
        };
        let set = Arc::clone(&enforced.without_impact);
        let evaluated = Plan::of(
            plan.candidates
                .iter()
                .filter(|p| !stale_policies.iter().any(|s| Arc::ptr_eq(s, p)))
                .cloned()
                .collect(),
        );
        let mut judged = if evaluated.candidates.is_empty() {
            Judged {
                decision: Decision {
                    allowed: true,
                    ..Decision::default()
                },
                ..Judged::default()
            }
        } else {
            self.run(Arc::clone(&set), &evaluated, source, deadline).await
        };
        failure::apply(&mut judged.decision, &set, &stale_policies, &why);
        judged.failure = judged.failure.or(Some(FailureKind::Stale));
        judged
    }

    /// When the model is stale and some candidates read `impact`: those policies, and why (the
    /// others are judged with the enforced set's impact-free part).
    fn split_stale(&self, candidates: &[Arc<Policy>]) -> Option<(Vec<Arc<Policy>>, String)> {
        if !candidates.iter().any(|p| p.uses_impact) {
            return None;
        }
        let why = self.staleness()?;
        let stale: Vec<Arc<Policy>> = candidates.iter().filter(|p| p.uses_impact).cloned().collect();
        Some((stale, format!("policy reads `impact` but {why}")))
    }

    /// One bounded evaluation of `set`.
    async fn run(&self, set: Arc<PolicySet>, plan: &Plan, source: Source, deadline: Instant) -> Judged {
        let candidates = plan.candidates.as_slice();
        let fail = |kind: FailureKind, why: String| {
            let mut decision = Decision {
                allowed: true,
                ..Decision::default()
            };
            failure::apply(&mut decision, &set, candidates, &why);
            Judged {
                decision,
                failure: Some(kind),
                impact: None,
                lane: None,
            }
        };
        let budget = self.timeout;
        let (shape, reads_history) = (plan.shape, plan.reads_history);
        let heavy = self.heavy_shapes.is_marked(shape);
        let source = if heavy || self.beyond_trial.is_marked(shape) {
            source
        } else {
            match self.judge_inline(&set, candidates, shape, reads_history, source) {
                Ok(judged) => return judged,
                Err(unfinished) => unfinished,
            }
        };
        let (pool, slots) = if heavy {
            (&self.heavy_pool, &self.heavy_slots)
        } else {
            (&self.pool, &self.slots)
        };
        let permit = match tokio::time::timeout_at(deadline, Arc::clone(slots).acquire_owned()).await {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) => {
                return fail(FailureKind::Internal, "the evaluation pool is closed".into());
            }
            Err(_) => {
                return fail(
                    FailureKind::Timeout,
                    if heavy {
                        format!(
                            "no evaluation slot freed within the {:?} budget on the heavy lane (requests these policies judge have been taking over {:?} to evaluate)",
                            budget, HEAVY_EVALUATION
                        )
                    } else {
                        format!(
                            "no evaluation slot freed within the {:?} budget (the gateway is overloaded)",
                            budget
                        )
                    },
                );
            }
        };
        let model = Arc::clone(&self.model);
        let ledger = Arc::clone(&self.ledger);
        let hook = self.hook.clone();
        let summarize = self.summarize_impact;
        let task_set = Arc::clone(&set);
        let task_candidates = candidates.to_vec();
        let began = Arc::new(std::sync::OnceLock::new());
        let task_began = Arc::clone(&began);
        let live = self.model.mirrors_cluster();
        let task = pool.run(move || {
            let _permit = permit;
            let request = source.into_request();
            if let Some(hook) = &hook {
                hook(&request);
            }
            let view = model.read();
            // Timed from here: waiting for the model (a re-list holding it) is not the
            // policies' doing, and must not send an ordinary shape to the heavy lane.
            let _ = task_began.set(Instant::now());
            let base = EvalContext {
                live,
                only: Some(&task_candidates),
                ..EvalContext::default()
            };
            let decision = judge_request(
                &ledger,
                &task_set,
                &request,
                &*view,
                reads_history,
                &base,
                Recording::Admitted,
            );
            drop(view);
            with_summary(decision, summarize)
        });
        let outcome = tokio::time::timeout_at(deadline, task).await;
        if let Some(began) = began.get() {
            self.observe(shape, candidates, began.elapsed());
        }
        match outcome {
            Ok(Ok((decision, impact))) => Judged {
                decision,
                failure: None,
                impact,
                lane: Some(if heavy { Lane::Heavy } else { Lane::Pool }),
            },
            Ok(Err(PoolError::Panicked)) => {
                tracing::error!("an evaluation panicked; answered by failurePolicy");
                fail(
                    FailureKind::Panic,
                    "internal error while evaluating the request".into(),
                )
            }
            Ok(Err(error @ PoolError::Closed)) => fail(
                FailureKind::Internal,
                format!("the evaluation was cancelled: {error}"),
            ),
            Err(_) => fail(
                FailureKind::Timeout,
                format!("the evaluation did not finish within {:?}", budget),
            ),
        }
    }
}

impl Evaluator {
    /// Judges the request on this async worker under the trial allowance, when a slot is free
    /// and no writer holds the model at once; gives the request back (finished) to be judged on
    /// the pool otherwise, or when the allowance did not suffice (then requests of its `shape`
    /// skip the trial for a while) or the evaluation panicked (the pool judges it again with the
    /// whole budget, and reports a panic as such). Tests' hooks (slow or panicking evaluations)
    /// always run on the pool.
    fn judge_inline(
        &self,
        set: &Arc<PolicySet>,
        candidates: &[Arc<Policy>],
        shape: Shape,
        reads_history: bool,
        source: Source,
    ) -> Result<Judged, Source> {
        // Tried whether or not the pool is busy: when expensive requests occupy its threads
        // (before their shape is found heavy), a cheap request judged here does not queue behind
        // them. Under many connections of cheap requests this costs throughput
        // (bench/gateway/history.md, "The inline trial under load").
        let decision = self.trial(set, candidates, shape, reads_history, source, Recording::Admitted)?;
        let (decision, impact) = with_summary(decision, self.summarize_impact);
        Ok(Judged {
            decision,
            failure: None,
            impact,
            lane: Some(Lane::Inline),
        })
    }

    /// Judges `source` on this async worker under the trial allowance when a slot is free and no
    /// writer holds the model at once (else gives it back as it came): the decision when the
    /// trial concluded; otherwise the request, finished, for the pool to judge — when the
    /// allowance did not suffice (requests of its shape then skip the trial for a while), the
    /// ledger's turn was taken, or the evaluation panicked. Tests' hooks never run here.
    fn trial(
        &self,
        set: &PolicySet,
        candidates: &[Arc<Policy>],
        shape: Shape,
        reads_history: bool,
        source: Source,
        recording: Recording,
    ) -> Result<Decision, Source> {
        if self.inline_cost == 0 || self.hook.is_some() {
            return Err(source);
        }
        let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() else {
            return Err(source);
        };
        let Some(view) = self.model.try_read() else {
            return Err(source);
        };
        let request = source.into_request();
        stages::mark("finish the request");
        let trial = Trial::new(self.inline_cost);
        let judged = catch_unwind(AssertUnwindSafe(|| {
            let base = EvalContext {
                trial: Some(&trial),
                live: self.model.mirrors_cluster(),
                only: Some(candidates),
                ..EvalContext::default()
            };
            judge_request(
                &self.ledger,
                set,
                &request,
                &*view,
                reads_history,
                &base,
                recording,
            )
        }));
        drop(view);
        drop(permit);
        match judged {
            Ok(decision) if trial.concluded() => Ok(decision),
            Ok(_) if trial.exhausted() => {
                self.beyond_trial.mark(shape);
                Err(Source::Parsed(Box::new(request)))
            }
            // Abandoned (the ledger's turn was taken) or panicked: the pool judges this one.
            Ok(_) | Err(_) => Err(Source::Parsed(Box::new(request))),
        }
    }

    /// Judges `source` as a rehearsal ([`rehearsal`](super::rehearsal)): the inline trial
    /// ([`Self::trial`]), only when no candidate waits for the model to be current; against the
    /// ledger's view without recording, and without marking any shape heavy. Shapes whose trial
    /// ran out lately (a request's or a rehearsal's, which then marks it as a request's would)
    /// are not rehearsed: each rehearsal would spend the whole allowance for nothing. The
    /// decision is the request's only when the trial concluded; `None` when the rehearsal was
    /// skipped or did not conclude.
    pub fn rehearse(&self, enforced: &Enforced, plan: &Plan, source: Source) -> Option<Decision> {
        if self.inline_cost == 0
            || self.hook.is_some()
            || self.heavy_shapes.is_marked(plan.shape)
            || self.beyond_trial.is_marked(plan.shape)
            || self.split_stale(&plan.candidates).is_some()
        {
            return None;
        }
        self.trial(
            &enforced.set,
            &plan.candidates,
            plan.shape,
            plan.reads_history,
            source,
            Recording::Nothing,
        )
        .ok()
    }

    /// Marks `shape` heavy when its evaluation took `took` or longer than the threshold.
    fn observe(&self, shape: Shape, candidates: &[Arc<Policy>], took: Duration) {
        if self.heavy_shapes.observe(shape, took) {
            let policies: Vec<&str> = candidates.iter().map(|p| p.name.as_str()).collect();
            tracing::warn!(
                ?policies,
                took_ms = took.as_millis(),
                "an evaluation by these policies ran long: requests they judge go to the heavy lane"
            );
        }
    }
}

/// Judges `request` (against the ledger when a candidate reads `history`, recording what it
/// admits as `recording` says) in `base`'s context:
/// within its trial's allowance when there is one (the decision is the request's when the trial
/// concluded), and with its `live` (the model mirrors kube-apiserver).
fn judge_request(
    ledger: &SharedLedger,
    set: &PolicySet,
    request: &Request,
    view: &dyn ClusterView,
    reads_history: bool,
    base: &EvalContext<'_>,
    recording: Recording,
) -> Decision {
    match (reads_history, recording) {
        (true, Recording::Admitted) => judge_with_history(ledger, set, request, view, base),
        (true, Recording::Nothing) => {
            judge_against_ledger(ledger, set, request, view, base, chrono::Utc::now())
        }
        (false, _) => policies_cel::evaluate_in(set, request, view, base),
    }
}

/// Whether a judging records what it admits in the ledger (a rehearsal records nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recording {
    Admitted,
    Nothing,
}

/// The decision, with the estimate the policies read taken out as a summary for the decision log
/// when `summarize` (the response never carries it).
fn with_summary(mut decision: Decision, summarize: bool) -> (Decision, Option<Summary>) {
    let impact = decision
        .impact
        .take()
        .filter(|_| summarize)
        .map(|estimate| estimate.summary);
    (decision, impact)
}

/// Judges `request` in `base`'s context against the ledger's records as of `now`, recording
/// nothing.
fn judge_against_ledger(
    ledger: &SharedLedger,
    set: &PolicySet,
    request: &Request,
    view: &dyn ClusterView,
    base: &EvalContext<'_>,
    now: chrono::DateTime<chrono::Utc>,
) -> Decision {
    ledger.with_view(|history| {
        let context = EvalContext {
            history: Some(history),
            now: Some(now),
            ..*base
        };
        policies_cel::evaluate_in(set, request, view, &context)
    })
}

/// Judges `request` against `history` and records it when admitted, so that requests of this
/// replica never spend the same budget twice: a request to be recorded is recorded in the
/// ledger's turn, and judged again there when another record arrived since its evaluation began
/// (rare). Requests that record nothing (denied, dry runs, nothing disrupted) never wait: a
/// budget only grows stricter with more records, so judging them against a view one record old
/// cannot admit what a newer view would deny.
/// Under a trial, nothing is recorded unless it concluded (otherwise the decision is not used).
fn judge_with_history(
    ledger: &SharedLedger,
    set: &PolicySet,
    request: &Request,
    view: &dyn ClusterView,
    base: &EvalContext<'_>,
) -> Decision {
    let trial = base.trial;
    let judge = |now| judge_against_ledger(ledger, set, request, view, base, now);
    let unfinished = || trial.is_some_and(|trial| !trial.concluded());
    let version = ledger.version();
    let now = chrono::Utc::now();
    let decision = judge(now);
    if unfinished() || policies_cel::history::record_of(request, &decision, view, now).is_none() {
        return decision;
    }
    // A trial does not wait for another request's turn: the pool judges it again.
    let _turn = match trial {
        None => ledger.turn(),
        Some(trial) => match ledger.try_turn() {
            Some(turn) => turn,
            None => {
                trial.abandon();
                return decision;
            }
        },
    };
    let (decision, now) = if ledger.version() == version {
        (decision, now)
    } else {
        let now = chrono::Utc::now();
        (judge(now), now)
    };
    if unfinished() {
        return decision;
    }
    if let Some(record) = policies_cel::history::record_of(request, &decision, view, now) {
        ledger.record(record);
    }
    decision
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::lanes::DEFAULT_INLINE_COST;
    use policies_cel::cluster::ClusterModel;
    use policies_cel::policy::Loader;

    fn evaluator(model: LiveModel, max_model_age: Duration) -> Evaluator {
        with_inline_cost(model, max_model_age, 0)
    }

    /// An evaluator with the default trial allowance over an empty, ready model.
    fn trying_inline() -> Arc<Evaluator> {
        Arc::new(with_inline_cost(
            LiveModel::ready_with(ClusterModel::new()),
            Duration::from_secs(60),
            DEFAULT_INLINE_COST,
        ))
    }

    fn with_inline_cost(model: LiveModel, max_model_age: Duration, inline_cost: u64) -> Evaluator {
        let limits = Limits {
            max_concurrency: 2,
            timeout: Duration::from_secs(1),
            max_model_age,
            inline_cost,
        };
        Evaluator::new(
            Arc::new(model),
            Arc::new(SharedLedger::local("test")),
            EvalPool::new(1).unwrap(),
            EvalPool::new(1).unwrap(),
            limits,
            false,
            None,
        )
    }

    const POLICIES: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: reads-impact}
spec:
  validations: [{expression: "impact.summary.deleted == 0"}]
---
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: plain}
spec:
  validations: [{expression: "true"}]
"#;

    #[test]
    fn staleness_follows_readiness_and_age() {
        assert!(
            evaluator(LiveModel::new(), Duration::from_secs(60))
                .staleness()
                .is_some()
        );
        let fresh = evaluator(
            LiveModel::ready_with(ClusterModel::new()),
            Duration::from_secs(60),
        );
        assert_eq!(fresh.staleness(), None);
        let old = evaluator(LiveModel::ready_with(ClusterModel::new()), Duration::ZERO);
        std::thread::sleep(Duration::from_millis(5));
        assert!(old.staleness().unwrap().contains("stale"));
    }

    #[test]
    fn a_stale_model_leaves_only_impact_readers_out() {
        let enforced = Enforced::new(
            Loader::new()
                .add_str("p.yaml", POLICIES)
                .unwrap()
                .finish()
                .unwrap(),
        );
        let candidates = enforced.set.policies.clone();
        let fresh = evaluator(
            LiveModel::ready_with(ClusterModel::new()),
            Duration::from_secs(60),
        );
        assert!(fresh.split_stale(&candidates).is_none());

        let stale = evaluator(LiveModel::new(), Duration::from_secs(60));
        let (left_out, why) = stale.split_stale(&candidates).unwrap();
        let names = |policies: &[Arc<Policy>]| policies.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        // What a stale model is judged with: the set's impact-free part, built at load.
        assert_eq!(names(&enforced.without_impact.policies), ["plain"]);
        assert_eq!(names(&left_out), ["reads-impact"]);
        assert!(why.contains("not ready"), "{why}");
        // Without an impact reader among the candidates, nothing is split even when stale.
        assert!(stale.split_stale(&candidates[1..]).is_none());
    }

    /// A trial of `costly` needs more than 1000 units (a 5000-step comprehension); `cheap` fits.
    const LANE_POLICIES: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: costly}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["*"], operations: [CREATE], resources: [configmaps]}]
  validations: [{expression: "object.metadata.name != 'costly' || lists.range(5000).all(i, i >= 0)"}]
---
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: names}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["*"], operations: [CREATE], resources: [configmaps]}]
  validations: [{expression: "object.metadata.name != 'refused'", message: "refused by name"}]
"#;

    /// A core-group request of an operator of `namespace` on `kind`/`resource` `name`.
    fn core_request(
        operation: &str,
        (kind, resource): (&str, &str),
        namespace: &str,
        name: &str,
        object: serde_json::Value,
    ) -> Source {
        let review = serde_json::json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "u", "operation": operation, "name": name, "namespace": namespace,
                "kind": {"group": "", "version": "v1", "kind": kind},
                "resource": {"group": "", "version": "v1", "resource": resource},
                "userInfo": {"username": format!("system:serviceaccount:{namespace}:operator")},
                "object": object
            }
        });
        Source::Parsed(Box::new(Request::from_review(review).unwrap()))
    }

    /// The shape of the requests every policy of `policies` could judge.
    fn shape_of(policies: &str) -> Shape {
        Shape::of(
            &Loader::new()
                .add_str("p.yaml", policies)
                .unwrap()
                .finish()
                .unwrap()
                .policies,
        )
    }

    fn configmap_create(name: &str) -> Source {
        let object = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "ns"}});
        core_request("CREATE", ("ConfigMap", "configmaps"), "ns", name, object)
    }

    async fn judged(evaluator: &Evaluator, name: &str) -> Judged {
        let enforced = Enforced::new(
            Loader::new()
                .add_str("lanes.yaml", LANE_POLICIES)
                .unwrap()
                .finish()
                .unwrap(),
        );
        let candidates = enforced.set.policies.clone();
        evaluator
            .judge(&enforced, &Plan::of(candidates), configmap_create(name))
            .await
    }

    #[tokio::test]
    async fn within_the_allowance_a_request_is_judged_inline_and_beyond_it_on_the_pool() {
        let evaluator = with_inline_cost(
            LiveModel::ready_with(ClusterModel::new()),
            Duration::from_secs(60),
            1_000,
        );
        let cheap = judged(&evaluator, "refused").await;
        assert_eq!(cheap.lane, Some(Lane::Inline));
        assert!(!cheap.decision.allowed, "the inline verdict is the policies'");
        assert_eq!(cheap.decision.denials[0].message, "refused by name");

        let costly = judged(&evaluator, "costly").await;
        assert_eq!(
            costly.lane,
            Some(Lane::Pool),
            "5000 steps do not fit in 1000 units"
        );
        assert!(
            costly.decision.allowed,
            "judged again with the whole budget, not refused for the trial's: {:?}",
            costly.decision.denials
        );
        assert_eq!(costly.failure, None);
        let shape = shape_of(LANE_POLICIES);
        assert!(
            evaluator.beyond_trial.is_marked(shape),
            "requests of a shape whose trial ran out skip the trial for a while"
        );
        assert_eq!(judged(&evaluator, "refused").await.lane, Some(Lane::Pool));

        let never = with_inline_cost(
            LiveModel::ready_with(ClusterModel::new()),
            Duration::from_secs(60),
            0,
        );
        assert_eq!(
            judged(&never, "refused").await.lane,
            Some(Lane::Pool),
            "--inline-cost 0"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_model_held_by_a_writer_sends_the_request_to_the_pool_instead_of_blocking_the_worker() {
        // The policy set `judged` loads extends the OperatorProfile catalog, compiled on first
        // use: compile it now, so the request reaches its trial while the writer holds the model.
        let _ = policies_cel::operators::catalog();
        let evaluator = trying_inline();
        let (held, release) = std::sync::mpsc::channel::<()>();
        let (holding, is_held) = tokio::sync::oneshot::channel();
        let model = Arc::clone(&evaluator.model);
        let writer = std::thread::spawn(move || {
            let _write = model.write();
            let _ = holding.send(());
            let _ = release.recv();
        });
        is_held.await.unwrap();
        let judging = tokio::spawn({
            let evaluator = Arc::clone(&evaluator);
            async move { judged(&evaluator, "refused").await }
        });
        // The pool waits for the writer; the async worker did not.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!judging.is_finished(), "judged while the writer held the model");
        held.send(()).unwrap();
        writer.join().unwrap();
        let judged = judging.await.unwrap();
        assert_eq!(judged.lane, Some(Lane::Pool));
        assert!(!judged.decision.allowed);
    }

    /// An operator's scale of StatefulSet `ns/db` to 0, and a model holding one of its pods but
    /// not the set (its watch lags).
    fn scale_of_a_set_the_model_lacks() -> (Source, ClusterModel) {
        let scale = |replicas: i64| {
            serde_json::json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                "metadata": {"name": "db", "namespace": "ns", "uid": "s1"}, "spec": {"replicas": replicas}})
        };
        let review = serde_json::json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "u", "operation": "UPDATE", "name": "db", "namespace": "ns",
                "subResource": "scale",
                "kind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
                "resource": {"group": "apps", "version": "v1", "resource": "statefulsets"},
                "userInfo": {"username": "system:serviceaccount:ns:operator"},
                "object": scale(0), "oldObject": scale(1)
            }
        });
        let mut model = ClusterModel::new();
        let member = serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "db-0", "namespace": "ns", "uid": "p0",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "s1", "controller": true}]}});
        let member = policies_cel::cluster::project(&member, &mut model).unwrap();
        model.insert(member);
        (
            Source::Parsed(Box::new(Request::from_review(review).unwrap())),
            model,
        )
    }

    #[tokio::test]
    async fn live_an_object_the_model_lacks_makes_impact_readers_follow_failure_policy() {
        let enforced = Enforced::new(
            Loader::new()
                .add_str("p.yaml", POLICIES)
                .unwrap()
                .finish()
                .unwrap(),
        );
        for inline_cost in [0, DEFAULT_INLINE_COST] {
            // Offline (a snapshot may leave the set out): nothing is counted, admitted.
            let (source, model) = scale_of_a_set_the_model_lacks();
            let offline =
                with_inline_cost(LiveModel::ready_with(model), Duration::from_secs(60), inline_cost);
            let judged = offline
                .judge(&enforced, &Plan::of(enforced.set.policies.clone()), source)
                .await;
            assert!(judged.decision.allowed, "{:?}", judged.decision.denials);

            // Live (watches mirror kube-apiserver, which judges a scale only of a set it has):
            // the set's watch lags.
            let (source, model) = scale_of_a_set_the_model_lacks();
            let live = LiveModel::new();
            live.replace(model);
            live.mark_ready();
            let live = with_inline_cost(live, Duration::from_secs(60), inline_cost);
            assert_eq!(live.staleness(), None, "a current model");
            let judged = live
                .judge(&enforced, &Plan::of(enforced.set.policies.clone()), source)
                .await;
            assert!(!judged.decision.allowed, "inline cost {inline_cost}");
            let denials = &judged.decision.denials;
            assert_eq!(denials.len(), 1, "{denials:?}");
            assert_eq!(denials[0].policy, "reads-impact");
            assert!(
                denials[0].message.contains("does not hold StatefulSet ns/db yet"),
                "{}",
                denials[0].message
            );
        }
    }

    /// A rate policy reading the history: a Pod DELETE it admits is recorded in the ledger.
    const RATE_POLICY: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: rate}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["*"], operations: [DELETE], resources: [pods]}]
  validations: [{expression: "history.byRequester('10m').podsDisrupted < 5"}]
"#;

    fn pod_delete(name: &str) -> Source {
        core_request("DELETE", ("Pod", "pods"), "shop", name, serde_json::Value::Null)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_trial_whose_ledger_turn_is_taken_is_judged_and_recorded_once_on_the_pool() {
        let mut model = ClusterModel::new();
        let pod = policies_cel::cluster::project(
            &serde_json::json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "web-0", "namespace": "shop", "uid": "u-web-0"},
                "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}),
            &mut model,
        )
        .unwrap();
        model.insert(pod);
        let evaluator = Arc::new(with_inline_cost(
            LiveModel::ready_with(model),
            Duration::from_secs(60),
            DEFAULT_INLINE_COST,
        ));
        let enforced = Enforced::new(
            Loader::new()
                .add_str("rate.yaml", RATE_POLICY)
                .unwrap()
                .finish()
                .unwrap(),
        );
        // Another request holds the ledger's turn (it is recording).
        let (held, release) = std::sync::mpsc::channel::<()>();
        let (holding, is_held) = tokio::sync::oneshot::channel();
        let recorder = std::thread::spawn({
            let evaluator = Arc::clone(&evaluator);
            move || {
                let _turn = evaluator.ledger.turn();
                let _ = holding.send(());
                let _ = release.recv();
            }
        });
        is_held.await.unwrap();
        let judging = tokio::spawn({
            let (evaluator, enforced) = (Arc::clone(&evaluator), enforced);
            async move {
                let candidates = enforced.set.policies.clone();
                evaluator
                    .judge(&enforced, &Plan::of(candidates), pod_delete("web-0"))
                    .await
            }
        });
        // The trial gave the request up rather than wait; the pool waits for the turn.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!judging.is_finished(), "recorded without the ledger's turn");
        held.send(()).unwrap();
        recorder.join().unwrap();
        let judged = judging.await.unwrap();
        assert_eq!(judged.lane, Some(Lane::Pool));
        assert!(judged.decision.allowed, "{:?}", judged.decision.denials);
        assert_eq!(
            evaluator.ledger.own_records(chrono::Utc::now()).len(),
            1,
            "recorded once, by the pool's evaluation only"
        );
        let shape = shape_of(RATE_POLICY);
        assert!(
            !evaluator.beyond_trial.is_marked(shape),
            "an abandoned trial is not an exhausted one: its shape keeps the trial"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cheap_request_does_not_queue_behind_long_evaluations_on_the_pool() {
        let evaluator = trying_inline();
        // The pool's only thread is taken by a long evaluation (a shape not yet found heavy),
        // which holds its slot.
        let (taken, is_taken) = tokio::sync::oneshot::channel();
        let slot = Arc::clone(&evaluator.slots).acquire_owned().await.unwrap();
        let long = tokio::spawn({
            let evaluator = Arc::clone(&evaluator);
            async move {
                evaluator
                    .pool
                    .run(move || {
                        let _slot = slot;
                        let _ = taken.send(());
                        std::thread::sleep(Duration::from_millis(500));
                    })
                    .await
            }
        });
        is_taken.await.unwrap();
        let began = std::time::Instant::now();
        let cheap = judged(&evaluator, "refused").await;
        assert_eq!(cheap.lane, Some(Lane::Inline));
        assert!(!cheap.decision.allowed);
        assert!(
            began.elapsed() < Duration::from_millis(400),
            "waited for the pool: {:?}",
            began.elapsed()
        );
        long.await.unwrap().unwrap();
    }
}
