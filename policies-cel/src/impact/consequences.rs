//! From direct effects to consequences: which Services lose their last ready endpoint, which
//! PodDisruptionBudgets break, which workloads go down and which StatefulSets lose quorum —
//! at the change's worst moment, touching only the pods the request affects and their owners.

use crate::cluster::object::{IntOrPercent, Labels, Phase, Selector, Spec};
use crate::cluster::{ClusterView, Object, ObjectKey};
use crate::impact::balancers;
use crate::impact::by_key::ByKey;
use crate::impact::effects::Effects;
use crate::impact::report::{
    Deletion, Impact, PdbEffect, PodStop, QuorumEffect, ServiceEffect, Summary, Target, WorkloadEffect,
};
use crate::impact::subject::Subject;

/// A pod that counts as healthy: Ready and not terminating.
pub(crate) fn healthy(pod: &Object) -> bool {
    !pod.terminating() && pod.pod().is_some_and(|p| p.ready && !p.finished())
}

/// The ready pods a Service selecting `labels` in `namespace` routes to.
pub(crate) fn ready_selected<'a>(
    view: &'a dyn ClusterView,
    namespace: &str,
    labels: &Labels,
) -> Vec<&'a Object> {
    view.pods_matching(namespace, &Selector::of_labels(labels))
        .into_iter()
        .filter(|p| healthy(p))
        .collect()
}

fn target(key: &ObjectKey) -> Target {
    Target {
        kind: key.kind.as_ref().to_owned(),
        namespace: key.namespace.as_ref().to_owned(),
        name: key.name.as_ref().to_owned(),
    }
}

/// The workload that runs `pod`: its controller, or the Deployment above its ReplicaSet.
pub(crate) fn workload_of<'a>(view: &'a dyn ClusterView, pod: &Object) -> Option<&'a Object> {
    let owner = view.by_uid(&pod.controller()?.uid)?;
    if &*owner.key.kind == "ReplicaSet"
        && let Some(deployment) = owner.controller().and_then(|c| view.by_uid(&c.uid))
        && &*deployment.key.kind == "Deployment"
    {
        return Some(deployment);
    }
    Some(owner)
}

/// The controllers `workloadsDown` counts: Kubernetes' workloads, and an operator's own
/// controller of pods (a CloudNativePG Cluster, a Strimzi StrimziPodSet), whose pods serve as a
/// workload's do. A Job's pods count as pods only: they are meant to finish.
fn is_workload(object: &Object) -> bool {
    matches!(
        &*object.key.kind,
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet"
    ) || crate::cluster::object::builtin_group(&object.key.kind) != Some(&*object.key.group)
}

/// The pods a workload runs (through its ReplicaSets for a Deployment).
pub(crate) fn pods_of<'a>(view: &'a dyn ClusterView, workload: &Object) -> Vec<&'a Object> {
    let Some(uid) = &workload.uid else {
        return Vec::new();
    };
    let direct = view.dependents(uid);
    if &*workload.key.kind == "Deployment" {
        direct
            .into_iter()
            .filter(|rs| &*rs.key.kind == "ReplicaSet")
            .filter_map(|rs| rs.uid.as_deref())
            .flat_map(|rs_uid| view.dependents(rs_uid))
            .filter(|p| p.pod().is_some())
            .collect()
    } else {
        direct.into_iter().filter(|p| p.pod().is_some()).collect()
    }
}

/// Kubernetes' `GetScaledValueFromIntOrPercent(value, total, roundUp)`.
pub(crate) fn scaled(value: IntOrPercent, total: usize, round_up: bool) -> usize {
    match value {
        IntOrPercent::Int(n) => n.max(0) as usize,
        IntOrPercent::Percent(p) => {
            let product = p.max(0) as usize * total;
            if round_up {
                product.div_ceil(100)
            } else {
                product / 100
            }
        }
    }
}

/// A PodDisruptionBudget's `desiredHealthy` over `expected` pods, rounded as the disruption
/// controller rounds it (percentages up).
pub(crate) fn desired_healthy(
    min_available: Option<IntOrPercent>,
    max_unavailable: Option<IntOrPercent>,
    expected: usize,
) -> usize {
    match (min_available, max_unavailable) {
        (Some(min), _) => scaled(min, expected, true),
        (None, Some(max)) => expected.saturating_sub(scaled(max, expected, true)),
        (None, None) => expected,
    }
}

/// True when `key` names `namespace/name`.
fn same(key: &ObjectKey, namespace: &str, name: &str) -> bool {
    *key.namespace == *namespace && *key.name == *name
}

/// Works out the consequences of `effects` and assembles the estimate.
pub(crate) fn assemble(view: &dyn ClusterView, subject: &Subject, mut effects: Effects) -> Impact {
    effects.release_held_volumes();
    let (action, activity) = effects
        .described_as
        .take()
        .unwrap_or_else(|| (subject.describe(), subject.activity()));
    let mut impact = Impact {
        action,
        activity,
        notes: effects.notes.clone(),
        modelled: !effects.unmodelled,
        missing: effects.missing.take(),
        ..Impact::default()
    };
    impact.deleted = effects
        .deleted
        .iter()
        .map(|(key, reason)| Deletion {
            object: target(key),
            reason: reason.clone(),
        })
        .collect();
    let stopped: Vec<(&Object, &crate::impact::effects::Stop)> = effects
        .stops
        .iter()
        .filter_map(|s| view.get(&s.pod).map(|p| (p, s)))
        .collect();
    let down_at_worst = ByKey::new(stopped.iter().filter(|(_, s)| s.at_worst).map(|(p, _)| *p));
    let gone_for_good = ByKey::new(stopped.iter().filter(|(_, s)| !s.replaced).map(|(p, _)| *p));

    for (pod, stop) in &stopped {
        if pod.terminating() || pod.pod().is_some_and(|p| p.finished()) {
            continue;
        }
        impact.pods.push(PodStop {
            namespace: pod.key.namespace.as_ref().to_owned(),
            name: pod.key.name.as_ref().to_owned(),
            node: pod.pod().and_then(|p| p.node.as_deref()).map(str::to_owned),
            replaced: stop.replaced,
            reason: stop.reason.clone(),
        });
    }

    // Everything that selects or owns an affected pod, each looked at once.
    let mut services = Vec::new();
    let mut pdbs = Vec::new();
    let mut workloads = Vec::new();
    for (pod, _) in &stopped {
        services.extend(view.selecting_pod("Service", pod));
        pdbs.extend(view.selecting_pod("PodDisruptionBudget", pod));
        workloads.extend(workload_of(view, pod).filter(|w| is_workload(w)));
    }
    workloads.extend(effects.settles_at.keys().filter_map(|key| view.get(key)));
    let (services, pdbs, workloads) = (ByKey::new(services), ByKey::new(pdbs), ByKey::new(workloads));

    // A rule's own numbers for a Service or PDB replace the derived ones.
    let service_overridden = |key: &ObjectKey| {
        effects
            .service_overrides
            .iter()
            .any(|s| same(key, &s.namespace, &s.name))
    };
    let pdb_overridden = |key: &ObjectKey| {
        effects
            .pdb_overrides
            .iter()
            .any(|p| same(key, &p.namespace, &p.name))
    };

    for service in services
        .iter()
        .filter(|s| !effects.is_deleted(&s.key) && !service_overridden(&s.key))
    {
        let (before, after) = service_endpoints(view, service, &down_at_worst);
        impact.services.push(ServiceEffect {
            namespace: service.key.namespace.as_ref().to_owned(),
            name: service.key.name.as_ref().to_owned(),
            ready_before: before,
            ready_after: after,
            unserved_ports: Vec::new(),
        });
    }

    impact.services.extend(effects.service_overrides.iter().cloned());

    // A deleted Service loses every endpoint it had: its clients have nowhere to go.
    let no_pods = ByKey::default();
    for (key, _) in &effects.deleted {
        if &*key.kind != "Service" || service_overridden(key) {
            continue;
        }
        let Some(service) = view.get(key) else { continue };
        let (before, _) = service_endpoints(view, service, &no_pods);
        impact.services.push(ServiceEffect {
            namespace: key.namespace.as_ref().to_owned(),
            name: key.name.as_ref().to_owned(),
            ready_before: before,
            ready_after: 0,
            unserved_ports: Vec::new(),
        });
    }

    // Pods that leave for good with replicas their controller drops (a scale-down, or the
    // controller's own deletion).
    let replicas_removed = ByKey::new(
        stopped
            .iter()
            .filter(|(_, stop)| !stop.replaced)
            .filter(|(pod, _)| {
                workload_of(view, pod)
                    .is_some_and(|w| effects.settles_at.contains_key(&w.key) || effects.is_deleted(&w.key))
            })
            .map(|(pod, _)| *pod),
    );
    for pdb in pdbs
        .iter()
        .filter(|p| !effects.is_deleted(&p.key) && !pdb_overridden(&p.key))
    {
        let Spec::PodDisruptionBudget {
            selector,
            min_available,
            max_unavailable,
            always_allow_unhealthy,
        } = &pdb.spec
        else {
            continue;
        };
        let selected: Vec<&Object> = view
            .pods_matching(&pdb.key.namespace, selector)
            .into_iter()
            .filter(|p| p.pod().is_some_and(|s| !s.finished()))
            .collect();
        // For maxUnavailable and percentage budgets the disruption controller expects as many
        // pods as their controllers' scale: replicas a scale-down (or the controller's deletion)
        // removes leave the expected count with them, so they are not a disruption.
        let follows_scale = match min_available {
            Some(min) => matches!(min, IntOrPercent::Percent(_)),
            None => max_unavailable.is_some(),
        };
        let expected = if follows_scale {
            selected.len()
                - selected
                    .iter()
                    .filter(|p| replicas_removed.contains(&p.key))
                    .count()
        } else {
            selected.len()
        };
        let desired = desired_healthy(*min_available, *max_unavailable, expected);
        let current = selected.iter().filter(|p| healthy(p)).count();
        let removed = selected
            .iter()
            .filter(|p| healthy(p) && down_at_worst.contains(&p.key))
            .count();
        let after = current - removed;
        // A running pod that is not ready may go only while the budget is met, unless the
        // budget says AlwaysAllow (`unhealthyPodEvictionPolicy`, as the eviction API reads it).
        let unhealthy_taken = !always_allow_unhealthy
            && current < desired
            && selected.iter().any(|p| {
                !healthy(p)
                    && !p.terminating()
                    && p.pod().is_some_and(|s| s.phase == Phase::Running)
                    && down_at_worst.contains(&p.key)
            });
        impact.pdbs.push(PdbEffect {
            namespace: pdb.key.namespace.as_ref().to_owned(),
            name: pdb.key.name.as_ref().to_owned(),
            desired_healthy: desired,
            current_healthy: current,
            healthy_after: after,
            violated: (removed > 0 && after < desired) || unhealthy_taken,
        });
    }

    impact.pdbs.extend(effects.pdb_overrides.iter().cloned());

    for workload in workloads.iter() {
        let pods = pods_of(view, workload);
        let before = pods.iter().filter(|p| healthy(p)).count();
        let worst = pods
            .iter()
            .filter(|p| healthy(p) && !down_at_worst.contains(&p.key))
            .count();
        let after = match effects.settles_at.get(&workload.key) {
            Some(n) => *n,
            None if effects.is_deleted(&workload.key) => 0,
            None => pods
                .iter()
                .filter(|p| healthy(p) && !gone_for_good.contains(&p.key))
                .count(),
        };
        impact.workloads.push(WorkloadEffect {
            workload: target(&workload.key),
            ready_before: before,
            ready_after: after,
            ready_worst: worst.min(after),
        });
        if &*workload.key.kind == "StatefulSet" && before >= 3 {
            let majority = before / 2 + 1;
            let lowest = worst.min(after);
            impact.quorum.push(QuorumEffect {
                namespace: workload.key.namespace.as_ref().to_owned(),
                name: workload.key.name.as_ref().to_owned(),
                ready_before: before,
                ready_after: lowest,
                majority,
                lost: lowest < majority,
            });
        }
    }

    impact.volumes = effects.volumes;
    for volume in &mut impact.volumes {
        describe_volume(view, volume);
    }
    impact.stale_owners = effects.stale_owners;
    impact.unconfirmed_deletions = effects.unconfirmed;
    impact.lost_service_accounts = effects.lost_service_accounts;
    impact.lost_classes = effects.lost_classes;
    impact.pod_security_violations = effects.pod_security;
    impact.released_addresses = balancers::deleted(view, &effects.deleted);
    impact.released_addresses.append(&mut effects.released_addresses);
    impact.broken_references = effects.broken_references;
    impact.external = effects.external;
    impact.intended = effects.intended;
    impact.summary = Summary {
        deleted: impact.deleted.len(),
        pods_disrupted: impact.pods.len(),
        data_loss: impact.volumes.len(),
        services_without_endpoints: impact
            .services
            .iter()
            .filter(|s| s.ready_before > 0 && s.ready_after == 0)
            .count(),
        pdb_violations: impact.pdbs.iter().filter(|p| p.violated).count(),
        workloads_down: impact
            .workloads
            .iter()
            .filter(|w| w.ready_before > 0 && w.ready_worst == 0)
            .count(),
        quorum_lost: impact.quorum.iter().filter(|q| q.lost).count(),
        broken_references: impact.broken_references.len(),
        external_data_loss: impact.external.iter().filter(|e| e.data_loss).count(),
    };
    impact
}

/// Who uses a lost volume now: the pods mounting its claim, and the StatefulSet member
/// (within the current replicas) whose volumeClaimTemplate made it.
fn describe_volume(view: &dyn ClusterView, volume: &mut crate::impact::report::VolumeLoss) {
    volume.in_use_by = view
        .pods_using_claim(&volume.namespace, &volume.claim)
        .into_iter()
        .filter(|p| p.pod().is_some_and(|s| !s.finished()))
        .map(|p| p.key.name.as_ref().to_owned())
        .collect();
    volume.in_use_by.sort();
    volume.stateful_set = view
        .in_namespace(&volume.namespace)
        .into_iter()
        .find_map(|o| match &o.spec {
            Spec::StatefulSet {
                replicas,
                claim_templates,
                ..
            } => claim_templates.iter().find_map(|template| {
                let ordinal = volume
                    .claim
                    .strip_prefix(&**template)?
                    .strip_prefix('-')?
                    .strip_prefix(&*o.key.name)?
                    .strip_prefix('-')?
                    .parse::<i64>()
                    .ok()?;
                (ordinal < *replicas).then(|| o.key.name.as_ref().to_owned())
            }),
            _ => None,
        });
}

/// Ready endpoints of `service` now and with `down` pods gone: from its EndpointSlices when
/// there are any, otherwise from the ready pods its selector matches.
pub(crate) fn service_endpoints(
    view: &dyn ClusterView,
    service: &Object,
    down: &ByKey<'_>,
) -> (usize, usize) {
    let namespace = &service.key.namespace;
    let slices = view.endpoint_slices(namespace, &service.key.name);
    if !slices.is_empty() {
        let mut ready: Vec<Option<&str>> = Vec::new();
        for slice in slices {
            if let Spec::EndpointSlice { endpoints, .. } = &slice.spec {
                ready.extend(endpoints.iter().filter(|e| e.ready).map(|e| e.pod.as_deref()));
            }
        }
        // The names of the pods down in the Service's namespace, looked up without a key made
        // per endpoint.
        let mut down_here: Vec<&str> = down
            .iter()
            .map(|pod| &pod.key)
            .filter(|key| key.group.is_empty() && &*key.kind == "Pod" && key.namespace == *namespace)
            .map(|key| &*key.name)
            .collect();
        down_here.sort_unstable();
        let is_down = |pod: &Option<&str>| pod.is_some_and(|name| down_here.binary_search(&name).is_ok());
        let after = ready.iter().filter(|p| !is_down(p)).count();
        return (ready.len(), after);
    }
    let Spec::Service {
        selector: Some(labels),
        ..
    } = &service.spec
    else {
        return (0, 0);
    };
    let selector = Selector::of_labels(labels);
    let pods = view.pods_matching(namespace, &selector);
    let before = pods.iter().filter(|p| healthy(p)).count();
    let after = pods
        .iter()
        .filter(|p| healthy(p) && !down.contains(&p.key))
        .count();
    (before, after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_as_kubernetes() {
        assert_eq!(scaled(IntOrPercent::Percent(25), 10, true), 3);
        assert_eq!(scaled(IntOrPercent::Percent(25), 10, false), 2);
        assert_eq!(scaled(IntOrPercent::Percent(50), 3, true), 2);
        assert_eq!(scaled(IntOrPercent::Int(2), 10, true), 2);
    }
}
