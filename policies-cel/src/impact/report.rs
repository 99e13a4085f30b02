//! The `impact` contract: the summary figures of DESIGN.md (a public interface) and the lists
//! that explain each figure, so a denial message can name the concrete harm.

use serde::Serialize;

/// The stable summary: what tests, users and tooling read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// API objects that would disappear.
    pub deleted: usize,
    /// Distinct pods, not already terminating and not finished, that would be stopped.
    pub pods_disrupted: usize,
    /// Distinct volumes whose data would be destroyed or scheduled for destruction.
    pub data_loss: usize,
    /// Services with a ready endpoint now and none after the change or at its worst moment.
    pub services_without_endpoints: usize,
    /// PodDisruptionBudgets whose healthy pods would fall below `desiredHealthy`.
    pub pdb_violations: usize,
    /// Workloads with a ready pod now and none after the change or at its worst moment.
    pub workloads_down: usize,
    /// StatefulSets of 3+ ready members left with fewer than a majority of them.
    pub quorum_lost: usize,
    /// References of running pods to ConfigMap/Secret keys the request removes (one per pod and
    /// key, see [`BrokenReference`]): nothing stops now, the pods fail on their next start.
    pub broken_references: usize,
    /// Resources outside the cluster whose data an operator destroys when it acts on the
    /// request (a cloud database, a bucket, a Kafka topic, a backup), see [`ExternalResource`].
    pub external_data_loss: usize,
}

/// An object named in an explanation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
}

impl Target {
    /// `Kind namespace/name`.
    pub fn display(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// An object that would disappear, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Deletion {
    #[serde(flatten)]
    pub object: Target,
    pub reason: String,
}

/// A pod that would stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStop {
    pub namespace: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// A controller creates a replacement (the pod comes back, elsewhere or later).
    pub replaced: bool,
    pub reason: String,
}

/// A volume whose data would be lost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeLoss {
    pub namespace: String,
    pub claim: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volume: Option<String>,
    pub reason: String,
    /// Pods (not finished) that mount the claim now: the data is live.
    pub in_use_by: Vec<String>,
    /// The StatefulSet whose member (within its current replicas) owns the claim, by the
    /// `<template>-<statefulset>-<ordinal>` naming of volumeClaimTemplates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stateful_set: Option<String>,
    /// The claim is gone and reclaimPolicy Retain kept the volume (Released): data someone chose
    /// to keep, destroyed now.
    pub released: bool,
    /// Nothing is destroyed now: the request makes the data go when its claim is deleted (a
    /// bound volume switched from reclaimPolicy Retain to Delete).
    pub scheduled: bool,
}

/// An ownerReference of a deleted object that names an owner that no longer exists, or whose
/// name now belongs to another live object: the requester may be acting on a stale view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StaleOwner {
    #[serde(flatten)]
    pub object: Target,
    pub owner_kind: String,
    pub owner_name: String,
    pub owner_uid: String,
    /// The uid of the live object that now has the owner's name, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live_uid: Option<String>,
}

/// A StatefulSet member deleted without its node's confirmation (`gracePeriodSeconds: 0` while
/// its Node is unreachable): the StatefulSet starts it again, with the same claims, while the old
/// one may still run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnconfirmedDeletion {
    pub namespace: String,
    pub pod: String,
    /// The unreachable Node it runs on.
    pub node: String,
    pub stateful_set: String,
    /// The claims it mounts, which the new member mounts too.
    pub claims: Vec<String>,
}

/// A running pod whose ServiceAccount the request deletes: its token is rejected from then on
/// (when it holds one), and no replacement of it can be created until the ServiceAccount exists
/// again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LostServiceAccount {
    pub namespace: String,
    pub pod: String,
    pub service_account: String,
    /// The pod holds a token of the ServiceAccount (its API requests fail at once).
    pub token: bool,
}

/// A running pod whose PriorityClass or RuntimeClass the request deletes: it keeps running, but
/// its controller cannot create a replacement of it (kube-apiserver's Priority and RuntimeClass
/// admission refuse a pod naming a class that does not exist) until the class exists again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LostClass {
    pub namespace: String,
    pub pod: String,
    /// `PriorityClass` or `RuntimeClass`.
    pub kind: String,
    /// The class's name.
    pub class: String,
    /// The controller that would replace the pod (`ReplicaSet shop/web-7d4f`).
    pub controller: String,
}

/// A running pod that a Namespace's raised Pod Security enforce level refuses: it keeps running,
/// but kube-apiserver's PodSecurity admission refuses every new pod like it, so its controller
/// cannot replace it (nor roll out) until the level comes down or its template meets it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSecurityViolation {
    pub namespace: String,
    pub pod: String,
    /// The controller that would replace the pod (`ReplicaSet shop/web-7d4f`).
    pub controller: String,
    /// The level the request enforces (`baseline` or `restricted`).
    pub level: String,
    /// PodSecurity's reasons the pod fails it (`allowPrivilegeEscalation != false`).
    pub reasons: Vec<String>,
}

/// A load balancer torn down with its external addresses: its Service is deleted, or no longer of
/// type LoadBalancer. A new one gets other addresses unless they were reserved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleasedAddress {
    pub namespace: String,
    pub service: String,
    /// The load balancer's IPs and hostnames (`status.loadBalancer.ingress`).
    pub addresses: Vec<String>,
    pub reason: String,
}

/// Something outside the cluster that an operator destroys when it acts on the request: a cloud
/// resource behind a Crossplane managed resource, a Kafka topic, a backup in object storage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExternalResource {
    /// Where it lives (`aws`, `kafka`, `object storage`).
    pub provider: String,
    /// What it is (`RDSInstance`, `topic`, `backup`).
    pub kind: String,
    /// Its identifier there (an ARN, a topic name, a backup name).
    pub id: String,
    /// Its data is destroyed with it.
    pub data_loss: bool,
    /// The object whose deletion sets it off (`KafkaTopic kafka/orders`).
    pub by: String,
    /// The operator that destroys it, and why.
    pub reason: String,
}

/// An object of an operator's kind that declares the request's change intended (an autoscaler
/// that may run the workload down to this many replicas).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IntendedBy {
    /// The declaring object (`ScaledObject shop/web`).
    pub by: String,
    /// The OperatorProfile that reads it.
    pub profile: String,
    pub reason: String,
}

/// Ready pods of a workload now, once the change settles, and at its worst moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadEffect {
    #[serde(flatten)]
    pub workload: Target,
    pub ready_before: usize,
    pub ready_after: usize,
    pub ready_worst: usize,
}

/// Ready endpoints of a Service now and at the change's worst moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceEffect {
    pub namespace: String,
    pub name: String,
    pub ready_before: usize,
    pub ready_after: usize,
    /// Ports (by name, or number when unnamed) that ready pods served before and none serves
    /// after, while the pods may stay ready: a named `targetPort` no pod declares. Such a
    /// Service counts with no ready endpoints (`readyAfter` 0): its clients reach nothing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unserved_ports: Vec<String>,
}

/// A PodDisruptionBudget's numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PdbEffect {
    pub namespace: String,
    pub name: String,
    pub desired_healthy: usize,
    pub current_healthy: usize,
    pub healthy_after: usize,
    pub violated: bool,
}

/// A StatefulSet's quorum.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuorumEffect {
    pub namespace: String,
    pub name: String,
    pub ready_before: usize,
    pub ready_after: usize,
    pub majority: usize,
    pub lost: bool,
}

/// A running pod's required reference to a ConfigMap or Secret key the request removes (env
/// `valueFrom` or a volume's `items`). The pod keeps running; its container fails with
/// `CreateContainerConfigError` on its next restart, or its volume fails to mount when the pod
/// is recreated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BrokenReference {
    pub namespace: String,
    pub pod: String,
    /// `ConfigMap` or `Secret`.
    pub kind: String,
    /// The ConfigMap or Secret (in the pod's namespace).
    pub name: String,
    /// The removed key (never a value); `*` when the object is deleted and the pod requires all
    /// of it (`envFrom` or a volume without `items`).
    pub key: String,
}

/// The estimate of what a request would do to the cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Impact {
    pub summary: Summary,
    /// What the request is, as the estimate understood it (e.g. `delete StatefulSet mq/rabbit`).
    pub action: String,
    /// The same as a sentence's opening (`deleting StatefulSet mq/rabbit`), for messages.
    pub activity: String,
    pub deleted: Vec<Deletion>,
    pub pods: Vec<PodStop>,
    pub volumes: Vec<VolumeLoss>,
    pub workloads: Vec<WorkloadEffect>,
    pub services: Vec<ServiceEffect>,
    pub pdbs: Vec<PdbEffect>,
    pub quorum: Vec<QuorumEffect>,
    pub broken_references: Vec<BrokenReference>,
    /// Stale ownerReferences of the objects the request deletes.
    pub stale_owners: Vec<StaleOwner>,
    /// StatefulSet members deleted without their node's confirmation.
    pub unconfirmed_deletions: Vec<UnconfirmedDeletion>,
    /// Running pods whose ServiceAccount the request deletes.
    pub lost_service_accounts: Vec<LostServiceAccount>,
    /// Load balancers torn down with their external addresses.
    pub released_addresses: Vec<ReleasedAddress>,
    /// Running pods whose PriorityClass or RuntimeClass the request deletes.
    pub lost_classes: Vec<LostClass>,
    /// Running pods a raised Pod Security enforce level refuses.
    pub pod_security_violations: Vec<PodSecurityViolation>,
    /// Resources outside the cluster that operators destroy as a consequence (OperatorProfiles).
    pub external: Vec<ExternalResource>,
    /// Objects that declare the request's disruption intended (OperatorProfiles' intents): the
    /// availability policies admit what they declare.
    pub intended: Vec<IntendedBy>,
    /// Assumptions and gaps of the estimate (an owner that no longer exists, a kind the model
    /// has never seen, a request the estimate does not model).
    pub notes: Vec<String>,
    /// False when the estimate has no rule for the request (an UPDATE of a kind or field it
    /// does not model): its figures are then zero for want of a rule, not because nothing
    /// happens, and a policy can choose its posture (`!impact.modelled`).
    pub modelled: bool,
    /// The workload a `scale` acts on, which carries no copy of it (DELETEs and UPDATEs bring
    /// theirs as `oldObject`) and which kube-apiserver only judges for an object it has, is not
    /// in the model: nothing is counted for it (a note says so). (An eviction is judged before
    /// kube-apiserver looks its pod up, so a missing pod may not exist: not marked.) In a snapshot, an object left
    /// out; in the gateway's live model, which mirrors kube-apiserver, an object its watches have
    /// not delivered yet: `evaluate_in` with [`EvalContext::live`](crate::EvalContext) then
    /// makes `impact` unavailable instead of empty. Not part of the CEL `impact` map.
    #[serde(skip)]
    pub missing: Option<crate::cluster::ObjectKey>,
}
