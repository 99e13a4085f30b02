//! UPDATE of a Service. A new selector moves the Service to other pods: the EndpointSlice
//! controller rebuilds its endpoints from the ready pods the new selector matches. Stopped pods
//! cannot express that, so the rule reports the Service's ready endpoints before and after
//! itself ([`Effects::service_overrides`]); a Service left with none counts in
//! `servicesWithoutEndpoints`.
//!
//! A Service that no longer asks for a load balancer (its type changed) has it torn down, with
//! its external addresses ([`balancers`]).
//!
//! A port pointed at a container port name (or protocol) its ready pods do not declare is left
//! without endpoints ([`ports`]); another changed port keeps them (noted). A Service without a
//! selector has hand-made endpoints that selector edits cannot touch; removing a selector freezes
//! the endpoints the controller made (they are kept, no longer updated).

use std::collections::HashSet;

use serde_json::Value as Json;

use crate::cluster::object::{Labels, Text};
use crate::cluster::{ClusterView, Object, Spec};
use crate::impact::balancers;
use crate::impact::by_key::ByKey;
use crate::impact::consequences::{ready_selected, service_endpoints};
use crate::impact::create::{previous, slim};
use crate::impact::effects::Effects;
use crate::impact::field;
use crate::impact::ports;
use crate::impact::subject::Subject;

/// Estimates an UPDATE of the subject Service.
pub(crate) fn estimate(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let Some(new) = slim(subject.object(), "object", effects) else {
        return;
    };
    let Some(old) = previous(view, subject, effects) else {
        effects.note(format!(
            "{} as it was is unknown (no oldObject, not in the model)",
            subject.key
        ));
        return;
    };
    let unserved = ports::unserved_after_update(view, &old, &new);
    if unserved.is_empty() {
        note_ports(subject, effects);
    }
    let new_type = subject
        .object()
        .and_then(|o| field(o, &["spec", "type"]))
        .and_then(Json::as_str);
    balancers::retyped(&old, new_type, effects);
    match (selector_of(&old), selector_of(&new)) {
        (before, after) if same_labels(before, after) => {}
        (Some(_), None) => effects.note(format!(
            "{} loses its selector: its endpoints are kept as they are and no longer follow pods",
            new.key
        )),
        (before, Some(labels)) => reselect(view, &old, before.is_none(), labels, effects),
        (None, None) => {}
    }
    if !unserved.is_empty() {
        let why = format!(
            "no ready pod it selects declares the container port {}",
            ports::targets(&unserved)
        );
        ports::report(view, &old, &unserved, &why, effects);
    }
}

/// The Service's selector, when it has one (an empty one selects nothing, like none).
fn selector_of(service: &Object) -> Option<&Labels> {
    match &service.spec {
        Spec::Service {
            selector: Some(labels),
            ..
        } if !labels.is_empty() => Some(labels),
        _ => None,
    }
}

fn same_labels(a: Option<&Labels>, b: Option<&Labels>) -> bool {
    fn set(labels: Option<&Labels>) -> Option<HashSet<&(Text, Text)>> {
        labels.map(|l| l.iter().collect())
    }
    set(a) == set(b)
}

fn display(labels: &Labels) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The Service `old` now selects `labels`: its endpoints become the ready pods they match.
fn reselect(view: &dyn ClusterView, old: &Object, was_manual: bool, labels: &Labels, effects: &mut Effects) {
    let (before, _) = service_endpoints(view, old, &ByKey::default());
    let after = ready_selected(view, &old.key.namespace, labels).len();
    if was_manual {
        effects.note(format!(
            "{} gains a selector: the controller replaces its hand-made (mirrored) endpoints with the pods it selects",
            old.key
        ));
    }
    if after == 0 {
        effects.note(format!(
            "the new selector {} of {} matches no ready pod",
            display(labels),
            old.key
        ));
    }
    effects.service_figures(&old.key.namespace, &old.key.name, before, after);
}

/// `port/protocol` of each port of the Service JSON.
fn ports(service: Option<&Json>) -> Option<Vec<String>> {
    let list = field(service?, &["spec", "ports"])?.as_array()?;
    let port = |p: &Json| {
        let number = p.get("port").map(Json::to_string).unwrap_or_default();
        let protocol = p.get("protocol").and_then(Json::as_str).unwrap_or("TCP");
        format!("{number}/{protocol}")
    };
    Some(list.iter().map(port).collect())
}

/// Notes a change of ports: the endpoints stay, clients of a removed port lose it.
fn note_ports(subject: &Subject, effects: &mut Effects) {
    let (Some(old), new) = (
        ports(subject.old_object()),
        ports(subject.object()).unwrap_or_default(),
    ) else {
        return;
    };
    let old_specs = subject.old_object().and_then(|j| field(j, &["spec", "ports"]));
    if old_specs == subject.object().and_then(|j| field(j, &["spec", "ports"])) {
        return;
    }
    let removed: Vec<&String> = old.iter().filter(|p| !new.contains(p)).collect();
    let detail = if removed.is_empty() {
        String::new()
    } else {
        format!(
            " (clients of {} lose it)",
            removed.iter().map(|p| p.as_str()).collect::<Vec<_>>().join(", ")
        )
    };
    effects.note(format!(
        "the ports of {} change{detail}: its endpoints are kept",
        subject.key
    ));
}
