//! The model lagging behind the API server: the gateway's model is fed by watches, so an object
//! created a moment ago, or one whose watch is reconnecting after kube-apiserver restarted, may
//! not be in it yet while its pods and claims already are. A DELETE or UPDATE carries the stored
//! object as `oldObject` (with its uid): when the model does not hold the object the request
//! names, the estimate runs on the model with that object added ([`Layered`]), so what depends
//! on it or is selected by it is still found.

use crate::cluster::api::kinds::read_into_model;
use crate::cluster::object::builtin_group;
use crate::cluster::{ClusterModel, ClusterView, Layered, project};
use crate::impact::subject::Subject;

/// The model with the object the request names added from its `oldObject`; `None` when the model
/// holds the object, or when the request carries no stored `oldObject` of that object (none, one
/// that cannot be read, another object's — a `scale` subresource's Scale — or a stand-in
/// without a uid, such as a what-if's), and for a built-in kind the model never reads (a
/// ServiceAccount, a PriorityClass: absent by design, not lagging).
pub(crate) fn caught_up<'a>(view: &'a dyn ClusterView, subject: &Subject) -> Option<Layered<'a>> {
    let key = &subject.key;
    let never_read =
        || builtin_group(&key.kind) == Some(&*key.group) && read_into_model(&key.group, &key.kind).is_none();
    // The model lookup first: it answers nearly every request, the kind tables the rest.
    if view.get(key).is_some() || never_read() {
        return None;
    }
    let json = subject.old_object().filter(|j| !j.is_null())?;
    let mut added = ClusterModel::new();
    let object = project(json, &mut added).ok()?;
    if object.key != subject.key || object.uid.is_none() {
        return None;
    }
    added.insert(object);
    Some(Layered::new(view, added))
}
