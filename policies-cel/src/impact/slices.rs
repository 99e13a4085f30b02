//! DELETE of an EndpointSlice: the Service loses the ready endpoints in it. A Service without a
//! selector has hand-made endpoints (an external database, or a leader's address written by
//! Patroni and mirrored from its Endpoints): nothing recreates the slice, and they are gone for
//! good. For a Service with a selector the EndpointSlice controller rebuilds the slice from the
//! ready pods, but only after the deletion: for that moment the endpoints are gone too (the real
//! controllers agree: `delete/endpointslice-of-selector` in the reality harness). Either way the
//! Service's numbers are the rule's own ([`Effects::service_overrides`]); one left with none at
//! that moment counts in `servicesWithoutEndpoints`.
//!
//! DELETE of a v1 Endpoints (the model holds none: it is read through the slices mirrored from
//! it). For a Service without a selector, the EndpointSlice mirroring controller deletes the
//! slices it mirrored from the Endpoints (`endpointslice.kubernetes.io/managed-by:
//! endpointslicemirroring-controller.k8s.io`), and nothing recreates them. For a Service with a
//! selector the endpoints controller recreates the Endpoints and the slices are not touched.

use crate::cluster::{ClusterView, Object, ObjectKey, Spec};
use crate::impact::effects::Effects;
use crate::impact::subject::Subject;

/// The controller that mirrors a selector-less Service's Endpoints into EndpointSlices.
pub(crate) const MIRRORING_CONTROLLER: &str = "endpointslicemirroring-controller.k8s.io";
/// The label naming the controller that manages an EndpointSlice.
pub(crate) const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";

/// Ready endpoints over `slices`.
pub(crate) fn ready_in(slices: &[&Object]) -> usize {
    slices
        .iter()
        .map(|s| match &s.spec {
            Spec::EndpointSlice { endpoints, .. } => endpoints.iter().filter(|e| e.ready).count(),
            _ => 0,
        })
        .sum()
}

/// Whether the subject Endpoints are hand-made: their Service exists and has no selector (its
/// slices are then mirrored from them). For a Service with a selector the endpoints controller
/// owns them, and `owned` (what that means for the request) is noted.
pub(crate) fn hand_made_endpoints(
    view: &dyn ClusterView,
    subject: &Subject,
    effects: &mut Effects,
    owned: &str,
) -> bool {
    let (namespace, name) = (&subject.key.namespace, &subject.key.name);
    match view
        .get(&ObjectKey::new("", "Service", namespace, name))
        .map(|s| &s.spec)
    {
        None => false,
        Some(Spec::Service {
            selector: Some(_), ..
        }) => {
            effects.note(format!("Service {namespace}/{name} has a selector: {owned}"));
            false
        }
        Some(_) => true,
    }
}

/// Estimates what deleting the subject Endpoints does to its Service.
pub(crate) fn endpoints_deleted(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let owned = "the endpoints controller recreates its Endpoints, and its EndpointSlices are not touched";
    if !hand_made_endpoints(view, subject, effects, owned) {
        return;
    }
    let (namespace, name) = (&subject.key.namespace, &subject.key.name);
    let slices = view.endpoint_slices(namespace, name);
    let (mirrored, kept): (Vec<&Object>, Vec<&Object>) = slices
        .into_iter()
        .partition(|s| s.label(MANAGED_BY_LABEL) == Some(MIRRORING_CONTROLLER));
    if mirrored.is_empty() {
        return;
    }
    for slice in &mirrored {
        effects.delete(
            slice,
            format!("mirrored from Endpoints {namespace}/{name} (EndpointSlice mirroring)"),
        );
    }
    effects.note(format!(
        "Service {namespace}/{name} has no selector: the EndpointSlice mirroring controller deletes the slices mirrored from its Endpoints, and nothing recreates them"
    ));
    let all: Vec<&Object> = mirrored.iter().chain(kept.iter()).copied().collect();
    effects.service_figures(namespace, name, ready_in(&all), ready_in(&kept));
}

/// Estimates what deleting the subject EndpointSlice does to its Service.
pub(crate) fn deleted(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let Some(slice) = view.get(&subject.key) else {
        return;
    };
    let Spec::EndpointSlice {
        service: Some(service_name),
        ..
    } = &slice.spec
    else {
        return;
    };
    let namespace = &subject.key.namespace;
    let service_key = ObjectKey::new("", "Service", namespace, service_name);
    let Some(service) = view.get(&service_key) else {
        return;
    };
    let all = view.endpoint_slices(namespace, service_name);
    let kept: Vec<&Object> = all.iter().copied().filter(|s| s.key != subject.key).collect();
    let (before, after) = (ready_in(&all), ready_in(&kept));
    effects.note(match &service.spec {
        Spec::Service { selector: Some(_), .. } => format!(
            "Service {namespace}/{service_name} has a selector: the EndpointSlice controller rebuilds its endpoints in {} from the ready pods, after the deletion",
            subject.key
        ),
        _ => format!(
            "Service {namespace}/{service_name} has no selector: nothing recreates its endpoints in {}",
            subject.key
        ),
    });
    effects.service_figures(namespace, service_name, before, after);
}
