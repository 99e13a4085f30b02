//! The estimate's parts as CEL values, built field by field: what their serde serialization gives
//! through [`crate::cel::serialize`] (the reference, which the tests compare against), with far
//! less code. serde's derived `Serialize` is generic over the serializer, and its flattened
//! targets go through a map serializer, so turning one estimate into CEL ran through some 35 KiB
//! of machine code; a gateway's request comes when that code has left the caches, and fetching it
//! again was a fifth of all the code the judged request fetched (cachegrind). Here each part is
//! one map of fixed keys ([`MapShape`], cloned rather than hashed key by key) filled by a few
//! small, shared builders.

use std::sync::Arc;

use crate::cel::Value;
use crate::cel::map_shape::MapShape;
use crate::cel::serialize::{string, unsigned};
use crate::impact::report::{
    BrokenReference, Deletion, ExternalResource, IntendedBy, LostClass, LostServiceAccount, PdbEffect,
    PodSecurityViolation, PodStop, QuorumEffect, ReleasedAddress, ServiceEffect, StaleOwner, Summary,
    UnconfirmedDeletion, VolumeLoss, WorkloadEffect,
};

/// A part of the estimate that has a CEL form: its serde serialization's.
pub(crate) trait ToCel {
    fn to_cel(&self) -> Value;
}

/// A CEL map of these named entries (an entry whose value is `None` is left out), built from a
/// shape each thread keeps for the call site.
macro_rules! entries {
    ($($name:literal => $value:expr),+ $(,)?) => {{
        thread_local! {
            static SHAPE: MapShape = MapShape::new(&[$($name),+]);
        }
        SHAPE.with(|shape| shape.build(&mut [$($value),+]))
    }};
}

fn text(text: &str) -> Option<Value> {
    Some(string(text))
}

/// Left out when `None` (`skip_serializing_if = "Option::is_none"`).
fn optional_text(text: Option<&str>) -> Option<Value> {
    text.map(string)
}

/// A flattened target's namespace: left out when empty (a cluster-scoped object).
fn namespace(namespace: &str) -> Option<Value> {
    (!namespace.is_empty()).then(|| string(namespace))
}

fn count(count: usize) -> Option<Value> {
    Some(unsigned(count as u64))
}

fn flag(flag: bool) -> Option<Value> {
    Some(Value::Bool(flag))
}

fn texts(texts: &[String]) -> Option<Value> {
    Some(texts.to_cel())
}

impl<T: ToCel> ToCel for [T] {
    fn to_cel(&self) -> Value {
        Value::List(Arc::new(self.iter().map(ToCel::to_cel).collect()))
    }
}

impl<T: ToCel> ToCel for Vec<T> {
    fn to_cel(&self) -> Value {
        self.as_slice().to_cel()
    }
}

impl ToCel for String {
    fn to_cel(&self) -> Value {
        string(self)
    }
}

impl ToCel for bool {
    fn to_cel(&self) -> Value {
        Value::Bool(*self)
    }
}

impl ToCel for Summary {
    fn to_cel(&self) -> Value {
        entries! {
            "deleted" => count(self.deleted),
            "podsDisrupted" => count(self.pods_disrupted),
            "dataLoss" => count(self.data_loss),
            "servicesWithoutEndpoints" => count(self.services_without_endpoints),
            "pdbViolations" => count(self.pdb_violations),
            "workloadsDown" => count(self.workloads_down),
            "quorumLost" => count(self.quorum_lost),
            "brokenReferences" => count(self.broken_references),
            "externalDataLoss" => count(self.external_data_loss),
        }
    }
}

impl ToCel for Deletion {
    fn to_cel(&self) -> Value {
        entries! {
            "kind" => text(&self.object.kind),
            "namespace" => namespace(&self.object.namespace),
            "name" => text(&self.object.name),
            "reason" => text(&self.reason),
        }
    }
}

impl ToCel for PodStop {
    fn to_cel(&self) -> Value {
        entries! {
            "namespace" => text(&self.namespace),
            "name" => text(&self.name),
            "node" => optional_text(self.node.as_deref()),
            "replaced" => flag(self.replaced),
            "reason" => text(&self.reason),
        }
    }
}

impl ToCel for VolumeLoss {
    fn to_cel(&self) -> Value {
        entries! {
            "namespace" => text(&self.namespace),
            "claim" => text(&self.claim),
            "volume" => optional_text(self.volume.as_deref()),
            "reason" => text(&self.reason),
            "inUseBy" => texts(&self.in_use_by),
            "statefulSet" => optional_text(self.stateful_set.as_deref()),
            "released" => flag(self.released),
            "scheduled" => flag(self.scheduled),
        }
    }
}

impl ToCel for StaleOwner {
    fn to_cel(&self) -> Value {
        entries! {
            "kind" => text(&self.object.kind),
            "namespace" => namespace(&self.object.namespace),
            "name" => text(&self.object.name),
            "ownerKind" => text(&self.owner_kind),
            "ownerName" => text(&self.owner_name),
            "ownerUid" => text(&self.owner_uid),
            "liveUid" => optional_text(self.live_uid.as_deref()),
        }
    }
}

impl ToCel for UnconfirmedDeletion {
    fn to_cel(&self) -> Value {
        entries! {
            "namespace" => text(&self.namespace),
            "pod" => text(&self.pod),
            "node" => text(&self.node),
            "statefulSet" => text(&self.stateful_set),
            "claims" => texts(&self.claims),
        }
    }
}

impl ToCel for LostServiceAccount {
    fn to_cel(&self) -> Value {
        entries! {
            "namespace" => text(&self.namespace),
            "pod" => text(&self.pod),
            "serviceAccount" => text(&self.service_account),
            "token" => flag(self.token),
        }
    }
}

impl ToCel for LostClass {
    fn to_cel(&self) -> Value {
        entries! {
            "namespace" => text(&self.namespace),
            "pod" => text(&self.pod),
            "kind" => text(&self.kind),
            "class" => text(&self.class),
            "controller" => text(&self.controller),
        }
    }
}

impl ToCel for PodSecurityViolation {
    fn to_cel(&self) -> Value {
        entries! {
            "namespace" => text(&self.namespace),
            "pod" => text(&self.pod),
            "controller" => text(&self.controller),
            "level" => text(&self.level),
            "reasons" => texts(&self.reasons),
        }
    }
}

impl ToCel for ReleasedAddress {
    fn to_cel(&self) -> Value {
        entries! {
            "namespace" => text(&self.namespace),
            "service" => text(&self.service),
            "addresses" => texts(&self.addresses),
            "reason" => text(&self.reason),
        }
    }
}

impl ToCel for ExternalResource {
    fn to_cel(&self) -> Value {
        entries! {
            "provider" => text(&self.provider),
            "kind" => text(&self.kind),
            "id" => text(&self.id),
            "dataLoss" => flag(self.data_loss),
            "by" => text(&self.by),
            "reason" => text(&self.reason),
        }
    }
}

impl ToCel for IntendedBy {
    fn to_cel(&self) -> Value {
        entries! {
            "by" => text(&self.by),
            "profile" => text(&self.profile),
            "reason" => text(&self.reason),
        }
    }
}

impl ToCel for WorkloadEffect {
    fn to_cel(&self) -> Value {
        entries! {
            "kind" => text(&self.workload.kind),
            "namespace" => namespace(&self.workload.namespace),
            "name" => text(&self.workload.name),
            "readyBefore" => count(self.ready_before),
            "readyAfter" => count(self.ready_after),
            "readyWorst" => count(self.ready_worst),
        }
    }
}

impl ToCel for ServiceEffect {
    fn to_cel(&self) -> Value {
        entries! {
            "namespace" => text(&self.namespace),
            "name" => text(&self.name),
            "readyBefore" => count(self.ready_before),
            "readyAfter" => count(self.ready_after),
            "unservedPorts" => (!self.unserved_ports.is_empty()).then(|| self.unserved_ports.to_cel()),
        }
    }
}

impl ToCel for PdbEffect {
    fn to_cel(&self) -> Value {
        entries! {
            "namespace" => text(&self.namespace),
            "name" => text(&self.name),
            "desiredHealthy" => count(self.desired_healthy),
            "currentHealthy" => count(self.current_healthy),
            "healthyAfter" => count(self.healthy_after),
            "violated" => flag(self.violated),
        }
    }
}

impl ToCel for QuorumEffect {
    fn to_cel(&self) -> Value {
        entries! {
            "namespace" => text(&self.namespace),
            "name" => text(&self.name),
            "readyBefore" => count(self.ready_before),
            "readyAfter" => count(self.ready_after),
            "majority" => count(self.majority),
            "lost" => flag(self.lost),
        }
    }
}

impl ToCel for BrokenReference {
    fn to_cel(&self) -> Value {
        entries! {
            "namespace" => text(&self.namespace),
            "pod" => text(&self.pod),
            "kind" => text(&self.kind),
            "name" => text(&self.name),
            "key" => text(&self.key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::serialize::to_value;
    use crate::cel::value::to_json;
    use crate::impact::report::Target;
    use crate::impact::{Impact, ImpactFields};

    fn target(namespace: &str) -> Target {
        Target {
            kind: "StatefulSet".into(),
            namespace: namespace.into(),
            name: "db".into(),
        }
    }

    fn texts(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("t{i}")).collect()
    }

    /// An estimate with every list holding entries, each optional field both present and absent,
    /// each flattened target with and without a namespace, and a count past i64.
    fn everything() -> Impact {
        let text = |s: &str| s.to_owned();
        Impact {
            summary: Summary {
                deleted: 1,
                pods_disrupted: 2,
                data_loss: 3,
                services_without_endpoints: 4,
                pdb_violations: 5,
                workloads_down: 6,
                quorum_lost: 7,
                broken_references: usize::MAX,
                external_data_loss: 8,
            },
            action: text("delete StatefulSet a/db"),
            activity: text("deleting StatefulSet a/db"),
            deleted: vec![
                Deletion {
                    object: target("a"),
                    reason: text("deleted by the request"),
                },
                Deletion {
                    object: target(""),
                    reason: text("cascade"),
                },
            ],
            pods: [None, Some(text("node-1"))]
                .into_iter()
                .map(|node| PodStop {
                    namespace: text("a"),
                    name: text("db-0"),
                    node,
                    replaced: true,
                    reason: text("deleted"),
                })
                .collect(),
            volumes: [(None, None), (Some(text("pv-1")), Some(text("a/db")))]
                .into_iter()
                .map(|(volume, stateful_set)| VolumeLoss {
                    namespace: text("a"),
                    claim: text("data-db-0"),
                    volume,
                    reason: text("claim deleted"),
                    in_use_by: texts(2),
                    stateful_set,
                    released: false,
                    scheduled: true,
                })
                .collect(),
            workloads: vec![WorkloadEffect {
                workload: target("a"),
                ready_before: 3,
                ready_after: 0,
                ready_worst: 0,
            }],
            services: [texts(0), texts(2)]
                .into_iter()
                .map(|unserved_ports| ServiceEffect {
                    namespace: text("a"),
                    name: text("db"),
                    ready_before: 3,
                    ready_after: 0,
                    unserved_ports,
                })
                .collect(),
            pdbs: vec![PdbEffect {
                namespace: text("a"),
                name: text("db"),
                desired_healthy: 2,
                current_healthy: 3,
                healthy_after: 0,
                violated: true,
            }],
            quorum: vec![QuorumEffect {
                namespace: text("a"),
                name: text("db"),
                ready_before: 3,
                ready_after: 0,
                majority: 2,
                lost: true,
            }],
            broken_references: vec![BrokenReference {
                namespace: text("a"),
                pod: text("web-1"),
                kind: text("Secret"),
                name: text("creds"),
                key: text("*"),
            }],
            stale_owners: [None, Some(text("uid-2"))]
                .into_iter()
                .map(|live_uid| StaleOwner {
                    object: target("a"),
                    owner_kind: text("Cluster"),
                    owner_name: text("db"),
                    owner_uid: text("uid-1"),
                    live_uid,
                })
                .collect(),
            unconfirmed_deletions: vec![UnconfirmedDeletion {
                namespace: text("a"),
                pod: text("db-1"),
                node: text("node-2"),
                stateful_set: text("db"),
                claims: texts(1),
            }],
            lost_service_accounts: vec![LostServiceAccount {
                namespace: text("a"),
                pod: text("web-1"),
                service_account: text("web"),
                token: true,
            }],
            released_addresses: vec![ReleasedAddress {
                namespace: text("a"),
                service: text("edge"),
                addresses: texts(2),
                reason: text("deleted"),
            }],
            lost_classes: vec![LostClass {
                namespace: text("a"),
                pod: text("web-1"),
                kind: text("PriorityClass"),
                class: text("high"),
                controller: text("ReplicaSet a/web-1"),
            }],
            pod_security_violations: vec![PodSecurityViolation {
                namespace: text("a"),
                pod: text("web-1"),
                controller: text("ReplicaSet a/web-1"),
                level: text("restricted"),
                reasons: texts(3),
            }],
            external: vec![ExternalResource {
                provider: text("aws"),
                kind: text("RDSInstance"),
                id: text("arn:aws:rds:eu-west-1:1:db:orders"),
                data_loss: true,
                by: text("RDSInstance orders"),
                reason: text("deletionPolicy Delete"),
            }],
            intended: vec![IntendedBy {
                by: text("ScaledObject a/web"),
                profile: text("keda-scaledobject"),
                reason: text("minReplicaCount 0"),
            }],
            notes: texts(2),
            modelled: true,
            missing: None,
        }
    }

    /// Each named part of `impact` converts as its serialization does.
    macro_rules! each_part_as_serialized {
        ($impact:expr, $($field:ident),+ $(,)?) => {$(
            let built = $impact.$field.to_cel();
            let serialized = to_value(&$impact.$field).unwrap();
            assert_eq!(built, serialized, stringify!($field));
            assert_eq!(to_json(&built), to_json(&serialized), stringify!($field));
        )+};
    }

    #[test]
    fn every_part_converts_as_its_serialization_does() {
        let impact = everything();
        each_part_as_serialized!(
            impact,
            summary,
            deleted,
            pods,
            volumes,
            workloads,
            services,
            pdbs,
            quorum,
            broken_references,
            stale_owners,
            unconfirmed_deletions,
            lost_service_accounts,
            released_addresses,
            lost_classes,
            pod_security_violations,
            external,
            intended,
            notes,
            modelled,
        );
        let whole = impact.to_value_of(ImpactFields::ALL);
        assert_eq!(
            whole,
            impact.to_value(),
            "every field of the estimate, each by its CEL name"
        );
    }
}
