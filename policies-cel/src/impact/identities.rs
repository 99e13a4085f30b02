//! DELETE of a ServiceAccount that running pods run as. Nothing the pods' objects show changes,
//! yet two things break at once:
//!
//! - **API access**: a pod's token (the projected `serviceAccountToken` the ServiceAccount
//!   admission mounts) is bound to the ServiceAccount's uid. kube-apiserver rejects it as soon as
//!   the ServiceAccount is gone, and a new ServiceAccount of the same name has another uid: the
//!   running pods stay locked out until they are replaced (a controller's leader election, an
//!   operator's own reconcile, a sidecar refreshing certificates).
//! - **Replacement**: the ServiceAccount admission refuses a pod naming a ServiceAccount that
//!   does not exist, so a ReplicaSet or StatefulSet cannot recreate the pods it loses (an
//!   eviction, a failed node, the next rollout) until it exists again. The ServiceAccount
//!   controller recreates a deleted `default` within seconds; the tokens stay rejected.
//!
//! Each running pod (not terminating, not finished) of the ServiceAccount is reported in
//! `lostServiceAccounts`, with `token` telling whether it holds a token (a pod with
//! `automountServiceAccountToken: false` only loses its replacements).

use crate::cluster::object::Spec;
use crate::cluster::{ClusterView, Object};
use crate::impact::effects::Effects;
use crate::impact::report::LostServiceAccount;
use crate::impact::subject::Subject;

/// Records the running pods that run as the subject ServiceAccount (a DELETE).
pub(crate) fn deleted(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let key = &subject.key;
    let mut users: Vec<(&Object, bool)> = view
        .in_namespace(&key.namespace)
        .into_iter()
        .filter(|object| &*object.key.kind == "Pod" && object.key.group.is_empty() && !object.terminating())
        .filter_map(|object| match &object.spec {
            Spec::Pod(pod) if !pod.finished() && pod.runs_as() == &*key.name => Some((object, pod.api_token)),
            _ => None,
        })
        .collect();
    if users.is_empty() {
        return;
    }
    users.sort_by(|(a, _), (b, _)| a.key.name.cmp(&b.key.name));
    let tokens = users.iter().filter(|(_, token)| *token).count();
    effects
        .lost_service_accounts
        .extend(users.iter().map(|(pod, token)| LostServiceAccount {
            namespace: key.namespace.as_ref().to_owned(),
            pod: pod.key.name.as_ref().to_owned(),
            service_account: key.name.as_ref().to_owned(),
            token: *token,
        }));
    let holding = match (users.len(), tokens) {
        (1, 1) => "1 running pod, which holds its token".to_owned(),
        (1, _) => "1 running pod, which holds no token of it".to_owned(),
        (n, k) => format!("{n} running pods, {k} of which hold its token"),
    };
    effects.note(format!(
        "ServiceAccount {}/{} is the identity of {holding}: kube-apiserver rejects a token of it once it is deleted (a new one of that name has another uid), and none of the pods can be replaced until it exists again",
        key.namespace, key.name
    ));
}
