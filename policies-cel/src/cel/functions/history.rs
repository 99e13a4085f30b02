//! The `history` library: what admitted requests disrupted in a recent window, as one request
//! sees the ledger ([`crate::history`]).
//!
//! - `history.byRequester(window)`: by the request's user;
//! - `history.inNamespace(window)`: in the request's namespace;
//! - `history.onWorkload(window)`: on the workload of the request's target (its controlling
//!   StatefulSet, Deployment, ...), whoever asked;
//! - `history.inCluster(window)`: everywhere, by anyone;
//! - `history.onObject(window)`: the deletions of the request's own target, whoever asked (an
//!   operator that deletes and re-creates the same object without converging).
//!
//! `window` is a duration's text (`'10m'`, `'1h30m'`) or a `duration`. Each answers a map of
//! ints: `requests` (admitted requests that disrupted something), `deleted`, `podsDisrupted`,
//! `dataLoss` (volumes lost) and `workloadsDown`, summed over the window; the current request is
//! not in it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use crate::cel::serialize::shared_text;
use crate::cel::upstream::objects::{Key, Map};
use crate::cel::value::type_name;
use crate::cel::{Budget, EvalError, Value};
use crate::history::{RequestHistory, Scope, Totals, duration};

/// A method of the `history` library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    ByRequester,
    InNamespace,
    OnWorkload,
    InCluster,
    OnObject,
}

impl Method {
    pub(crate) fn resolve(name: &str, argc: usize) -> Option<Method> {
        let method = match name {
            "byRequester" => Method::ByRequester,
            "inNamespace" => Method::InNamespace,
            "onWorkload" => Method::OnWorkload,
            "inCluster" => Method::InCluster,
            "onObject" => Method::OnObject,
            _ => return None,
        };
        (argc == 1).then_some(method)
    }

    fn name(self) -> &'static str {
        match self {
            Method::ByRequester => "history.byRequester",
            Method::InNamespace => "history.inNamespace",
            Method::OnWorkload => "history.onWorkload",
            Method::InCluster => "history.inCluster",
            Method::OnObject => "history.onObject",
        }
    }

    fn scope(self) -> Scope {
        match self {
            Method::ByRequester => Scope::Requester,
            Method::InNamespace => Scope::Namespace,
            Method::OnWorkload => Scope::Workload,
            Method::InCluster => Scope::Cluster,
            Method::OnObject => Scope::Object,
        }
    }
}

/// The window of a call: a duration, or a duration's text.
fn window(method: Method, value: Option<&Value>) -> Result<chrono::Duration, EvalError> {
    match value {
        Some(Value::Duration(d)) => Ok(*d),
        Some(Value::String(text)) => duration::parse(text).map_err(|m| EvalError::function(method.name(), m)),
        other => Err(EvalError::function(
            method.name(),
            format!(
                "the window must be a duration or its text ('10m'), got {}",
                other.map_or_else(|| "nothing".into(), type_name)
            ),
        )),
    }
}

/// The CEL map of `totals`. Most answers repeat (a quiet window is all zeros), so the last map
/// built on this thread is kept and shared while the totals are the same.
fn summary(totals: &Totals) -> Value {
    thread_local! {
        static LAST: RefCell<Option<(Totals, Value)>> = const { RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| match last {
        Some((seen, value)) if seen == totals => value.clone(),
        _ => {
            let value = build_summary(totals);
            *last = Some((*totals, value.clone()));
            value
        }
    })
}

fn build_summary(totals: &Totals) -> Value {
    let figures = &totals.figures;
    let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
    let entries = [
        ("requests", totals.requests),
        ("deleted", figures.deleted),
        ("podsDisrupted", figures.pods_disrupted),
        ("dataLoss", figures.data_loss),
        ("workloadsDown", figures.workloads_down),
    ];
    let map: HashMap<Key, Value> = entries
        .into_iter()
        .map(|(k, n)| (Key::String(shared_text(k)), int(n)))
        .collect();
    Value::Map(Map { map: Arc::new(map) })
}

/// Calls a `history` method.
pub(crate) fn call(
    history: &RequestHistory<'_>,
    method: Method,
    args: &[Value],
    budget: &Budget,
) -> Result<Value, EvalError> {
    let window = window(method, args.first())?;
    let totals = history
        .totals(method.scope(), window)
        .map_err(|e| EvalError::function(method.name(), e.to_string()))?;
    budget.charge_len(usize::try_from(totals.requests).unwrap_or(usize::MAX))?;
    Ok(summary(&totals))
}
