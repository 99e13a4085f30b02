//! UPDATE of a v1 Endpoints or of an EndpointSlice: the ready endpoints its Service keeps.
//!
//! - **The Endpoints of a Service without a selector** (hand-made: an external database's
//!   address, the leader's address Patroni writes): the EndpointSlice mirroring controller makes
//!   the Service's mirrored slices follow them, so the Service is left with the ready addresses
//!   of the new Endpoints — mirrored by IP and target uid, as the controller keys them, valid
//!   IPs only — plus its other slices'. An update that empties them, or that labels them
//!   `endpointslice.kubernetes.io/skip-mirror: "true"` or gives them a leader-election record
//!   (the controller then deletes the slices it mirrored), leaves the Service without those
//!   endpoints, and nothing brings them back. Endpoints that were a leader-election lock and
//!   stay one are not mirrored: nothing changes.
//! - **The Endpoints of a Service with a selector** are the endpoints controller's, and the
//!   slices are not mirrored from them: nothing changes (noted).
//! - **An EndpointSlice**: the Service keeps the ready endpoints of its other slices plus the
//!   new slice's. A slice the EndpointSlice controller or the mirroring controller manages is
//!   written back after the update (the harm lasts until then); one written by hand (a Service
//!   without a selector), for good.
//!
//! Either way the Service's numbers are the rule's own ([`Effects::service_overrides`]); one left
//! with none counts in `servicesWithoutEndpoints`.

use std::collections::HashSet;
use std::net::IpAddr;

use serde_json::Value as Json;

use crate::cluster::{ClusterView, Object, ObjectKey, Spec, project, with_scratch_model};
use crate::impact::effects::Effects;
use crate::impact::slices::{MANAGED_BY_LABEL, MIRRORING_CONTROLLER, hand_made_endpoints, ready_in};
use crate::impact::subject::Subject;

/// The EndpointSlice controller, which manages the slices of a Service with a selector.
const SLICE_CONTROLLER: &str = "endpointslice-controller.k8s.io";
/// The label that keeps the mirroring controller off an Endpoints.
const SKIP_MIRROR_LABEL: &str = "endpointslice.kubernetes.io/skip-mirror";
/// The annotation of a leader-election record (Endpoints used as a lock).
const LEADER_ANNOTATION: &str = "control-plane.alpha.kubernetes.io/leader";

/// The ready endpoints the mirroring controller makes of an Endpoints object, or `None` when it
/// mirrors nothing of it.
fn mirrored_ready(endpoints: &Json) -> Option<usize> {
    let metadata = endpoints.get("metadata");
    let label = metadata
        .and_then(|m| m.get("labels"))
        .and_then(|l| l.get(SKIP_MIRROR_LABEL))
        .and_then(Json::as_str);
    let leader = metadata
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(LEADER_ANNOTATION))
        .is_some();
    if label == Some("true") || leader {
        return None;
    }
    let mut ready: HashSet<(&str, &str)> = HashSet::new();
    let subsets = endpoints.get("subsets").and_then(Json::as_array);
    for subset in subsets.into_iter().flatten() {
        let addresses = subset.get("addresses").and_then(Json::as_array);
        for address in addresses.into_iter().flatten() {
            let Some(ip) = address.get("ip").and_then(Json::as_str) else {
                continue;
            };
            if ip.parse::<IpAddr>().is_err() {
                continue; // the controller skips it (and records an event)
            }
            let uid = address
                .get("targetRef")
                .and_then(|t| t.get("uid"))
                .and_then(Json::as_str)
                .unwrap_or_default();
            ready.insert((ip, uid));
        }
    }
    Some(ready.len())
}

/// Estimates what updating the subject Endpoints does to its Service.
pub(crate) fn endpoints_updated(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let owned = "its Endpoints are the endpoints controller's, which writes them back, and its EndpointSlices are not mirrored from them";
    if !hand_made_endpoints(view, subject, effects, owned) {
        return;
    }
    let (namespace, name) = (&subject.key.namespace, &subject.key.name);
    let before = subject.old_object().and_then(mirrored_ready);
    let after = subject.object().and_then(mirrored_ready);
    if before.is_none() && after.is_none() {
        return; // a leader-election lock, or never mirrored: no endpoints either way
    }
    let (mirrored, kept): (Vec<&Object>, Vec<&Object>) = view
        .endpoint_slices(namespace, name)
        .into_iter()
        .partition(|s| s.label(MANAGED_BY_LABEL) == Some(MIRRORING_CONTROLLER));
    let kept = ready_in(&kept);
    // Nothing left to mirror: the controller deletes the slices it mirrored.
    if after.unwrap_or(0) == 0 {
        let why = if after.is_none() {
            "keeps from mirroring"
        } else {
            "empties"
        };
        for slice in &mirrored {
            effects.delete(
                slice,
                format!("mirrored from Endpoints {namespace}/{name}, which the update {why} (EndpointSlice mirroring)"),
            );
        }
    }
    // What the Service has now: its mirrored slices (the Endpoints before, while the model holds
    // none of them yet; a what-if may bring no oldObject).
    let before = if mirrored.is_empty() {
        before.unwrap_or(0)
    } else {
        ready_in(&mirrored)
    };
    let after = after.unwrap_or(0);
    if after < before {
        effects.note(format!(
            "Service {namespace}/{name} has no selector: the EndpointSlice mirroring controller makes its slices follow the Endpoints ({before} ready addresses before, {after} after), and nothing restores them"
        ));
    }
    effects.service_figures(namespace, name, before + kept, after + kept);
}

/// Estimates what updating the subject EndpointSlice does to its Service — to both, when the
/// update moves the slice to another Service (its `kubernetes.io/service-name` label).
pub(crate) fn slice_updated(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let Some(new) = subject
        .object()
        .and_then(|json| with_scratch_model(|model| project(json, model)).ok())
    else {
        return;
    };
    let service_of = |slice: &Object| match &slice.spec {
        Spec::EndpointSlice { service, .. } => service.clone(),
        _ => None,
    };
    let old_service = view.get(&subject.key).and_then(service_of);
    let new_service = service_of(&new);
    let mut services: Vec<_> = old_service.into_iter().chain(new_service.clone()).collect();
    services.dedup();
    for service_name in services {
        let keeps = new_service.as_ref() == Some(&service_name);
        service_effect(view, subject, &new, &service_name, keeps, effects);
    }
}

/// The ready endpoints Service `service_name` keeps when the subject slice becomes `new`
/// (`keeps`: the slice still belongs to it).
fn service_effect(
    view: &dyn ClusterView,
    subject: &Subject,
    new: &Object,
    service_name: &str,
    keeps: bool,
    effects: &mut Effects,
) {
    let namespace = &subject.key.namespace;
    let Some(service) = view.get(&ObjectKey::new("", "Service", namespace, service_name)) else {
        return;
    };
    let all = view.endpoint_slices(namespace, service_name);
    let others: Vec<&Object> = all.iter().copied().filter(|s| s.key != subject.key).collect();
    let added = if keeps { ready_in(&[new]) } else { 0 };
    let (before, after) = (ready_in(&all), ready_in(&others) + added);
    if after < before {
        let selector = matches!(
            &service.spec,
            Spec::Service {
                selector: Some(_),
                ..
            }
        );
        effects.note(match new.label(MANAGED_BY_LABEL) {
            Some(SLICE_CONTROLLER) if selector => format!(
                "{} is the EndpointSlice controller's: it writes the ready pods back after the update",
                subject.key
            ),
            Some(MIRRORING_CONTROLLER) if !selector => format!(
                "{} is mirrored from the Endpoints of Service {namespace}/{service_name}: the mirroring controller writes it back after the update",
                subject.key
            ),
            _ => format!(
                "{} is managed by no controller that restores it: the endpoints the update removes from Service {namespace}/{service_name} stay gone",
                subject.key
            ),
        });
    }
    effects.service_figures(namespace, service_name, before, after);
}
