//! The parameter objects of a policy set: the JSON documents as loaded, and their CEL values,
//! converted once per set (on first use) instead of once per admission request.

use std::ops::Deref;
use std::sync::OnceLock;

use serde_json::Value as Json;

use crate::cel::Value;
use crate::cel::value::from_json;

/// Parameter objects (from `--params` files or the cluster). Reads as a slice of JSON objects.
#[derive(Debug, Clone, Default)]
pub struct ParamObjects {
    objects: Vec<Json>,
    /// `objects` as CEL values, in the same order; reset whenever `objects` changes.
    values: OnceLock<Vec<Value>>,
}

impl ParamObjects {
    /// Adds an object.
    pub fn push(&mut self, object: Json) {
        self.objects.push(object);
        self.values = OnceLock::new();
    }

    /// The CEL value of the object at `index`.
    pub fn value(&self, index: usize) -> Option<&Value> {
        self.values
            .get_or_init(|| self.objects.iter().map(from_json).collect())
            .get(index)
    }
}

impl Deref for ParamObjects {
    type Target = [Json];

    fn deref(&self) -> &[Json] {
        &self.objects
    }
}

impl From<Vec<Json>> for ParamObjects {
    fn from(objects: Vec<Json>) -> Self {
        Self {
            objects,
            values: OnceLock::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
}
