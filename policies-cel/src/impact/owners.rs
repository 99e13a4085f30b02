//! An UPDATE that changes an object's ownerReferences so that none of the owners it names
//! exists, as the garbage collector verifies one: an object of the reference's kind and name, in
//! the dependent's namespace when the kind is namespaced (a namespaced owner in another
//! namespace is absent by design), with the reference's uid. The collector then deletes the
//! object in the background, its own dependents with it — an operator that copies
//! ownerReferences from another namespace, or keeps a uid from before its owner was recreated,
//! has its claims and workloads collected moments after the write is admitted.
//!
//! Only owners the model can vouch for are judged absent: the built-in kinds it reads (every
//! object of them), and custom kinds whose CRD and some instance are in the model. A reference the collector cannot
//! resolve (an unknown group or kind, a cluster-scoped object naming a namespaced owner) keeps the
//! object, as it does in Kubernetes.

use serde_json::Value as Json;

use crate::cluster::api::kinds::read_into_model;
use crate::cluster::{ClusterView, Spec};
use crate::impact::delete::{Propagation, delete_with};
use crate::impact::effects::Effects;
use crate::impact::subject::Subject;

/// One ownerReference as the request sets it.
#[derive(Debug)]
struct Reference<'a> {
    group: &'a str,
    kind: &'a str,
    name: &'a str,
    uid: &'a str,
}

/// What the collector makes of a reference.
#[derive(Debug, PartialEq, Eq)]
enum Owner {
    Present,
    Absent,
    /// The collector cannot resolve it, or the model cannot tell: the object is kept.
    Unknown(String),
}

/// Estimates the collection of the subject when the UPDATE sets ownerReferences none of whose
/// owners exists; true when it did (the request's own change is then moot).
pub(crate) fn collected(view: &dyn ClusterView, subject: &Subject, effects: &mut Effects) -> bool {
    const OWNERS: &[&str] = &["metadata", "ownerReferences"];
    if subject.operation != "UPDATE" || !subject.sub_resource.is_empty() {
        return false;
    }
    let Some(new) = subject.object_at(OWNERS) else {
        return false;
    };
    if subject.old_object_at(OWNERS).is_some_and(|old| old.same_as(new)) {
        return false;
    }
    let Some(Json::Array(items)) = subject.object().and_then(|o| crate::impact::field(o, OWNERS)) else {
        return false;
    };
    let references: Vec<Reference> = items.iter().filter_map(reference).collect();
    if references.is_empty() || references.len() != items.len() {
        return false;
    }
    // The same owners written another way (field order, blockOwnerDeletion) change nothing.
    let old = subject
        .old_object()
        .and_then(|o| crate::impact::field(o, OWNERS))
        .and_then(Json::as_array);
    if let Some(old) = old
        && sorted(old.iter().filter_map(|r| r.get("uid").and_then(Json::as_str)))
            == sorted(references.iter().map(|r| r.uid))
    {
        return false;
    }
    let mut absent = Vec::new();
    for reference in &references {
        match owner(view, subject, reference) {
            Owner::Present => return false,
            Owner::Absent => absent.push(format!(
                "{} {} (uid {})",
                reference.kind, reference.name, reference.uid
            )),
            Owner::Unknown(why) => {
                effects.note(format!(
                    "{}: {why}; the garbage collector keeps it as far as the model can tell",
                    subject.key
                ));
                return false;
            }
        }
    }
    let owners = absent.join(", ");
    effects.note(format!(
        "{} would name only owners that do not exist ({owners}): the garbage collector deletes it, and its dependents in the background",
        subject.key
    ));
    delete_with(
        view,
        subject,
        Propagation::Background,
        format!("garbage-collected: its new ownerReferences name no existing owner ({owners})"),
        effects,
    );
    true
}

fn sorted<'a>(uids: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut uids: Vec<&str> = uids.collect();
    uids.sort_unstable();
    uids
}

fn reference(item: &Json) -> Option<Reference<'_>> {
    let text = |key: &str| item.get(key).and_then(Json::as_str);
    let api_version = text("apiVersion")?;
    Some(Reference {
        group: api_version.split_once('/').map_or("", |(group, _)| group),
        kind: text("kind")?,
        name: text("name")?,
        uid: text("uid")?,
    })
}

/// Whether `reference`'s owner exists for the subject, as the collector looks it up.
fn owner(view: &dyn ClusterView, subject: &Subject, reference: &Reference) -> Owner {
    let Some(namespaced) = owner_scope(view, reference) else {
        return Owner::Unknown(format!(
            "whether its owner {} {} exists is not known to the model (no {} is in it)",
            reference.kind, reference.name, reference.kind
        ));
    };
    let dependent_namespace = &*subject.key.namespace;
    if namespaced && dependent_namespace.is_empty() {
        return Owner::Unknown(format!(
            "a cluster-scoped object cannot be owned by a namespaced {} (the collector reports OwnerRefInvalidNamespace)",
            reference.kind
        ));
    }
    let found = view.by_uid(reference.uid).is_some_and(|o| {
        *o.key.kind == *reference.kind
            && *o.key.name == *reference.name
            && (!namespaced || *o.key.namespace == *dependent_namespace)
    });
    if found { Owner::Present } else { Owner::Absent }
}

/// Whether the owner's kind is namespaced, when the model can vouch for its objects: a built-in
/// kind the model reads, or a custom kind with its CRD and an instance in the model.
fn owner_scope(view: &dyn ClusterView, reference: &Reference) -> Option<bool> {
    if let Some(namespaced) = read_into_model(reference.group, reference.kind) {
        return Some(namespaced);
    }
    let namespaced = view
        .of_kind("apiextensions.k8s.io", "CustomResourceDefinition")
        .into_iter()
        .find_map(|crd| match &crd.spec {
            Spec::CustomResourceDefinition {
                group,
                kind,
                namespaced,
                ..
            } if **group == *reference.group && **kind == *reference.kind => Some(*namespaced),
            _ => None,
        })?;
    (!view.of_kind(reference.group, reference.kind).is_empty()).then_some(namespaced)
}
