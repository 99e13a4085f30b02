//! The parameter objects of a policy set: the JSON documents as loaded, and their CEL values,
//! converted as each object is added (at load, never on an admission request). Both are shared
//! behind an `Arc`, so a clone of the set (the gateway's impact-free part) costs nothing and keeps
//! the converted values.

use std::ops::Deref;
use std::sync::Arc;

use serde_json::Value as Json;

use crate::cel::Value;
use crate::cel::value::from_json;

/// Parameter objects (from `--params` files or the cluster). Reads as a slice of JSON objects.
#[derive(Debug, Clone, Default)]
pub struct ParamObjects {
    inner: Arc<Inner>,
}

#[derive(Debug, Clone, Default)]
struct Inner {
    objects: Vec<Json>,
    /// `objects` as CEL values, in the same order.
    values: Vec<Value>,
}

impl ParamObjects {
    /// Adds an object, converting it to its CEL value.
    pub fn push(&mut self, object: Json) {
        let inner = Arc::make_mut(&mut self.inner);
        inner.values.push(from_json(&object));
        inner.objects.push(object);
    }

    /// The CEL value of the object at `index`.
    pub fn value(&self, index: usize) -> Option<&Value> {
        self.inner.values.get(index)
    }

    /// Every object with its CEL value, in order.
    pub fn with_values(&self) -> impl Iterator<Item = (&Json, &Value)> {
        self.inner.objects.iter().zip(&self.inner.values)
    }
}

impl Deref for ParamObjects {
    type Target = [Json];

    fn deref(&self) -> &[Json] {
        &self.inner.objects
    }
}

impl From<Vec<Json>> for ParamObjects {
    fn from(objects: Vec<Json>) -> Self {
        let values = objects.iter().map(from_json).collect();
        Self {
            inner: Arc::new(Inner { objects, values }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Loader;
    use serde_json::json;

    #[test]
    fn values_follow_the_objects() {
        let mut params = ParamObjects::from(vec![json!({"limit": 1})]);
        assert_eq!(params.value(0), Some(&from_json(&json!({"limit": 1}))));
        params.push(json!({"limit": 2}));
        assert_eq!(params.len(), 2);
        assert_eq!(params.value(1), Some(&from_json(&json!({"limit": 2}))));
        assert_eq!(params.value(2), None);
    }

    #[test]
    fn values_are_converted_at_load_and_shared_by_clones() {
        let set = Loader::new()
            .add_params_str(
                "params.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits}\ndata: {max: '5'}\n",
            )
            .unwrap()
            .finish()
            .unwrap();
        // Converted already: nothing is left for the first request to do.
        assert_eq!(set.params.inner.values.len(), 1);
        assert_eq!(set.params.value(0), Some(&from_json(&set.params[0])));
        let clone = set.params.clone();
        assert!(Arc::ptr_eq(&clone.inner, &set.params.inner));
        let pairs: Vec<_> = clone.with_values().collect();
        assert_eq!(pairs, [(&set.params[0], &from_json(&set.params[0]))]);
    }
}
