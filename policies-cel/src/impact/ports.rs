//! Service ports left without endpoints while their pods stay ready. The EndpointSlice
//! controller resolves a port's named `targetPort` in each selected pod
//! ([`crate::cluster::ports`]); a pod that declares no such port stays in the Service's slices
//! without that port, so clients of the port reach nothing. Two requests do it:
//!
//! - **an UPDATE of the Service** that points a port at a container port name (or protocol) its
//!   ready pods do not declare, or moves its selector to pods that do not declare it;
//! - **an UPDATE of a Deployment, StatefulSet or DaemonSet** whose new pod template renames or
//!   drops the container port a Service that selects its pods targets by name, or whose labels
//!   leave the Service's selector: once the rollout is through, its pods serve the port no more.
//!
//! A port counts when ready pods serve it now and none does after (one that served nothing
//! before is not made worse); pods of other workloads that serve it keep it served. The Service
//! is reported with no ready endpoints after and the ports in `unservedPorts`, in place of the
//! numbers derived from stopped pods.

use std::collections::HashSet;

use serde_json::Value as Json;

use crate::cluster::object::{Labels, PortTarget, ServicePort, Spec};
use crate::cluster::ports::{declared, display, pod_serves, serves};
use crate::cluster::{ClusterView, Object, ObjectKey};
use crate::impact::by_key::ByKey;
use crate::impact::consequences::{ready_selected, service_endpoints};
use crate::impact::effects::Effects;

/// A Service's selector and ports, when it has a selector (an empty one selects nothing).
fn selected_ports(service: &Object) -> Option<(&Labels, &[ServicePort])> {
    match &service.spec {
        Spec::Service {
            selector: Some(labels),
            ports,
            ..
        } if !labels.is_empty() => Some((labels, ports)),
        _ => None,
    }
}

fn serving(pods: &[&Object], port: &ServicePort) -> usize {
    pods.iter()
        .filter(|pod| pod.pod().is_some_and(|p| pod_serves(&p.requires.ports, port)))
        .count()
}

/// The ports of the Service `new` (an UPDATE of `old`) that ready pods serve now and none will:
/// each new port against the old port of the same name. Empty when the new selector matches no
/// ready pod (the Service is dark for that reason, reported as such) or either Service has no
/// selector (hand-made endpoints resolve no names).
pub(crate) fn unserved_after_update<'a>(
    view: &dyn ClusterView,
    old: &Object,
    new: &'a Object,
) -> Vec<&'a ServicePort> {
    let (Some((old_labels, old_ports)), Some((new_labels, new_ports))) =
        (selected_ports(old), selected_ports(new))
    else {
        return Vec::new();
    };
    let namespace = &old.key.namespace;
    let after_pods = ready_selected(view, namespace, new_labels);
    if after_pods.is_empty() {
        return Vec::new();
    }
    let before_pods = ready_selected(view, namespace, old_labels);
    new_ports
        .iter()
        .filter(|port| {
            old_ports
                .iter()
                .find(|old| old.name == port.name)
                .is_some_and(|old| serving(&before_pods, old) > 0)
                && serving(&after_pods, port) == 0
        })
        .collect()
}

/// `name/protocol` of the container ports `ports` target by name.
pub(crate) fn targets(ports: &[&ServicePort]) -> String {
    let mut names: Vec<String> = ports
        .iter()
        .filter_map(|p| match &p.target {
            PortTarget::Name(name) => Some(format!("{name}/{}", p.protocol)),
            PortTarget::Number(_) => None,
        })
        .collect();
    names.dedup();
    names.join(", ")
}

/// Reports the Service `service` left serving none of `ports` (`why`: the cause, for the note).
pub(crate) fn report(
    view: &dyn ClusterView,
    service: &Object,
    ports: &[&ServicePort],
    why: &str,
    effects: &mut Effects,
) {
    let (before, _) = service_endpoints(view, service, &ByKey::default());
    let names: Vec<String> = ports.iter().map(|p| display(p)).collect();
    let (ports_word, them, their) = match names.len() {
        1 => ("port", "it", "its"),
        _ => ("ports", "them", "their"),
    };
    effects.note(format!(
        "{ports_word} {} of {} would be served by no ready pod ({why}): the EndpointSlice controller leaves {them} out of every endpoint, so {their} clients reach no pod",
        names.join(", "),
        service.key,
    ));
    effects.unserved_ports(&service.key.namespace, &service.key.name, before, names);
}

/// A workload's new pod template as the Services that select its pods see it.
pub(crate) struct NewTemplate<'a> {
    labels: Option<&'a serde_json::Map<String, Json>>,
    ports: Vec<(&'a str, &'a str)>,
}

impl<'a> NewTemplate<'a> {
    /// Reads `template` (`spec.template` of the new workload).
    pub(crate) fn of(template: &'a Json) -> Self {
        Self {
            labels: template
                .get("metadata")
                .and_then(|m| m.get("labels"))
                .and_then(Json::as_object),
            ports: declared(template.get("spec")),
        }
    }

    fn selected_by(&self, labels: &Labels) -> bool {
        labels.iter().all(|(k, v)| {
            self.labels
                .and_then(|l| l.get(&**k))
                .and_then(Json::as_str)
                .is_some_and(|value| value == &**v)
        })
    }

    fn serves(&self, labels: &Labels, port: &ServicePort) -> bool {
        self.selected_by(labels) && serves(self.ports.iter().copied(), port)
    }
}

/// Reports the Services whose ports the rollout of `template` leaves unserved. `own` are the
/// workload's running pods before the request (those a scale-down in the same request removes
/// serve nothing after it either); `survivors` those the rollout replaces. The Services are
/// those selecting the first survivor (a workload's pods carry its template's labels).
pub(crate) fn rolled_out(
    view: &dyn ClusterView,
    workload: &Object,
    own: &HashSet<&ObjectKey>,
    survivors: &[&Object],
    template: &NewTemplate<'_>,
    effects: &mut Effects,
) {
    let Some(first) = survivors.first() else {
        return;
    };
    let mut services = view.selecting_pod("Service", first);
    services.sort_by(|a, b| a.key.name.cmp(&b.key.name));
    for service in services {
        let Some((labels, ports)) = selected_ports(service) else {
            continue;
        };
        let (own, others): (Vec<&Object>, Vec<&Object>) =
            ready_selected(view, &service.key.namespace, labels)
                .into_iter()
                .partition(|p| own.contains(&p.key));
        let unserved: Vec<&ServicePort> = ports
            .iter()
            .filter(|port| {
                serving(&own, port) > 0 && serving(&others, port) == 0 && !template.serves(labels, port)
            })
            .collect();
        if unserved.is_empty() {
            continue;
        }
        let why = if template.selected_by(labels) {
            format!(
                "the new pod template of {} declares no container port {}",
                workload.key,
                targets(&unserved)
            )
        } else {
            format!(
                "the new pod template of {} carries labels its selector does not match",
                workload.key
            )
        };
        report(view, service, &unserved, &why, effects);
    }
}
