//! Which params objects a (policy, binding) pair is evaluated with: `paramKind` + `paramRef`.

use serde_json::Value as Json;

use crate::cel::Value;
use crate::eval::selector;
use crate::policy::{Binding, Policy, PolicySet};

/// The params a pair is evaluated with.
#[derive(Debug)]
pub(crate) enum ParamChoice<'a> {
    /// The policy takes no params (or none were given offline): evaluate once with `params` null.
    None,
    /// Evaluate once per object, given as its CEL value (converted when the set was loaded).
    Objects(Vec<&'a Value>),
    /// The binding names params that do not exist and `parameterNotFoundAction` is Deny.
    NotFound(String),
    /// The binding names params that do not exist and `parameterNotFoundAction` is Allow.
    Skip,
}

fn has_kind(object: &Json, (api_version, kind): &(String, String)) -> bool {
    object.get("apiVersion").and_then(Json::as_str) == Some(api_version.as_str())
        && object.get("kind").and_then(Json::as_str) == Some(kind.as_str())
}

fn metadata<'a>(object: &'a Json, field: &str) -> &'a str {
    object
        .get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Json::as_str)
        .unwrap_or_default()
}

/// Chooses params for `policy` through `binding` (`None` = the offline implicit binding) for a
/// request in `request_namespace`.
pub(crate) fn choose<'a>(
    set: &'a PolicySet,
    policy: &Policy,
    binding: Option<&Binding>,
    request_namespace: &str,
) -> ParamChoice<'a> {
    let Some(param_kind) = &policy.param_kind else {
        return ParamChoice::None;
    };
    let of_kind: Vec<(&Json, &Value)> = set
        .params
        .with_values()
        .filter(|(p, _)| has_kind(p, param_kind))
        .collect();
    let Some(param_ref) = binding.and_then(|b| b.param_ref.as_ref()) else {
        // Offline, without a binding: every loaded object of the kind, or null when none.
        return if of_kind.is_empty() {
            ParamChoice::None
        } else {
            ParamChoice::Objects(of_kind.into_iter().map(|(_, value)| value).collect())
        };
    };
    let namespace = param_ref.namespace.as_deref().unwrap_or(request_namespace);
    let chosen: Vec<&Value> = of_kind
        .into_iter()
        .filter(|(p, _)| {
            let ns = metadata(p, "namespace");
            ns.is_empty() || ns == namespace
        })
        .filter(|(p, _)| match (&param_ref.name, &param_ref.selector) {
            (Some(name), _) => metadata(p, "name") == name,
            (None, Some(sel)) => selector::matches(sel, &selector::labels_of(p)).unwrap_or(false),
            (None, None) => false,
        })
        .map(|(_, value)| value)
        .collect();
    if !chosen.is_empty() {
        return ParamChoice::Objects(chosen);
    }
    if param_ref.parameter_not_found_action_deny {
        let what = param_ref
            .name
            .as_deref()
            .map_or_else(|| "matching the selector".to_owned(), |n| format!("'{n}'"));
        ParamChoice::NotFound(format!(
            "no params found for policy binding with `Deny` parameterNotFoundAction ({} {what} in namespace '{namespace}')",
            param_kind.1
        ))
    } else {
        ParamChoice::Skip
    }
}
