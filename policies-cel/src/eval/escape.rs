//! A SafetyPolicy's escape hatch: a human sets its `allowAnnotation` (e.g.
//! `suture.dev/allow-disruption: "planned migration, ticket OPS-142"`) on the target object or on
//! its controlling owner, and what the policy would deny is admitted instead — never silently:
//! the decision carries a warning naming the reason, and the audit annotation
//! `<policy>/allowed-by` records it.

use crate::cluster::{ClusterView, Object};
use crate::eval::Request;
use crate::eval::run::Violation;
use crate::eval::{Verdict, kind_name};
use crate::impact::subject::target_key;
use crate::policy::Policy;

/// The annotation that admitted a request, and the reason written in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Allowed {
    pub key: String,
    pub reason: String,
    /// Where the annotation was found (`the object`, or `owner StatefulSet db/pg`).
    pub on: String,
}

/// The reason given under `policy`'s escape-hatch annotation on the request's object (or the
/// object being deleted), on the target as the cluster model knows it (a `Scale` carries no
/// annotations), or on the target's controlling owner. `target` is the model's copy of the
/// target, looked up once per request however many policies ask.
pub(crate) fn reason<'a>(
    policy: &Policy,
    request: &Request,
    cluster: Option<&'a dyn ClusterView>,
    target: &dyn Fn() -> Option<&'a Object>,
) -> Option<Allowed> {
    let key = policy.allow_annotation.as_deref()?;
    let found = |reason: &str, on: String| {
        let reason = reason.trim();
        (!reason.is_empty()).then(|| Allowed {
            key: key.to_owned(),
            reason: reason.to_owned(),
            on,
        })
    };
    let objects = request.objects();
    for object in [&objects.object, &objects.old_object] {
        if let Some(allowed) = object
            .annotation(key)
            .and_then(|r| found(&r, "the object".into()))
        {
            return Some(allowed);
        }
    }
    let cluster = cluster?;
    let target = target()?;
    if let Some(allowed) = target.annotation(key).and_then(|r| found(r, "the object".into())) {
        return Some(allowed);
    }
    let owner = target.controller().and_then(|c| cluster.by_uid(&c.uid))?;
    owner
        .annotation(key)
        .and_then(|r| found(r, format!("its owner {}", owner.key)))
}

/// The model's copy of the request's target (the parent for a subresource).
pub(crate) fn target_of<'a>(request: &Request, cluster: Option<&'a dyn ClusterView>) -> Option<&'a Object> {
    let cluster = cluster?;
    cluster.get(&target_key(request, cluster))
}

impl Allowed {
    /// Admits what `policy` would deny for `violation`: a warning and an audit annotation.
    pub(crate) fn admit(&self, verdict: &mut Verdict, policy: &Policy, violation: &Violation) {
        verdict.decision.warnings.push(format!(
            "{} '{}' would deny this request, but {} is annotated {}={:?}: {}",
            kind_name(policy),
            policy.name,
            self.on,
            self.key,
            self.reason,
            violation.message
        ));
        verdict.decision.audit_annotations.insert(
            format!("{}/allowed-by", policy.name),
            format!("{}={}", self.key, self.reason),
        );
    }
}
