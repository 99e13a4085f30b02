//! UPDATE (and PATCH) of Deployments, ReplicaSets, StatefulSets and DaemonSets, directly or
//! through the `scale` subresource, as their controllers carry it out: a lower replica count
//! removes pods ([`scale`]), a new pod template replaces them ([`rollout`]), both in one request
//! combine (the removed pods are gone, the remaining ones are rolled).
//!
//! The current workload and its pods come from the model; the new state from the request's
//! `object` (projected with Kubernetes' defaults), or, for `scale`, the model's workload with the
//! Scale's `spec.replicas`. Template changes are seen by comparing `spec.template` of `oldObject`
//! and `object`, since the slim model keeps no templates. A new template the namespace's Pod
//! Security level refuses rolls out only as far as removing old pods goes
//! ([`rollout::roll_refused`], `impact/pod_security.rs`). A new template that drops a container
//! port a Service targets by name, or leaves its selector, leaves the port without endpoints
//! once rolled out (`impact/ports.rs`).

mod rollout;
mod scale;

use std::collections::HashSet;
use std::mem::discriminant;

use serde_json::Value as Json;

use crate::cluster::object::IntOrPercent;
use crate::cluster::{ClusterView, Object, ObjectKey, Spec};
use crate::eval::Found;
use crate::impact::consequences::{healthy, pods_of};
use crate::impact::effects::Effects;
use crate::impact::field;
use crate::impact::pod_security;
use crate::impact::ports::{self, NewTemplate};
use crate::impact::subject::Subject;

/// What a request changes about one workload.
#[derive(Debug)]
struct Change<'a> {
    /// The workload as the model holds it now.
    current: &'a Object,
    /// The workload's spec once the request is applied.
    desired: Spec,
    /// Replicas now and requested (for a DaemonSet: the pods it runs, both times).
    from: i64,
    to: i64,
    template_changed: bool,
    /// A DaemonSet's `updateStrategy.type` is `OnDelete`.
    on_delete: bool,
    /// A StatefulSet's first ordinal (`spec.ordinals.start`, 0 by default).
    ordinal_start: i64,
}

/// Estimates an UPDATE of a workload or of its `scale` subresource.
pub(crate) fn estimate(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let Some(current) = view.get(&subject.key) else {
        let what = "no effect is counted";
        if subject.sub_resource == "scale" {
            // A Scale carries no copy of the workload (an UPDATE brings its oldObject).
            effects.subject_missing(&subject.key, what);
        } else {
            effects.note(format!("{} is not in the cluster model: {what}", subject.key));
        }
        return;
    };
    let pods = active_pods(view, current);
    let Some(change) = read_change(subject, current, pods.len(), effects) else {
        return;
    };
    note_owned_replica_set(view, current, effects);
    // Its pods before the request, for the Services a new template may leave unserved.
    let own: HashSet<&ObjectKey> = if change.template_changed {
        pods.iter().map(|p| &p.key).collect()
    } else {
        HashSet::new()
    };
    let survivors = if change.to < change.from {
        scale::scale_down(view, &change, pods, effects)
    } else {
        if change.to > change.from {
            effects.note(format!(
                "{} scales up (replicas {} → {}): new pods start, none is disrupted",
                current.key, change.from, change.to
            ));
        }
        pods
    };
    let refusal = change
        .template_changed
        .then(|| pod_security::template_refused(view, subject))
        .flatten();
    let mut removed = Vec::new();
    match &refusal {
        Some(refusal) => {
            removed = rollout::roll_refused(&change, &survivors, refusal.level.as_str(), effects);
            pod_security::template_refusal(current, &survivors, removed.len(), refusal, effects);
        }
        None if change.template_changed => {
            rollout::roll(&change, &survivors, effects);
            if rollout::rolls_now(&change) {
                subject.read_object_at(&["spec", "template"], |template| {
                    ports::rolled_out(
                        view,
                        current,
                        &own,
                        &survivors,
                        &NewTemplate::of(template),
                        effects,
                    );
                });
            }
        }
        None if change.to == change.from => note_unchanged(&change, effects),
        None => {}
    }
    // A refused rollout settles with the pods it removed (some of the survivors) gone; any other
    // with every pod back.
    let ready = survivors
        .iter()
        .filter(|p| healthy(p))
        .count()
        .saturating_sub(removed.iter().filter(|p| healthy(p)).count());
    effects.settles_at.insert(current.key.clone(), ready);
}

/// The workload's pods that count: not terminating, not finished; sorted by name.
fn active_pods<'a>(view: &'a dyn ClusterView, workload: &Object) -> Vec<&'a Object> {
    let mut pods: Vec<&Object> = pods_of(view, workload)
        .into_iter()
        .filter(|p| p.running_pod().is_some())
        .collect();
    pods.sort_by(|a, b| a.key.name.cmp(&b.key.name));
    pods
}

/// Reads the change the request makes; `None` (with a note) when it cannot be read.
fn read_change<'a>(
    subject: &Subject,
    current: &'a Object,
    pod_count: usize,
    effects: &mut Effects,
) -> Option<Change<'a>> {
    let scaling = subject.sub_resource == "scale";
    let desired = if scaling {
        scaled_spec(subject, current, effects)?
    } else {
        new_spec(subject, current, effects)?
    };
    let daemon_pods = i64::try_from(pod_count).unwrap_or(i64::MAX);
    let from = replicas(&current.spec).unwrap_or(daemon_pods);
    let to = replicas(&desired).unwrap_or(daemon_pods);
    let template_changed = !scaling && template_changed(subject, effects);
    // The projection records a DaemonSet's `OnDelete` as a pair of zeros (which the API server
    // refuses for `RollingUpdate`).
    let on_delete = matches!(
        desired,
        Spec::DaemonSet {
            max_unavailable: IntOrPercent::Int(0),
            max_surge: IntOrPercent::Int(0),
            ..
        }
    );
    // A whole object states its own first ordinal (absent: 0). A Scale has none, and the slim
    // model keeps none: a `scale` request counts from 0.
    let ordinal_start = if scaling {
        0
    } else {
        subject
            .object_at(&["spec", "ordinals", "start"])
            .and_then(found_i64)
            .unwrap_or(0)
    };
    Some(Change {
        current,
        desired,
        from,
        to,
        template_changed,
        on_delete,
        ordinal_start,
    })
}

/// The spec after a `scale` request: the model's, with the Scale's `spec.replicas` (absent: 0).
fn scaled_spec(subject: &Subject, current: &Object, effects: &mut Effects) -> Option<Spec> {
    let to = subject
        .object()
        .and_then(|o| field(o, &["spec", "replicas"]))
        .and_then(Json::as_i64)
        .unwrap_or(0);
    let mut spec = current.spec.clone();
    match &mut spec {
        Spec::Deployment { replicas, .. }
        | Spec::ReplicaSet { replicas, .. }
        | Spec::StatefulSet { replicas, .. } => {
            *replicas = to;
            Some(spec)
        }
        _ => {
            effects.note(format!(
                "{} has no replica count to scale: no effect is counted",
                current.key
            ));
            None
        }
    }
}

/// The spec after an UPDATE: the request's `object` with Kubernetes' defaults.
fn new_spec(subject: &Subject, current: &Object, effects: &mut Effects) -> Option<Spec> {
    let Some(read) = subject.object_spec() else {
        effects.note(format!(
            "the request carries no new {}: no effect is counted",
            current.key
        ));
        return None;
    };
    let desired = match read {
        Ok(spec) => spec,
        Err(error) => {
            effects.note(format!(
                "the new {} cannot be read ({error}): no effect is counted",
                current.key
            ));
            return None;
        }
    };
    if discriminant(&desired) != discriminant(&current.spec) {
        effects.note(format!(
            "the new {} is not the kind of workload the model holds: no effect is counted",
            current.key
        ));
        return None;
    }
    Some(desired)
}

/// The integer a value found in the object holds.
fn found_i64(found: Found<'_>) -> Option<i64> {
    match found {
        Found::Tree(json) => json.as_i64(),
        Found::Text(text) => serde_json::from_str::<Json>(text).ok()?.as_i64(),
    }
}

/// True when `spec.template` differs between `oldObject` and `object`. The templates are
/// compared as text (equal text is an equal template) unless something parsed the objects.
fn template_changed(subject: &Subject, effects: &mut Effects) -> bool {
    const TEMPLATE: &[&str] = &["spec", "template"];
    let old = subject.old_object_at(TEMPLATE);
    let new = subject.object_at(TEMPLATE);
    match (old, new) {
        (Some(old), Some(new)) => !old.same_as(new),
        (None, Some(_)) => {
            effects.note("the request has no oldObject: a pod template change cannot be seen");
            false
        }
        _ => false,
    }
}

/// The replica count of a workload spec (`None` for a DaemonSet).
fn replicas(spec: &Spec) -> Option<i64> {
    match spec {
        Spec::Deployment { replicas, .. }
        | Spec::ReplicaSet { replicas, .. }
        | Spec::StatefulSet { replicas, .. } => Some((*replicas).max(0)),
        _ => None,
    }
}

/// A ReplicaSet managed by a Deployment: the Deployment controller restores its replica count.
fn note_owned_replica_set(view: &dyn ClusterView, current: &Object, effects: &mut Effects) {
    if &*current.key.kind != "ReplicaSet" {
        return;
    }
    if let Some(deployment) = current.controller().and_then(|c| view.by_uid(&c.uid)) {
        effects.note(format!(
            "{} is managed by {}: the Deployment controller sets its replicas back; pods removed meanwhile still stop",
            current.key, deployment.key
        ));
    }
}

/// Neither the replica count nor the pod template changes.
fn note_unchanged(change: &Change, effects: &mut Effects) {
    let key = &change.current.key;
    if let (Spec::Deployment { paused: true, .. }, Spec::Deployment { paused: false, .. }) =
        (&change.current.spec, &change.desired)
    {
        effects.note(format!(
            "{key} is resumed: a pod template changed while it was paused rolls out now, which the model cannot see"
        ));
        return;
    }
    effects.note(format!(
        "{key}: neither the replica count nor the pod template changes: no pod is disrupted"
    ));
}
