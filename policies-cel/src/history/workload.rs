//! "The same workload": the workload a request's target belongs to — the highest built-in
//! controller (StatefulSet, Deployment, DaemonSet, Job, ...) up its controlling owners, or the
//! target itself when it is one. A pod of a Deployment belongs to the Deployment, not to its
//! ReplicaSet, so a rollout's ReplicaSets share one budget.

use crate::cluster::{ClusterView, Object};
use crate::eval::Request;
use crate::history::record::WorkloadRef;
use crate::impact::subject::target_key;

/// The kinds that count as a workload.
const WORKLOAD_KINDS: [&str; 7] = [
    "StatefulSet",
    "Deployment",
    "DaemonSet",
    "ReplicaSet",
    "ReplicationController",
    "Job",
    "CronJob",
];

/// How many controlling owners are followed up (a Pod → ReplicaSet → Deployment chain is two).
const MAX_DEPTH: usize = 4;

fn is_workload(object: &Object) -> bool {
    let group = &*object.key.group;
    (group == "apps" || group == "batch" || group.is_empty()) && WORKLOAD_KINDS.contains(&&*object.key.kind)
}

/// The workload of the request's target as the model knows it (none for a target the model does
/// not hold, or one no workload controls).
pub fn workload_of(request: &Request, cluster: &dyn ClusterView) -> Option<WorkloadRef> {
    if cluster.object_count() == 0 {
        return None;
    }
    let mut object = cluster.get(&target_key(request, cluster))?;
    let mut found = is_workload(object).then_some(object);
    for _ in 0..MAX_DEPTH {
        let Some(owner) = object.controller().and_then(|c| cluster.by_uid(&c.uid)) else {
            break;
        };
        if is_workload(owner) {
            found = Some(owner);
        }
        object = owner;
    }
    found.map(|w| WorkloadRef {
        kind: w.key.kind.as_ref().to_owned(),
        namespace: w.key.namespace.as_ref().to_owned(),
        name: w.key.name.as_ref().to_owned(),
    })
}
