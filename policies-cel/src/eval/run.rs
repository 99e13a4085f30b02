//! One policy, through one binding, with one params object, on one request: matchConditions,
//! validations with their messages, and audit annotations, as kube-apiserver evaluates them.

use crate::cel::{Bindings, Budget, Program, Root, Value};
use crate::cluster::ClusterView;
use crate::eval::Request;
use crate::eval::Trial;
use crate::eval::lazy_impact::LazyImpact;
use crate::eval::match_memo::MatchMemo;
use crate::history::RequestHistory;
use crate::policy::{EvalOptions, FailurePolicy, Policy};

/// A validation that did not hold (false, or an error under failurePolicy Fail).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Violation {
    /// `None` when the policy as a whole failed (a matchCondition error).
    pub validation: Option<usize>,
    pub message: String,
    pub reason: String,
}

/// What one run produced.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RunOutcome {
    Skipped {
        condition: String,
    },
    Evaluated {
        violations: Vec<Violation>,
        ignored_errors: Vec<String>,
    },
}

/// Everything a run reads besides the policy.
pub(crate) struct RunInput<'a> {
    /// `object`, `oldObject` and `request`.
    pub request: &'a Request,
    pub params: Value,
    /// Which params object `params` is (`match_memo::params_key`).
    pub params_key: usize,
    /// matchCondition answers already computed for this request.
    pub match_memo: &'a MatchMemo,
    /// Computes (once per request) `namespaceObject`.
    pub namespace_object: &'a dyn Fn() -> Value,
    /// Computes (once per request) `authorizer`.
    pub authorizer: &'a dyn Fn() -> Value,
    pub options: &'a EvalOptions,
    /// The `impact` variable, computed once per request, whole or field by field.
    pub impact: &'a LazyImpact<'a>,
    /// The model behind the `cluster` library, when there is one.
    pub cluster: Option<&'a dyn ClusterView>,
    /// The ledger behind the `history` library, as this request sees it.
    pub history: &'a RequestHistory<'a>,
    /// The allowance of a trial evaluation, which bounds this run's budget.
    pub trial: Option<&'a Trial>,
}

/// The result of a run: outcome plus audit annotations (key without the policy prefix).
pub(crate) struct RunResult {
    pub outcome: RunOutcome,
    pub audit_annotations: Vec<(String, String)>,
    pub impact_read: bool,
}

pub(crate) fn run(policy: &Policy, input: RunInput<'_>) -> RunResult {
    let cost_limit = input.options.cost_limit;
    let limit = input
        .trial
        .map_or((cost_limit, false), |trial| trial.limit(cost_limit));
    let mut budget = Budget::new(limit.0);
    if let Some(time_limit) = input.options.time_limit {
        budget = budget.with_time_limit(time_limit);
    }
    let trial = input.trial;
    let result = run_within(policy, input, &budget);
    if let Some(trial) = trial {
        trial.settle(limit, budget.spent());
    }
    result
}

/// [`run`] under `budget`.
fn run_within(policy: &Policy, input: RunInput<'_>, budget: &Budget) -> RunResult {
    let impact_read = std::cell::Cell::new(false);
    let impact = || {
        impact_read.set(true);
        input.impact.whole()
    };
    let impact_field = |field: &str| {
        impact_read.set(true);
        input.impact.field(field)
    };
    let request = input.request;
    let object = || Ok(request.object().clone());
    let old_object = || Ok(request.old_object().clone());
    let request_value = || Ok(request.request().clone());
    let object_field = |field: &str| request.root_field(Root::Object, field);
    let old_object_field = |field: &str| request.root_field(Root::OldObject, field);
    let request_field = |field: &str| request.root_field(Root::Request, field);
    let namespace_object = || Ok((input.namespace_object)());
    let authorizer = || Ok((input.authorizer)());
    let mut bindings = Bindings::new();
    bindings
        .set_lazy(Root::Object, &object)
        .set_lazy(Root::OldObject, &old_object)
        .set_lazy(Root::Request, &request_value)
        .set_lazy_fields(Root::Object, &object_field)
        .set_lazy_fields(Root::OldObject, &old_object_field)
        .set_lazy_fields(Root::Request, &request_field)
        .set(Root::Params, input.params)
        .set_lazy(Root::NamespaceObject, &namespace_object)
        .set_lazy(Root::Authorizer, &authorizer)
        .set_lazy(Root::Impact, &impact)
        .set_lazy_fields(Root::Impact, &impact_field)
        .set_variables(&policy.variables)
        .set_history(input.history);
    if let Some(view) = input.cluster {
        bindings.set_cluster(view);
    }
    let eval = |program: &Program| program.eval(&bindings, budget);
    let fail = policy.failure_policy == FailurePolicy::Fail;

    let mut condition_error = None;
    for condition in &policy.match_conditions {
        let program = &condition.program;
        // A matchCondition reads no composited variable: its answer is the request's.
        let shared = program.variables_used().is_empty();
        let answer = match shared
            .then(|| input.match_memo.get(&program.source, input.params_key))
            .flatten()
        {
            Some(known) => Ok(Value::Bool(known)),
            None => {
                let answer = eval(program);
                if shared && let Ok(Value::Bool(known)) = answer {
                    input.match_memo.put(&program.source, input.params_key, known);
                }
                answer
            }
        };
        match answer {
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => {
                return RunResult {
                    outcome: RunOutcome::Skipped {
                        condition: condition.name.clone(),
                    },
                    audit_annotations: Vec::new(),
                    impact_read: impact_read.get(),
                };
            }
            Ok(other) => {
                condition_error.get_or_insert_with(|| {
                    format!(
                        "matchCondition '{}' returned {}, not bool",
                        condition.name,
                        crate::cel::value::type_name(&other)
                    )
                });
            }
            Err(e) => {
                condition_error.get_or_insert_with(|| {
                    format!("failed to evaluate matchCondition '{}': {e}", condition.name)
                });
            }
        }
    }
    if let Some(message) = condition_error {
        let (violations, ignored_errors) = if fail {
            (
                vec![Violation {
                    validation: None,
                    message,
                    reason: "Invalid".into(),
                }],
                vec![],
            )
        } else {
            (vec![], vec![message])
        };
        return RunResult {
            outcome: RunOutcome::Evaluated {
                violations,
                ignored_errors,
            },
            audit_annotations: Vec::new(),
            impact_read: impact_read.get(),
        };
    }

    let mut violations = Vec::new();
    let mut ignored_errors = Vec::new();
    for (index, validation) in policy.validations.iter().enumerate() {
        let reason = || validation.reason.clone().unwrap_or_else(|| "Invalid".to_owned());
        let failure = match eval(&validation.program) {
            Ok(Value::Bool(true)) => continue,
            Ok(Value::Bool(false)) => {
                let message = validation
                    .message_expression
                    .as_ref()
                    .and_then(|program| match eval(program) {
                        Ok(Value::String(s)) if !s.trim().is_empty() && !s.contains('\n') => {
                            Some(s.to_string())
                        }
                        _ => None,
                    })
                    .or_else(|| validation.message.clone())
                    .unwrap_or_else(|| format!("failed expression: {}", validation.program.source()));
                violations.push(Violation {
                    validation: Some(index),
                    message,
                    reason: reason(),
                });
                continue;
            }
            Ok(other) => format!(
                "expression '{}' returned {}, not bool",
                validation.program.source(),
                crate::cel::value::type_name(&other)
            ),
            Err(e) => format!(
                "expression '{}' resulted in error: {e}",
                validation.program.source()
            ),
        };
        if fail {
            violations.push(Violation {
                validation: Some(index),
                message: failure,
                reason: reason(),
            });
        } else {
            ignored_errors.push(failure);
        }
    }

    let mut audit_annotations = Vec::new();
    for annotation in &policy.audit_annotations {
        match eval(&annotation.value_expression) {
            // Null and the empty string leave the annotation out, as Kubernetes does.
            Ok(Value::String(s)) if s.is_empty() => {}
            Ok(Value::String(s)) => audit_annotations.push((annotation.key.clone(), s.to_string())),
            Ok(Value::Null) => {}
            Ok(other) => ignored_errors.push(format!(
                "auditAnnotation '{}' returned {}, not string",
                annotation.key,
                crate::cel::value::type_name(&other)
            )),
            Err(e) => ignored_errors.push(format!(
                "auditAnnotation '{}' resulted in error: {e}",
                annotation.key
            )),
        }
    }
    RunResult {
        outcome: RunOutcome::Evaluated {
            violations,
            ignored_errors,
        },
        audit_annotations,
        impact_read: impact_read.get(),
    }
}
