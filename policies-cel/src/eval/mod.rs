//! `evaluate()`: which policies apply to a request (matching, bindings, subjects, params), what
//! each says (per-validation outcomes), and how their answers combine into one [`Decision`],
//! exactly as kube-apiserver does for ValidatingAdmissionPolicy.

mod checked_json;
mod counterpart;
mod decision;
mod escape;
pub(crate) mod json_text;
mod lazy_impact;
mod match_memo;
mod matching;
pub(crate) mod outline;
mod params;
pub mod prefilter;
mod request;
pub(crate) mod review;
mod root_fields;
mod run;
pub mod selector;
pub mod subjects;
pub mod swar;
mod target;
mod trial;
mod wire;
mod wire_fields;
mod wire_review;

pub use decision::{Decision, Denial, Failure, Outcome, PolicyResult};
pub(crate) use request::Objects;
pub use request::{Request, RequestError, operation_name};
pub use trial::Trial;
pub(crate) use wire::Found;
pub use wire_review::WireReview;

use std::cell::OnceCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::cel::functions::authorizer::authorizer_for_request;
use crate::cel::value::from_json;
use crate::cel::{EvalError, Value};
use crate::cluster::{ClusterView, Object};
use crate::eval::lazy_impact::LazyImpact;
use crate::eval::matching::MatchInput;
use crate::eval::params::ParamChoice;
use crate::eval::run::{RunInput, RunOutcome, Violation, run};
use crate::history::{Ledger, RequestHistory};
use crate::policy::{Action, Binding, FailurePolicy, Policy, PolicyKind, PolicySet};

/// The annotation kube-apiserver records failed validations with action Audit under.
pub const AUDIT_FAILURE_KEY: &str = "validation.policy.admission.k8s.io/validation_failure";

/// What a request is judged with besides the policies, itself and the cluster: the history of
/// admitted disruption the `history` library reads, the time its windows end at, whether this
/// is a trial under a small allowance, and whether the cluster view mirrors kube-apiserver.
#[derive(Debug, Clone, Copy, Default)]
pub struct EvalContext<'a> {
    /// The ledger (none: nothing was recorded, every window is empty).
    pub history: Option<&'a Ledger>,
    /// The time of the request (none: the clock's, read only when a policy asks).
    pub now: Option<DateTime<Utc>>,
    /// A trial's allowance, shared by every policy (none: each policy has its whole budget).
    /// When [`Trial::exhausted`] afterwards, the decision is not the request's.
    pub trial: Option<&'a Trial>,
    /// The cluster view mirrors kube-apiserver as it is now (the gateway's watches), so the
    /// workload a `scale` changes is in the cluster (kube-apiserver judges a scale only of one
    /// it has): when the view lacks it ([`Impact::missing`]: a watch has not delivered it yet),
    /// `impact` is unavailable and the policies reading it follow their failurePolicy, instead of
    /// counting nothing. False for snapshots, which may leave objects out.
    pub live: bool,
    /// The policies that could judge the request (the gateway's pre-filter, which leaves out
    /// only policies that cannot match it): the others are not evaluated and not listed in the
    /// decision's `policies`. None: every policy of the set.
    pub only: Option<&'a [Arc<Policy>]>,
}

impl<'a> EvalContext<'a> {
    /// A context with `ledger`, judged at `now`.
    pub fn with_history(ledger: &'a Ledger, now: DateTime<Utc>) -> Self {
        Self {
            history: Some(ledger),
            now: Some(now),
            trial: None,
            live: false,
            only: None,
        }
    }
}

/// Judges `request` against every policy in `set`, seeing the cluster through `cluster`, with
/// no history (every `history` window is empty).
pub fn evaluate(set: &PolicySet, request: &Request, cluster: &dyn ClusterView) -> Decision {
    evaluate_in(set, request, cluster, &EvalContext::default())
}

/// Judges `request` against every policy in `set`, seeing the cluster through `cluster` and the
/// admitted disruption through `context`'s ledger (looked at only when a policy calls
/// `history`).
pub fn evaluate_in(
    set: &PolicySet,
    request: &Request,
    cluster: &dyn ClusterView,
    context: &EvalContext<'_>,
) -> Decision {
    let history = RequestHistory::new(context.history, context.now, request, cluster);
    let live = context.live;
    let only = context.only;
    let admission = &request.admission;
    let namespace = admission.namespace.as_deref().unwrap_or_default();
    let context = Context {
        set,
        request,
        input: MatchInput::new(request, cluster),
        namespace,
        namespace_object: OnceCell::new(),
        cluster: (cluster.object_count() > 0).then_some(cluster),
        target: OnceCell::new(),
        authorizer: OnceCell::new(),
        history: &history,
        match_memo: match_memo::MatchMemo::default(),
        trial: context.trial,
    };
    let estimate = || {
        if cluster.object_count() == 0 {
            return Err(EvalError::Unavailable(
                "impact (no cluster model: give a --cluster snapshot, or run in the gateway)".into(),
            ));
        }
        crate::stages::mark("policy, before impact");
        let estimate = crate::impact::estimate_with(request, cluster, &set.profiles);
        crate::stages::mark("impact estimate");
        if let Some(key) = estimate.missing.as_ref().filter(|_| live) {
            return Err(EvalError::Unavailable(format!(
                "impact (the cluster model does not hold {key} yet: its watch has not delivered it)"
            )));
        }
        Ok(estimate)
    };
    let impact = LazyImpact::new(&estimate);
    let mut verdict = Verdict::default();
    for policy in context_policies(set, only) {
        for (binding, actions) in bindings_of(set, policy) {
            let pair = Pair {
                policy,
                binding,
                actions,
            };
            let outcome = judge(&context, &pair, &impact, &mut verdict);
            crate::stages::mark("policy");
            verdict.decision.policies.push(PolicyResult {
                policy: policy.name.clone(),
                binding: binding.map(|b| b.name.clone()),
                actions: actions.to_vec(),
                outcome,
            });
        }
    }
    let mut decision = verdict.finish();
    // The estimate the policies read, for reports and decision logs (never computed again).
    decision.impact = impact.into_estimate();
    decision
}

/// The policies a request is judged against: the set's, or those `only` names (which the set
/// holds).
fn context_policies<'a>(
    set: &'a PolicySet,
    only: Option<&'a [Arc<Policy>]>,
) -> impl Iterator<Item = &'a Policy> + 'a {
    only.unwrap_or(&set.policies).iter().map(|policy| &**policy)
}

/// What every (policy, binding) pair of one request shares.
struct Context<'a> {
    set: &'a PolicySet,
    request: &'a Request,
    input: MatchInput<'a>,
    namespace: &'a str,
    /// `namespaceObject`, converted on first read.
    namespace_object: OnceCell<Value>,
    /// `authorizer`, built on first read.
    authorizer: OnceCell<Value>,
    /// The model behind the `cluster` library (None when the view knows nothing).
    cluster: Option<&'a dyn ClusterView>,
    /// The model's copy of the request's target, looked up on the first escape-hatch check.
    target: OnceCell<Option<&'a Object>>,
    /// The ledger as this request sees it (the `history` library).
    history: &'a RequestHistory<'a>,
    /// matchCondition answers shared by the policies judging this request.
    match_memo: match_memo::MatchMemo,
    /// The allowance of a trial evaluation.
    trial: Option<&'a Trial>,
}

impl Context<'_> {
    /// The `authorizer` variable for this request (built once, when a policy first reads it).
    fn authorizer(&self) -> Value {
        let admission = &self.request.admission;
        self.authorizer
            .get_or_init(|| {
                authorizer_for_request(
                    self.set.options.authorizer,
                    &admission.resource.group,
                    &admission.resource.resource,
                    admission.sub_resource.as_deref().unwrap_or_default(),
                    self.namespace,
                    &admission.name,
                )
            })
            .clone()
    }
}

/// A policy judged through one binding (`None`: self-bound or the offline implicit binding).
struct Pair<'a, 'b> {
    policy: &'a Policy,
    binding: Option<&'a Binding>,
    actions: &'b [Action],
}

/// The decision being built, with the failures recorded for the Audit action.
#[derive(Default)]
pub(crate) struct Verdict {
    pub(crate) decision: Decision,
    audit_failures: Vec<serde_json::Value>,
}

impl Verdict {
    /// The decision, with the Audit failures recorded under [`AUDIT_FAILURE_KEY`] (after any
    /// already there) and `allowed` set from the denials.
    fn finish(self) -> Decision {
        let Verdict {
            mut decision,
            audit_failures,
        } = self;
        if !audit_failures.is_empty() {
            let mut recorded: Vec<serde_json::Value> = decision
                .audit_annotations
                .get(AUDIT_FAILURE_KEY)
                .and_then(|text| serde_json::from_str(text).ok())
                .unwrap_or_default();
            recorded.extend(audit_failures);
            decision.audit_annotations.insert(
                AUDIT_FAILURE_KEY.to_owned(),
                serde_json::Value::Array(recorded).to_string(),
            );
        }
        decision.allowed = decision.denials.is_empty();
        decision
    }
}

/// Adds to `decision` the answer for `policy` when it could not be evaluated at all (a timeout,
/// an internal error, a stale cluster model), `message` saying why. Under failurePolicy Fail the
/// failure goes through each binding's actions as a failed validation would, as kube-apiserver
/// applies validationActions: Deny denies with `reason`, Warn warns, Audit records the failure
/// under [`AUDIT_FAILURE_KEY`]. Under Ignore the request is allowed with one warning for the
/// policy. Either way each binding gets an [`Outcome::Error`]; `decision.allowed` is set from
/// the denials.
pub fn apply_failure(decision: &mut Decision, set: &PolicySet, policy: &Policy, message: &str, reason: &str) {
    let ignored = policy.failure_policy == FailurePolicy::Ignore;
    let mut verdict = Verdict {
        decision: std::mem::take(decision),
        audit_failures: Vec::new(),
    };
    if ignored && bindings_of(set, policy).next().is_some() {
        verdict.decision.warnings.push(format!(
            "{} '{}' was not evaluated: {message}",
            kind_name(policy),
            policy.name
        ));
    }
    let violation = Violation {
        validation: None,
        message: message.to_owned(),
        reason: reason.to_owned(),
    };
    for (binding, actions) in bindings_of(set, policy) {
        if !ignored {
            apply_actions(&mut verdict, policy, binding, actions, &violation);
        }
        verdict.decision.policies.push(PolicyResult {
            policy: policy.name.clone(),
            binding: binding.map(|b| b.name.clone()),
            actions: actions.to_vec(),
            outcome: Outcome::Error {
                message: message.to_owned(),
                ignored,
            },
        });
    }
    *decision = verdict.finish();
}

/// Judges one pair, adding its denials, warnings and annotations to `verdict`.
fn judge<'a>(
    context: &Context<'a>,
    pair: &Pair<'a, '_>,
    impact: &LazyImpact<'_>,
    verdict: &mut Verdict,
) -> Outcome {
    let Pair {
        policy,
        binding,
        actions,
    } = *pair;
    match applies(policy, binding, &context.input) {
        Ok(true) => {}
        Ok(false) => return Outcome::NotMatched,
        Err(message) => {
            let ignored = policy.failure_policy == FailurePolicy::Ignore;
            return policy_error(verdict, pair, message, ignored);
        }
    }
    let param_objects: Vec<(usize, Value)> =
        match params::choose(context.set, policy, binding, context.namespace) {
            ParamChoice::None => vec![(match_memo::params_key(None), Value::Null)],
            ParamChoice::Objects(values) => values
                .into_iter()
                .map(|v| (match_memo::params_key(Some(v)), v.clone()))
                .collect(),
            ParamChoice::Skip => return Outcome::NotMatched,
            ParamChoice::NotFound(message) => return policy_error(verdict, pair, message, false),
        };
    let mut failed = Vec::new();
    let mut skipped = None;
    let mut errors = Vec::new();
    // An internal error under failurePolicy Fail (already applied as a violation).
    let mut fatal: Option<String> = None;
    let target = || {
        *context
            .target
            .get_or_init(|| escape::target_of(context.request, context.cluster))
    };
    // The escape hatch is looked for only when something would be denied.
    let escape = OnceCell::new();
    let namespace_object = || {
        context
            .namespace_object
            .get_or_init(|| context.input.namespace_json().map_or(Value::Null, from_json))
            .clone()
    };
    for (params_key, params) in param_objects {
        let input = RunInput {
            request: context.request,
            params,
            params_key,
            match_memo: &context.match_memo,
            namespace_object: &namespace_object,
            authorizer: &|| context.authorizer(),
            options: &context.set.options,
            impact,
            cluster: context.cluster,
            history: context.history,
            trial: context.trial,
        };
        let Ok(result) = catch_unwind(AssertUnwindSafe(|| run(policy, input))) else {
            // An internal error follows the failure policy, as an expression error does.
            let message = "internal error while evaluating the policy".to_owned();
            if policy.failure_policy == FailurePolicy::Fail {
                let violation = Violation {
                    validation: None,
                    message: message.clone(),
                    reason: "InternalError".into(),
                };
                apply_actions(verdict, policy, binding, actions, &violation);
                fatal.get_or_insert(message);
            } else {
                errors.push(message);
            }
            continue;
        };
        verdict.decision.impact_evaluated |= result.impact_read;
        for (key, value) in result.audit_annotations {
            verdict
                .decision
                .audit_annotations
                .insert(format!("{}/{key}", policy.name), value);
        }
        match result.outcome {
            RunOutcome::Skipped { condition } => skipped = Some(condition),
            RunOutcome::Evaluated {
                violations,
                ignored_errors,
            } => {
                errors.extend(ignored_errors);
                for violation in violations {
                    failed.extend(violation.validation);
                    let escape = escape
                        .get_or_init(|| escape::reason(policy, context.request, context.cluster, &target));
                    match escape {
                        Some(allowed) if actions.contains(&Action::Deny) => {
                            allowed.admit(verdict, policy, &violation)
                        }
                        _ => apply_actions(verdict, policy, binding, actions, &violation),
                    }
                }
            }
        }
    }
    failed.sort_unstable();
    failed.dedup();
    if !failed.is_empty() {
        Outcome::Failed { validations: failed }
    } else if let Some(message) = fatal {
        Outcome::Error {
            message,
            ignored: false,
        }
    } else if let Some(message) = errors.into_iter().next() {
        Outcome::Error {
            message,
            ignored: true,
        }
    } else if let Some(condition) = skipped {
        Outcome::Skipped { condition }
    } else {
        Outcome::Passed
    }
}

/// A pair that failed as a whole (matching or params): a denial unless ignored.
fn policy_error(verdict: &mut Verdict, pair: &Pair<'_, '_>, message: String, ignored: bool) -> Outcome {
    if !ignored {
        let violation = Violation {
            validation: None,
            message: message.clone(),
            reason: "Invalid".into(),
        };
        verdict
            .decision
            .denials
            .push(denial(pair.policy, pair.binding, &violation));
    }
    Outcome::Error { message, ignored }
}

/// The bindings a policy is judged through, with their actions. A SafetyPolicy binds itself
/// (`None`); a ValidatingAdmissionPolicy without a binding is bound implicitly (`None`, Deny)
/// only when the set says so (offline).
pub fn bindings_of<'a>(
    set: &'a PolicySet,
    policy: &'a Policy,
) -> impl Iterator<Item = (Option<&'a Binding>, &'a [Action])> + 'a {
    const DENY: &[Action] = &[Action::Deny];
    let own = policy.kind == PolicyKind::SafetyPolicy;
    let itself = own.then(|| {
        let actions = if policy.actions.is_empty() {
            DENY
        } else {
            policy.actions.as_slice()
        };
        (None, actions)
    });
    let bound = (!own)
        .then(|| set.bindings_naming(policy))
        .into_iter()
        .flatten()
        .map(|b| (Some(b), b.validation_actions.as_slice()));
    let implicit = (!own && set.implicit_bindings && set.bindings_naming(policy).next().is_none())
        .then_some((None, DENY));
    itself.into_iter().chain(bound).chain(implicit)
}

/// True when the policy, its binding and its subjects all select the request.
fn applies<'a>(
    policy: &'a Policy,
    binding: Option<&Binding>,
    input: &MatchInput<'a>,
) -> Result<bool, String> {
    if let Some(subjects) = &policy.subjects
        && !input.judges_user(subjects)
    {
        return Ok(false);
    }
    let constraints = matching::matches(policy.match_constraints.as_ref(), input);
    let bound = match binding {
        Some(b) => matching::matches(b.match_resources.as_ref(), input),
        None => Ok(true),
    };
    match (constraints, bound) {
        (Ok(a), Ok(b)) => Ok(a && b),
        (Err(e), _) | (_, Err(e)) => Err(format!("cannot match the request: {e}")),
    }
}

fn denial(policy: &Policy, binding: Option<&Binding>, violation: &Violation) -> Denial {
    Denial {
        policy: policy.name.clone(),
        binding: binding.map(|b| b.name.clone()),
        validation: violation.validation,
        message: violation.message.clone(),
        reason: violation.reason.clone(),
    }
}

fn apply_actions(
    verdict: &mut Verdict,
    policy: &Policy,
    binding: Option<&Binding>,
    actions: &[Action],
    violation: &Violation,
) {
    verdict.decision.failures.push(Failure {
        policy: policy.name.clone(),
        binding: binding.map(|b| b.name.clone()),
        validation: violation.validation,
        message: violation.message.clone(),
        actions: actions.to_vec(),
    });
    for action in actions {
        match action {
            Action::Deny => verdict.decision.denials.push(denial(policy, binding, violation)),
            Action::Warn => verdict.decision.warnings.push(match binding {
                Some(b) => format!(
                    "Validation failed for ValidatingAdmissionPolicy '{}' with binding '{}': {}",
                    policy.name, b.name, violation.message
                ),
                None => format!(
                    "Validation failed for {} '{}': {}",
                    kind_name(policy),
                    policy.name,
                    violation.message
                ),
            }),
            Action::Audit => verdict.audit_failures.push(json!({
                "message": violation.message,
                "policy": policy.name,
                "binding": binding.map(|b| b.name.as_str()).unwrap_or_default(),
                "expressionIndex": violation.validation,
                "validationActions": actions,
            })),
        }
    }
}

pub(crate) fn kind_name(policy: &Policy) -> &'static str {
    match policy.kind {
        PolicyKind::SafetyPolicy => "SafetyPolicy",
        PolicyKind::ValidatingAdmissionPolicy => "ValidatingAdmissionPolicy",
    }
}
