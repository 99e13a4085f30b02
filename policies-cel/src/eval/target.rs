//! The name of the object a request acts on. kube-apiserver names it in `request.name`, except in
//! one case: a `deletecollection` is judged object by object, one DELETE review per object, each
//! with an empty `name` and the object as `oldObject` (the handler's static admission attributes
//! carry no name). Everything that finds the object a request acts on — the impact estimate, the
//! gateway's self-protection, the decision log — reads the name here; CEL's `request.name` stays
//! what kube-apiserver sent, as Kubernetes' own policies see it.

use std::borrow::Cow;

use kube_core::DynamicObject;
use kube_core::admission::{AdmissionRequest, Operation};

use crate::eval::wire::WireObject;

/// `request.name`, or for a DELETE without one (an object of a `deletecollection`) the name in
/// `oldObject`; empty when neither has one (a CREATE with `generateName`).
pub(crate) fn target_name<'a>(
    admission: &'a AdmissionRequest<DynamicObject>,
    old_object: &'a WireObject,
) -> Cow<'a, str> {
    if !admission.name.is_empty() || !matches!(admission.operation, Operation::Delete) {
        return Cow::Borrowed(&admission.name);
    }
    old_object
        .str_at(&["metadata", "name"])
        .unwrap_or(Cow::Borrowed(""))
}
