//! An UPDATE that removes the last finalizers of an object already being deleted (it carries a
//! deletionTimestamp): the API server deletes it at once, and the garbage collector then takes
//! its dependents as the deletion asked — the `orphan` and `foregroundDeletion` finalizers name
//! the propagation it was made with; without them it was a Background deletion.

use crate::cluster::ClusterView;
use crate::eval::Found;
use crate::impact::delete::{self, Propagation};
use crate::impact::effects::Effects;
use crate::impact::field;
use crate::impact::subject::Subject;

fn finalizers(object: Option<&serde_json::Value>) -> Vec<&str> {
    object
        .and_then(|o| field(o, &["metadata", "finalizers"]))
        .and_then(|f| f.as_array())
        .map(|f| f.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default()
}

/// The propagation of the deletion this UPDATE completes, or `None` when it completes none (the
/// object is not being deleted, had no finalizer, or keeps one).
pub(crate) fn completed_deletion(subject: &Subject) -> Option<Propagation> {
    if subject.operation != "UPDATE" || !subject.sub_resource.is_empty() {
        return None;
    }
    // Read without parsing the objects: most UPDATEs are of objects not being deleted.
    let deleting = match subject.old_object_at(&["metadata", "deletionTimestamp"]) {
        Some(Found::Text(text)) => text.trim() != "null",
        Some(Found::Tree(value)) => !value.is_null(),
        None => false,
    };
    if !deleting {
        return None;
    }
    let before = finalizers(subject.old_object());
    if before.is_empty() || !finalizers(subject.object()).is_empty() {
        return None;
    }
    Some(if before.contains(&"orphan") {
        Propagation::Orphan
    } else if before.contains(&"foregroundDeletion") {
        Propagation::Foreground
    } else {
        Propagation::Background
    })
}

/// Estimates the deletion the UPDATE completes.
pub(crate) fn estimate(
    view: &dyn ClusterView,
    subject: &Subject,
    propagation: Propagation,
    effects: &mut Effects,
) {
    let target = subject.key.display();
    effects.described_as = Some((
        format!("remove the last finalizer of {target} (being deleted)"),
        format!("removing the last finalizer of {target} (being deleted)"),
    ));
    effects.note(format!(
        "{} is being deleted and this removes its last finalizer: it is deleted now",
        subject.key
    ));
    delete::delete_with(
        view,
        subject,
        propagation,
        "deleted: its last finalizer removed".to_owned(),
        effects,
    );
}
