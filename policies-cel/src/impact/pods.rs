//! Requests that stop single pods: an eviction (`pods/eviction` CREATE). Pod DELETE goes through
//! [`delete`](super::delete), where a pod owned by a live controller is replaced.

use crate::cluster::ClusterView;
use crate::impact::effects::Effects;
use crate::impact::subject::Subject;

/// Estimates an eviction of the subject pod.
pub(crate) fn evict(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    let Some(pod) = view.get(&subject.key) else {
        // kube-apiserver judges an eviction before it looks the pod up: it may not exist.
        effects.note(format!(
            "{} is not in the cluster model: nothing is known to stop",
            subject.key
        ));
        return;
    };
    if pod.terminating() {
        effects.note(format!("{} is already terminating", pod.key));
    }
    let replaced = pod.controller().and_then(|c| view.by_uid(&c.uid)).is_some();
    effects.delete(pod, "evicted");
    effects.stop(pod, replaced, true, "evicted");
}
