//! The estimate's parts as CEL values, built field by field: what their serde serialization gives
//! through [`crate::cel::serialize`] (the reference, which the tests compare against), with far
//! less code. serde's derived `Serialize` is generic over the serializer, and its flattened
//! targets go through a map serializer, so turning one estimate into CEL ran through some 35 KiB
//! of machine code; a gateway's request comes when that code has left the caches, and fetching it
//! again was a fifth of all the code the judged request fetched (cachegrind). Here each field is
//! one call of a few small, shared builders.

use std::collections::HashMap;
use std::sync::Arc;

use crate::cel::Value;
use crate::cel::serialize::{map, shared_text, string, unsigned};
use crate::cel::upstream::objects::Key;
use crate::impact::report::{
    BrokenReference, Deletion, ExternalResource, IntendedBy, LostClass, LostServiceAccount, PdbEffect,
    PodSecurityViolation, PodStop, QuorumEffect, ReleasedAddress, ServiceEffect, StaleOwner, Summary, Target,
    UnconfirmedDeletion, VolumeLoss, WorkloadEffect,
};

/// A part of the estimate that has a CEL form: its serde serialization's.
pub(crate) trait ToCel {
    fn to_cel(&self) -> Value;
}

/// A CEL map under construction, named entry by named entry.
struct Fields(HashMap<Key, Value>);

impl Fields {
    fn with_capacity(len: usize) -> Self {
        Self(HashMap::with_capacity(len))
    }

    fn value(&mut self, name: &'static str, value: Value) {
        self.0.insert(Key::String(shared_text(name)), value);
    }

    fn text(&mut self, name: &'static str, text: &str) {
        self.value(name, string(text));
    }

    /// Left out when `None` (`skip_serializing_if = "Option::is_none"`).
    fn optional_text(&mut self, name: &'static str, text: Option<&str>) {
        if let Some(text) = text {
            self.text(name, text);
        }
    }

    fn count(&mut self, name: &'static str, count: usize) {
        self.value(name, unsigned(count as u64));
    }

    fn flag(&mut self, name: &'static str, flag: bool) {
        self.value(name, Value::Bool(flag));
    }

    fn texts(&mut self, name: &'static str, texts: &[String]) {
        self.value(name, texts.to_cel());
    }

    /// A flattened [`Target`]: its kind, namespace (left out when empty) and name.
    fn target(&mut self, target: &Target) {
        self.text("kind", &target.kind);
        if !target.namespace.is_empty() {
            self.text("namespace", &target.namespace);
        }
        self.text("name", &target.name);
    }

    fn finish(self) -> Value {
        map(self.0)
    }
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
        let mut map = Fields::with_capacity(9);
        map.count("deleted", self.deleted);
        map.count("podsDisrupted", self.pods_disrupted);
        map.count("dataLoss", self.data_loss);
        map.count("servicesWithoutEndpoints", self.services_without_endpoints);
        map.count("pdbViolations", self.pdb_violations);
        map.count("workloadsDown", self.workloads_down);
        map.count("quorumLost", self.quorum_lost);
        map.count("brokenReferences", self.broken_references);
        map.count("externalDataLoss", self.external_data_loss);
        map.finish()
    }
}

impl ToCel for Deletion {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(4);
        map.target(&self.object);
        map.text("reason", &self.reason);
        map.finish()
    }
}

impl ToCel for PodStop {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(5);
        map.text("namespace", &self.namespace);
        map.text("name", &self.name);
        map.optional_text("node", self.node.as_deref());
        map.flag("replaced", self.replaced);
        map.text("reason", &self.reason);
        map.finish()
    }
}

impl ToCel for VolumeLoss {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(8);
        map.text("namespace", &self.namespace);
        map.text("claim", &self.claim);
        map.optional_text("volume", self.volume.as_deref());
        map.text("reason", &self.reason);
        map.texts("inUseBy", &self.in_use_by);
        map.optional_text("statefulSet", self.stateful_set.as_deref());
        map.flag("released", self.released);
        map.flag("scheduled", self.scheduled);
        map.finish()
    }
}

impl ToCel for StaleOwner {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(7);
        map.target(&self.object);
        map.text("ownerKind", &self.owner_kind);
        map.text("ownerName", &self.owner_name);
        map.text("ownerUid", &self.owner_uid);
        map.optional_text("liveUid", self.live_uid.as_deref());
        map.finish()
    }
}

impl ToCel for UnconfirmedDeletion {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(5);
        map.text("namespace", &self.namespace);
        map.text("pod", &self.pod);
        map.text("node", &self.node);
        map.text("statefulSet", &self.stateful_set);
        map.texts("claims", &self.claims);
        map.finish()
    }
}

impl ToCel for LostServiceAccount {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(4);
        map.text("namespace", &self.namespace);
        map.text("pod", &self.pod);
        map.text("serviceAccount", &self.service_account);
        map.flag("token", self.token);
        map.finish()
    }
}

impl ToCel for LostClass {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(5);
        map.text("namespace", &self.namespace);
        map.text("pod", &self.pod);
        map.text("kind", &self.kind);
        map.text("class", &self.class);
        map.text("controller", &self.controller);
        map.finish()
    }
}

impl ToCel for PodSecurityViolation {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(5);
        map.text("namespace", &self.namespace);
        map.text("pod", &self.pod);
        map.text("controller", &self.controller);
        map.text("level", &self.level);
        map.texts("reasons", &self.reasons);
        map.finish()
    }
}

impl ToCel for ReleasedAddress {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(4);
        map.text("namespace", &self.namespace);
        map.text("service", &self.service);
        map.texts("addresses", &self.addresses);
        map.text("reason", &self.reason);
        map.finish()
    }
}

impl ToCel for ExternalResource {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(6);
        map.text("provider", &self.provider);
        map.text("kind", &self.kind);
        map.text("id", &self.id);
        map.flag("dataLoss", self.data_loss);
        map.text("by", &self.by);
        map.text("reason", &self.reason);
        map.finish()
    }
}

impl ToCel for IntendedBy {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(3);
        map.text("by", &self.by);
        map.text("profile", &self.profile);
        map.text("reason", &self.reason);
        map.finish()
    }
}

impl ToCel for WorkloadEffect {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(6);
        map.target(&self.workload);
        map.count("readyBefore", self.ready_before);
        map.count("readyAfter", self.ready_after);
        map.count("readyWorst", self.ready_worst);
        map.finish()
    }
}

impl ToCel for ServiceEffect {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(5);
        map.text("namespace", &self.namespace);
        map.text("name", &self.name);
        map.count("readyBefore", self.ready_before);
        map.count("readyAfter", self.ready_after);
        if !self.unserved_ports.is_empty() {
            map.texts("unservedPorts", &self.unserved_ports);
        }
        map.finish()
    }
}

impl ToCel for PdbEffect {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(6);
        map.text("namespace", &self.namespace);
        map.text("name", &self.name);
        map.count("desiredHealthy", self.desired_healthy);
        map.count("currentHealthy", self.current_healthy);
        map.count("healthyAfter", self.healthy_after);
        map.flag("violated", self.violated);
        map.finish()
    }
}

impl ToCel for QuorumEffect {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(6);
        map.text("namespace", &self.namespace);
        map.text("name", &self.name);
        map.count("readyBefore", self.ready_before);
        map.count("readyAfter", self.ready_after);
        map.count("majority", self.majority);
        map.flag("lost", self.lost);
        map.finish()
    }
}

impl ToCel for BrokenReference {
    fn to_cel(&self) -> Value {
        let mut map = Fields::with_capacity(5);
        map.text("namespace", &self.namespace);
        map.text("pod", &self.pod);
        map.text("kind", &self.kind);
        map.text("name", &self.name);
        map.text("key", &self.key);
        map.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::serialize::to_value;
    use crate::cel::value::to_json;
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
