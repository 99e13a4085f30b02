//! Impact estimation: what a request would do to the cluster, following Kubernetes' own
//! semantics, read through a [`ClusterView`]. Rules turn the request into direct
//! [`effects`] (objects deleted, pods stopped, volumes lost); [`consequences`] derives what that
//! means for Services, PodDisruptionBudgets, workloads and quorums; [`report`] is the contract.
//! Cost grows with what the request affects, never with the cluster's size.

mod balancers;
mod budgets;
mod by_key;
mod cel_value;
mod classes;
mod config;
mod consequences;
mod create;
mod delete;
mod effects;
mod endpoints;
mod fields;
mod finalizers;
mod identities;
mod labels;
mod lagging;
mod nodes;
mod operators;
mod owners;
mod pod_security;
mod pods;
mod ports;
pub mod report;
mod services;
mod slices;
pub(crate) mod subject;
mod unconfirmed;
mod volumes;
mod wording;
mod workloads;

pub use fields::{ImpactFields, NAMES as IMPACT_FIELD_NAMES};
pub use report::{Impact, Summary};

use crate::cel::Value;
use crate::cluster::ClusterView;
use crate::cluster::object::ClassKind;
use crate::eval::Request;
use crate::operators::Profiles;
use effects::Effects;
use subject::Subject;

/// The field at `keys` inside `json` (`Value::pointer` without its allocation per segment).
pub(crate) fn field<'a>(json: &'a serde_json::Value, keys: &[&str]) -> Option<&'a serde_json::Value> {
    keys.iter().try_fold(json, |json, key| json.get(*key))
}

/// Estimates what `request` would do to the cluster seen through `view`, with the operators'
/// semantics of the built-in catalog.
pub fn estimate(request: &Request, view: &dyn ClusterView) -> Impact {
    estimate_with(request, view, crate::operators::catalog())
}

/// Estimates what `request` would do to the cluster seen through `view`, following what
/// `profiles` say operators do for their custom kinds (a policy set's `profiles`).
pub fn estimate_with(request: &Request, view: &dyn ClusterView, profiles: &Profiles) -> Impact {
    let subject = Subject::new(request, view);
    let mut effects = Effects::default();
    match lagging::caught_up(view, &subject) {
        Some(layered) => {
            effects.note(format!(
                "{} is not in the cluster model yet: judged with the request's oldObject",
                subject.key
            ));
            estimate_in(&layered, &subject, profiles, effects)
        }
        None => estimate_in(view, &subject, profiles, effects),
    }
}

/// The estimate of the subject's request in `view`.
fn estimate_in(
    view: &dyn ClusterView,
    subject: &Subject,
    profiles: &Profiles,
    mut effects: Effects,
) -> Impact {
    match finalizers::completed_deletion(subject) {
        Some(propagation) => finalizers::estimate(view, subject, propagation, &mut effects),
        // New ownerReferences naming no existing owner: the collector deletes the object.
        None if owners::collected(view, subject, &mut effects) => {}
        None => by_request(view, subject, profiles, &mut effects),
    }
    operators::apply(view, subject, profiles, &mut effects);
    config::readers_lost(view, &subject.key, &mut effects);
    consequences::assemble(view, subject, effects)
}

/// The rule for what the request itself asks (every request but a completed deletion).
fn by_request(view: &dyn ClusterView, subject: &Subject, profiles: &Profiles, effects: &mut Effects) {
    let kind = subject.key.kind.clone();
    match (subject.operation, subject.sub_resource.as_str(), &*kind) {
        // The readers of a ConfigMap or Secret the model holds are found with its cascade.
        ("DELETE", "", "ConfigMap" | "Secret") => {
            delete::delete(view, subject, effects);
            if view.get(&subject.key).is_none() {
                config::deleted(view, subject, effects);
            }
        }
        // The model holds no Endpoints (their slices stand for them): no cascade to follow.
        ("DELETE", "", "Endpoints") => slices::endpoints_deleted(view, subject, effects),
        ("DELETE", "", "EndpointSlice") => {
            delete::delete(view, subject, effects);
            slices::deleted(view, subject, effects);
        }
        // The model keeps no ServiceAccounts (nothing else depends on them): the pods running
        // as one are what its deletion harms.
        ("DELETE", "", "ServiceAccount") => identities::deleted(view, subject, effects),
        // Nor PriorityClasses and RuntimeClasses: the pods naming one are what its deletion harms.
        ("DELETE", "", "PriorityClass") => classes::deleted(view, subject, ClassKind::Priority, effects),
        ("DELETE", "", "RuntimeClass") => classes::deleted(view, subject, ClassKind::Runtime, effects),
        ("DELETE", "", "Pod") => {
            delete::delete(view, subject, effects);
            unconfirmed::estimate(view, subject, effects);
        }
        ("DELETE", "", _) => delete::delete(view, subject, effects),
        ("CREATE", "eviction", "Pod") => pods::evict(view, subject, effects),
        ("UPDATE", "" | "scale", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") => {
            workloads::estimate(view, subject, effects)
        }
        ("UPDATE", "", "Service") => services::estimate(view, subject, effects),
        ("UPDATE", "", "Endpoints") => endpoints::endpoints_updated(view, subject, effects),
        ("UPDATE", "", "EndpointSlice") => endpoints::slice_updated(view, subject, effects),
        ("UPDATE", "", "Pod") => labels::estimate(view, subject, effects),
        ("UPDATE", "", "Node") => nodes::estimate(view, subject, effects),
        ("UPDATE", "", "ConfigMap" | "Secret") => config::estimate(view, subject, effects),
        ("UPDATE" | "CREATE", "", "PodDisruptionBudget") => budgets::estimate(view, subject, effects),
        ("UPDATE", "", "PersistentVolume") => volumes::estimate(view, subject, effects),
        ("UPDATE", "", "Namespace") => pod_security::namespace_updated(view, subject, effects),
        ("CREATE", "", "ReplicaSet" | "Service" | "Deployment" | "StatefulSet") => {
            create::estimate(view, subject, effects)
        }
        // An UPDATE of an operator's kind whose profile says what the operator does on one
        // (`operators::apply` follows it).
        ("UPDATE", "", _) if profiles.declares_updates(&subject.key.group, &kind) => {}
        _ => {
            effects.unmodelled = true;
            effects.note(format!(
                "the estimate does not model `{}` yet: no effect is counted (impact.modelled is false)",
                subject.describe()
            ));
        }
    }
}

impl Impact {
    /// The estimate as the CEL `impact` variable.
    pub fn to_value(&self) -> Value {
        crate::cel::serialize::to_value(self).unwrap_or(Value::Null)
    }
}
