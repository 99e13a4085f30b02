//! A model to project one object into, outside the cluster's model: a request's new spec, an
//! object a CREATE would add. Projection interns strings and shares label lists through a
//! model; a fresh model for each request cost its construction, its first allocations and its
//! drop (a scale-down's estimate spent about 2% of its instructions there). Each thread keeps
//! one, emptied after every use, so nothing projected stays behind.

use std::cell::RefCell;

use crate::cluster::ClusterModel;

thread_local! {
    static SCRATCH: RefCell<ClusterModel> = RefCell::new(ClusterModel::new());
}

/// `project` run with a model that holds nothing before and keeps nothing after: the thread's
/// scratch model, emptied afterwards, or a fresh one when the thread's is in use already.
pub fn with_scratch_model<T>(project: impl FnOnce(&mut ClusterModel) -> T) -> T {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut model) => {
            let projected = project(&mut model);
            model.empty();
            projected
        }
        Err(_) => project(&mut ClusterModel::new()),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;
    use crate::cluster::project;

    #[test]
    fn nothing_projected_stays_behind_and_a_nested_use_gets_a_model_of_its_own() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "shop", "uid": "u", "labels": {"app": "web"}}});
        let object = with_scratch_model(|model| {
            let inner = with_scratch_model(|inner| {
                project(&pod, inner).unwrap();
                inner.strings_len()
            });
            assert!(
                inner > 0,
                "the nested projection interned into a model of its own"
            );
            let object = project(&pod, model).unwrap();
            model.insert(object.clone());
            assert_eq!(model.len(), 1);
            object
        });
        assert_eq!(&*object.key.name, "p");
        SCRATCH.with_borrow(|model| {
            assert_eq!((model.len(), model.strings_len()), (0, 0), "emptied after use");
        });
    }
}
