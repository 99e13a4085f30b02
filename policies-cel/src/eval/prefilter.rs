//! A cheap, conservative pre-filter: the policies of a set that could judge a request, read from
//! its metadata alone (subjects, resource rules with their scope and resource names, bindings)
//! with the same rule matcher `evaluate()` uses — no objects, no cluster model. Selectors,
//! exclusions and matchConditions are left to `evaluate()`, so "could judge" may be true for a
//! policy that then does not match, never false for one that does. The webhook answers a request
//! no policy could judge without parsing its objects or reading the model.

use std::sync::Arc;

use k8s_openapi::api::admissionregistration::v1::MatchResources;
use kube_core::DynamicObject;
use kube_core::admission::AdmissionRequest;

/// How a rule's `resources` field lists a resource and subresource, as the rule matcher reads it
/// (re-exported for the lint, which judges exclusions with it: `matching` is private to `eval`).
pub(crate) use crate::eval::matching::resource_listed;
use crate::eval::matching::rule_matches;
use crate::eval::subjects::UserJudge;
use crate::policy::{Policy, PolicyKind, PolicySet};

/// The policies of `set` that could judge `request`.
pub fn candidates(set: &PolicySet, request: &AdmissionRequest<DynamicObject>) -> Vec<Arc<Policy>> {
    // Each distinct `subjects` list is matched once, however many policies repeat it.
    let users = UserJudge::new(request);
    set.policies
        .iter()
        .filter(|policy| could_judge_user(set, policy, request, &users))
        .cloned()
        .collect()
}

/// Whether some resource rule of `set` (a policy's or a binding's) names resources: only then
/// does [`candidates`] read the request's object name.
pub fn reads_names(set: &PolicySet) -> bool {
    let names = |constraints: Option<&MatchResources>| {
        constraints
            .and_then(|c| c.resource_rules.as_deref())
            .unwrap_or_default()
            .iter()
            .any(|rule| {
                rule.resource_names
                    .as_deref()
                    .is_some_and(|names| !names.is_empty())
            })
    };
    set.policies.iter().any(|p| names(p.match_constraints.as_ref()))
        || set.bindings.iter().any(|b| names(b.match_resources.as_ref()))
}

/// Everything [`candidates`] reads of `request`, as bytes (each part length-prefixed): two
/// requests with the same key have the same candidates in any one set. `with_name` adds the
/// object's name, which matters only when the set [`reads_names`].
pub fn request_key(request: &AdmissionRequest<DynamicObject>, with_name: bool) -> Vec<u8> {
    fn part(key: &mut Vec<u8>, text: &str) {
        key.extend_from_slice(&text.len().to_le_bytes());
        key.extend_from_slice(text.as_bytes());
    }
    let mut key = Vec::with_capacity(256);
    let resource = |key: &mut Vec<u8>, gvr: &kube_core::GroupVersionResource| {
        part(key, &gvr.group);
        part(key, &gvr.version);
        part(key, &gvr.resource);
    };
    part(&mut key, crate::eval::operation_name(request));
    key.push(u8::from(
        request.namespace.as_deref().is_some_and(|ns| !ns.is_empty()),
    ));
    part(&mut key, if with_name { &request.name } else { "" });
    resource(&mut key, &request.resource);
    part(&mut key, request.sub_resource.as_deref().unwrap_or_default());
    match &request.request_resource {
        Some(requested) => {
            key.push(1);
            resource(&mut key, requested);
        }
        None => key.push(0),
    }
    match &request.request_sub_resource {
        Some(sub) => {
            key.push(1);
            part(&mut key, sub);
        }
        None => key.push(0),
    }
    match &request.user_info.username {
        Some(user) => {
            key.push(1);
            part(&mut key, user);
        }
        None => key.push(0),
    }
    let groups = request.user_info.groups.as_deref().unwrap_or_default();
    key.extend_from_slice(&groups.len().to_le_bytes());
    for group in groups {
        part(&mut key, group);
    }
    key
}

/// False only when `policy` certainly does not judge `request`.
pub fn could_judge(set: &PolicySet, policy: &Policy, request: &AdmissionRequest<DynamicObject>) -> bool {
    could_judge_user(set, policy, request, &UserJudge::new(request))
}

/// [`could_judge`], asking `users` whether the policy's subjects include the user.
fn could_judge_user<'a>(
    set: &PolicySet,
    policy: &'a Policy,
    request: &AdmissionRequest<DynamicObject>,
    users: &UserJudge<'a>,
) -> bool {
    if let Some(subjects) = &policy.subjects
        && !users.judges(subjects)
    {
        return false;
    }
    if !rules_could_match(policy.match_constraints.as_ref(), request) {
        return false;
    }
    if policy.kind == PolicyKind::SafetyPolicy || set.implicit_bindings {
        return true;
    }
    set.bindings_naming(policy)
        .any(|b| rules_could_match(b.match_resources.as_ref(), request))
}

/// Whether some resource rule could match (either the resource or the requested one, as
/// `matchPolicy: Equivalent` may); no rules means every request.
fn rules_could_match(
    constraints: Option<&MatchResources>,
    request: &AdmissionRequest<DynamicObject>,
) -> bool {
    match constraints.and_then(|c| c.resource_rules.as_deref()) {
        Some(rules) if !rules.is_empty() => rules.iter().any(|rule| rule_matches(rule, request, true)),
        _ => true,
    }
}
