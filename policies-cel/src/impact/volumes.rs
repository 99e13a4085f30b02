//! An UPDATE of a PersistentVolume's reclaim policy. Retain → Delete on a Released volume (its
//! claim gone) makes the PV controller delete it and its data now; on a bound volume it
//! schedules the data's destruction for when the claim goes (counted as data loss, marked
//! `scheduled`, as DESIGN.md's `dataLoss` defines it); on a volume never bound, nothing.

use crate::cluster::object::Spec;
use crate::cluster::{ClusterView, ObjectKey};
use crate::impact::effects::{Effects, Loss};
use crate::impact::field;
use crate::impact::subject::Subject;

fn reclaims_with_delete(object: Option<&serde_json::Value>) -> bool {
    object
        .and_then(|o| field(o, &["spec", "persistentVolumeReclaimPolicy"]))
        .and_then(|p| p.as_str())
        == Some("Delete")
}

/// Estimates an UPDATE of a PersistentVolume.
pub(crate) fn estimate(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) {
    if reclaims_with_delete(subject.old_object()) || !reclaims_with_delete(subject.object()) {
        return;
    }
    let Some(volume) = view.get(&subject.key) else {
        effects.note(format!(
            "{} is not in the cluster model: no effect is counted",
            subject.key
        ));
        return;
    };
    let Spec::PersistentVolume {
        claim: Some((namespace, name)),
        ..
    } = &volume.spec
    else {
        effects.note(format!(
            "{} has never been bound: reclaimPolicy Delete applies once a claim binds and releases it",
            subject.key
        ));
        return;
    };
    let claim = ObjectKey::new("", "PersistentVolumeClaim", namespace, name);
    if view.get(&claim).is_some() {
        let reason = format!(
            "bound to {claim}; reclaimPolicy Retain → Delete destroys its data when that claim is deleted"
        );
        effects.lose_volume_when(namespace, name, Some(&subject.key.name), reason, Loss::Scheduled);
        return;
    }
    let reason = format!("Released by {claim}; reclaimPolicy Retain → Delete deletes it and its data");
    effects.delete(volume, reason.clone());
    effects.lose_volume_when(namespace, name, Some(&subject.key.name), reason, Loss::Released);
}
