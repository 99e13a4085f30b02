//! External addresses released with a load balancer. A `type: LoadBalancer` Service's addresses
//! (`status.loadBalancer.ingress`) are what clients, DNS records and firewall rules point at. The
//! load balancer controller tears the load balancer down when the Service is deleted, or when it
//! no longer asks for one (its type changed): the cloud provider's service controller cleans up
//! in both cases (`needsCleanup`: a deletionTimestamp, or `spec.type` other than LoadBalancer),
//! and in-cluster implementations (MetalLB and the like) return the address to their pool. A
//! load balancer created again gets another address unless one was reserved, and a hostname (an
//! AWS ELB's) never comes back. Each such Service is reported in `releasedAddresses`.

use crate::cluster::object::Spec;
use crate::cluster::{ClusterView, Object, ObjectKey};
use crate::impact::effects::Effects;
use crate::impact::report::ReleasedAddress;

/// The addresses of `service` when it is a load balancer that has some.
fn addresses(service: &Object) -> Option<&[crate::cluster::object::Text]> {
    match &service.spec {
        Spec::Service { external, .. } if !external.is_empty() => Some(external),
        _ => None,
    }
}

fn released(service: &Object, reason: String) -> ReleasedAddress {
    ReleasedAddress {
        namespace: service.key.namespace.as_ref().to_owned(),
        service: service.key.name.as_ref().to_owned(),
        addresses: addresses(service)
            .unwrap_or_default()
            .iter()
            .map(ToString::to_string)
            .collect(),
        reason,
    }
}

/// The load balancers of the Services among `deleted` (the request's own deletion and its
/// cascade alike).
pub(crate) fn deleted(view: &dyn ClusterView, deleted: &[(ObjectKey, String)]) -> Vec<ReleasedAddress> {
    deleted
        .iter()
        .filter(|(key, _)| key.group.is_empty() && &*key.kind == "Service")
        .filter_map(|(key, _)| view.get(key))
        .filter(|service| addresses(service).is_some())
        .map(|service| released(service, format!("{} deleted", service.key)))
        .collect()
}

/// An UPDATE of `old` (as the model holds it) to a Service of type `new_type`: a load balancer
/// with addresses whose Service no longer asks for one is torn down.
pub(crate) fn retyped(old: &Object, new_type: Option<&str>, effects: &mut Effects) {
    if addresses(old).is_none() || new_type == Some("LoadBalancer") {
        return;
    }
    let now = new_type.unwrap_or("ClusterIP");
    effects
        .released_addresses
        .push(released(old, format!("{} changed to type {now}", old.key)));
}
