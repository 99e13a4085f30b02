//! UPDATE of a Pod's labels. A pod that stops matching a Service's selector leaves its
//! endpoints at once, and one that stops matching a PodDisruptionBudget's selector leaves its
//! healthy count: the rule reports those numbers itself ([`Effects::service_overrides`],
//! [`Effects::pdb_overrides`]). A pod that stops matching its controller's selector is released
//! (the controller creates a replacement): noted, for the pod itself keeps running — nothing
//! stops, so nothing counts in `podsDisrupted` or `workloadsDown`.

use crate::cluster::object::Labels;
use crate::cluster::{ClusterView, Object, Spec};
use crate::impact::budgets;
use crate::impact::by_key::ByKey;
use crate::impact::consequences::{healthy, service_endpoints};
use crate::impact::create::slim;
use crate::impact::effects::Effects;
use crate::impact::report::PdbEffect;
use crate::impact::subject::Subject;

fn service_selects(service: &Object, labels: &Labels) -> bool {
    match &service.spec {
        Spec::Service {
            selector: Some(selector),
            ..
        } if !selector.is_empty() => selector
            .iter()
            .all(|(k, v)| labels.iter().any(|(key, value)| key == k && value == v)),
        _ => false,
    }
}

/// Estimates an UPDATE of the subject Pod.
pub(crate) fn estimate(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let Some(pod) = view.get(&subject.key) else {
        effects.note(format!(
            "{} is not in the cluster model: no effect is counted",
            subject.key
        ));
        return;
    };
    // Most pod UPDATEs keep the labels: compared as text, neither object is parsed.
    let labels = ["metadata", "labels"];
    if let (Some(old), Some(new)) = (subject.old_object_at(&labels), subject.object_at(&labels))
        && old.same_as(new)
    {
        return;
    }
    let Some(new) = slim(subject.object(), "object", effects) else {
        return;
    };
    let leaving = ByKey::new([pod]);
    for service in view.selecting_pod("Service", pod) {
        if service_selects(service, &new.labels) {
            continue;
        }
        let (before, after) = service_endpoints(view, service, &leaving);
        effects.note(format!("{} leaves the endpoints of {}", pod.key, service.key));
        effects.service_figures(&service.key.namespace, &service.key.name, before, after);
    }
    for pdb in view.selecting_pod("PodDisruptionBudget", pod) {
        if let Some(effect) = leave_budget(view, pdb, pod, &new.labels) {
            effects.note(format!("{} leaves the pods of {}", pod.key, pdb.key));
            effects.pdb_overrides.push(effect);
        }
    }
    note_release(view, pod, &new.labels, effects);
}

/// The budget's numbers once `pod` (relabelled to `labels`) no longer counts in it.
fn leave_budget(view: &dyn ClusterView, pdb: &Object, pod: &Object, labels: &Labels) -> Option<PdbEffect> {
    let Spec::PodDisruptionBudget { selector, .. } = &pdb.spec else {
        return None;
    };
    if selector.matches(labels) {
        return None;
    }
    let now = budgets::numbers(view, pdb)?;
    let removed = usize::from(healthy(pod));
    let after = now.current.saturating_sub(removed);
    Some(PdbEffect {
        namespace: pdb.key.namespace.as_ref().to_owned(),
        name: pdb.key.name.as_ref().to_owned(),
        desired_healthy: now.desired,
        current_healthy: now.current,
        healthy_after: after,
        violated: removed > 0 && after < now.desired,
    })
}

/// Notes a controller releasing the pod (it stops matching the controller's selector).
fn note_release(view: &dyn ClusterView, pod: &Object, labels: &Labels, effects: &mut Effects) {
    let Some(owner) = pod.controller().and_then(|c| view.by_uid(&c.uid)) else {
        return;
    };
    let selector = match &owner.spec {
        Spec::ReplicaSet { selector, .. }
        | Spec::StatefulSet { selector, .. }
        | Spec::DaemonSet { selector, .. } => selector,
        _ => return,
    };
    if !selector.matches(labels) {
        effects.note(format!(
            "{} no longer matches the selector of {}: it is released and keeps running, and {} creates a replacement",
            pod.key, owner.key, owner.key
        ));
    }
}
