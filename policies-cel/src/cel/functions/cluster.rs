//! The `cluster` library: read-only, bounded look-ups into the cluster model for policies that
//! need context.
//!
//! - `cluster.get(kind, namespace, name)` → `optional` of the object;
//! - `cluster.list(kind, namespace [, labels])` → list of objects (namespace `''` = every
//!   namespace), at most [`MAX_LISTED`];
//! - `cluster.count(kind, namespace [, labels])` → int.
//!
//! `kind` is a kind (`'StatefulSet'`; the group of built-in kinds is known) or `Kind.group` for
//! custom resources (`'RabbitmqCluster.rabbitmq.com'`). Objects are the slim projection
//! (metadata with labels and ownerReferences, and the fields the model keeps per kind).

use crate::cel::functions::native::optional;
use crate::cel::value::{from_json, type_name};
use crate::cel::{Budget, EvalError, Value};
use crate::cluster::object::{Object, ObjectKey, builtin_group};
use crate::cluster::{ClusterView, json};

/// The most objects one `list` returns (a policy that needs more is asking the wrong question).
pub const MAX_LISTED: usize = 1000;

/// A method of the `cluster` library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    List,
    Count,
}

impl Method {
    pub(crate) fn resolve(name: &str, argc: usize) -> Option<Method> {
        match (name, argc) {
            ("get", 3) => Some(Method::Get),
            ("list", 2 | 3) => Some(Method::List),
            ("count", 2 | 3) => Some(Method::Count),
            _ => None,
        }
    }
}

fn text<'a>(value: &'a Value, what: &str) -> Result<&'a str, EvalError> {
    match value {
        Value::String(s) => Ok(s.as_str()),
        other => Err(EvalError::function(
            &format!("cluster.{what}"),
            format!("expected a string, got {}", type_name(other)),
        )),
    }
}

/// (group, kind) from `Kind` or `Kind.group`.
fn group_kind(kind: &str) -> (String, String) {
    match kind.split_once('.') {
        Some((kind, group)) => (group.to_owned(), kind.to_owned()),
        None => (
            builtin_group(kind).unwrap_or_default().to_owned(),
            kind.to_owned(),
        ),
    }
}

fn labels_match(object: &Object, labels: Option<&Value>) -> Result<bool, EvalError> {
    let Some(labels) = labels else { return Ok(true) };
    let Value::Map(map) = labels else {
        return Err(EvalError::function(
            "cluster.list",
            format!("labels must be a map, got {}", type_name(labels)),
        ));
    };
    Ok(map.map.iter().all(|(k, v)| {
        let key = crate::cel::value::key_string(k);
        matches!(v, Value::String(want) if object.labels.iter().any(|(lk, lv)| **lk == *key && **lv == *want.as_str()))
    }))
}

/// Calls a `cluster` method against `view`.
pub(crate) fn call(
    view: &dyn ClusterView,
    method: Method,
    args: &[Value],
    budget: &Budget,
) -> Result<Value, EvalError> {
    let (group, kind) = group_kind(text(args.first().unwrap_or(&Value::Null), "kind")?);
    let namespace = text(args.get(1).unwrap_or(&Value::Null), "namespace")?;
    if method == Method::Get {
        let name = text(args.get(2).unwrap_or(&Value::Null), "name")?;
        let object = view.get(&ObjectKey::new(&group, &kind, namespace, name));
        return Ok(optional(object.map(|o| from_json(&json::to_json(o)))));
    }
    let candidates = if namespace.is_empty() {
        view.of_kind(&group, &kind)
    } else {
        view.in_namespace(namespace)
            .into_iter()
            .filter(|o| *o.key.kind == *kind && *o.key.group == *group)
            .collect()
    };
    budget.charge_len(candidates.len())?;
    let mut chosen = Vec::new();
    for object in candidates {
        if labels_match(object, args.get(2))? {
            chosen.push(object);
        }
    }
    if method == Method::Count {
        return Ok(Value::Int(chosen.len() as i64));
    }
    if chosen.len() > MAX_LISTED {
        return Err(EvalError::function(
            "cluster.list",
            format!(
                "{} objects match; a list returns at most {MAX_LISTED} (use cluster.count)",
                chosen.len()
            ),
        ));
    }
    chosen.sort_by(|a, b| a.key.cmp(&b.key));
    budget.charge(16 * chosen.len() as u64)?;
    Ok(Value::List(std::sync::Arc::new(
        chosen.into_iter().map(|o| from_json(&json::to_json(o))).collect(),
    )))
}
