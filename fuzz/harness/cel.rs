//! Fuzz harness of CEL: parse, type-check and compile an expression in the admission
//! environment (`Env::admission().compile`, what `kubectl suture eval` and the policy loader
//! use), then evaluate it under a cost budget against roots taken from the input and a
//! small cluster model (`cluster`, and `impact` estimated for a recorded request).
//!
//! Input: the expression, then optionally a NUL byte and a JSON object whose keys are root
//! names (`object`, `oldObject`, `request`, `params`, `namespaceObject`) and values their
//! values; without it, `object` is a small Pod. Properties: compiling and evaluating never
//! panic, a compile error renders, and an evaluation that returns has spent no more than its
//! budget (a runaway expression ends with an error; AFL's timeout finds one that does not).

use policies_cel::cel::value::{from_json, to_json, type_name};
use policies_cel::cel::{AuthorizerMode, Bindings, Budget, DEFAULT_COST_LIMIT, Env, EvalError, Root, Value};
use serde_json::{Value as Json, json};

use super::fixtures;

/// The budget of one evaluation: a tenth of a policy's (`DEFAULT_COST_LIMIT`), so an input that
/// exhausts it costs a fifth of a second rather than two; an operation the budget undercharges
/// still shows, as an AFL hang (the run script's timeout is ten times what the budget allows).
const BUDGET: u64 = DEFAULT_COST_LIMIT / 10;

/// The roots an input may set.
const SETTABLE: [Root; 5] = [
    Root::Object,
    Root::OldObject,
    Root::Request,
    Root::Params,
    Root::NamespaceObject,
];

/// Runs one input; panics when CEL panics or the budget is overrun.
pub fn run(data: &[u8]) {
    let (expression, roots) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], Some(&data[at + 1..])),
        None => (data, None),
    };
    let Ok(expression) = std::str::from_utf8(expression) else {
        return;
    };
    let program = match Env::admission().compile(expression) {
        Ok(program) => program,
        Err(error) => {
            assert!(!error.render().is_empty(), "a compile error renders as nothing");
            return;
        }
    };
    let impact =
        || Ok(policies_cel::impact::estimate(&fixtures::requests()[0], fixtures::model()).to_value());
    let mut bindings = Bindings::new()
        .with(
            Root::Authorizer,
            policies_cel::cel::authorizer_value(AuthorizerMode::Allow),
        )
        .with_impact(&impact)
        .with_cluster(fixtures::model());
    for (root, value) in roots_of(roots) {
        bindings.set(root, value);
    }
    let budget = Budget::new(BUDGET);
    let result = program.eval(&bindings, &budget);
    match &result {
        Err(EvalError::CostLimitExceeded { .. }) => {}
        _ => assert!(
            budget.spent() <= budget.limit(),
            "returned {} after spending {} of {}",
            if result.is_ok() { "a value" } else { "an error" },
            budget.spent(),
            budget.limit()
        ),
    }
    match result {
        Ok(value) => {
            let _ = (to_json(&value), type_name(&value));
        }
        Err(error) => assert!(
            !error.to_string().is_empty(),
            "an evaluation error without a message"
        ),
    }
}

/// The roots the input sets (a small Pod as `object` when it sets none).
fn roots_of(text: Option<&[u8]>) -> Vec<(Root, Value)> {
    let Some(text) = text else {
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "db", "labels": {"app": "db"}},
            "spec": {"containers": [{"name": "c", "image": "db:1"}]}});
        return vec![(Root::Object, from_json(&pod))];
    };
    let Ok(Json::Object(fields)) = serde_json::from_slice::<Json>(text) else {
        return Vec::new();
    };
    SETTABLE
        .into_iter()
        .filter_map(|root| fields.get(root.name()).map(|value| (root, from_json(value))))
        .collect()
}
