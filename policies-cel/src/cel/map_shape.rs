//! CEL maps whose keys are known in advance (each part of an impact estimate: a summary, a pod
//! stopped, a volume lost), built by cloning a template instead of inserting key by key.
//!
//! The `cel` crate's maps are std `HashMap`s, hashed with SipHash: inserting an entry hashes its
//! key (about 150 instructions for a short name) and an estimate of a few dozen entries spent a
//! tenth of a judged request inserting them. A clone of a map copies its table as it is, entry
//! for entry in the same places, so the clone's entries come back in the template's order and
//! each takes its value without a hash. The key each place holds is checked (the same shared
//! text as the template's: a pointer comparison), and a map whose layout were ever different is
//! built by inserting instead, so the result never depends on how the table lays itself out.

use std::collections::HashMap;
use std::sync::Arc;

use crate::cel::Value;
use crate::cel::upstream::objects::{Key, Map};

/// A template of a CEL map with fixed keys.
#[derive(Debug)]
pub(crate) struct MapShape {
    /// Every key, each under `null`.
    template: HashMap<Key, Value>,
    /// The keys, in the order values are given.
    keys: Vec<Arc<String>>,
    /// For each entry of the template, in the order the template's entries iterate, the place of
    /// its key in `keys`.
    order: Vec<usize>,
}

impl MapShape {
    /// The shape of a map with these keys (distinct), in the order values will be given.
    pub(crate) fn new(names: &[&str]) -> Self {
        let keys: Vec<Arc<String>> = names.iter().map(|name| Arc::new((*name).to_owned())).collect();
        let template: HashMap<Key, Value> = keys
            .iter()
            .map(|key| (Key::String(key.clone()), Value::Null))
            .collect();
        let order = template
            .keys()
            .map(|key| {
                keys.iter()
                    .position(|known| matches!(key, Key::String(k) if Arc::ptr_eq(k, known)))
                    .unwrap_or(usize::MAX)
            })
            .collect();
        Self {
            template,
            keys,
            order,
        }
    }

    /// The map with `values[i]` under the `i`-th key; a `None` leaves its key out. `values`
    /// holds one value per key (a missing one is left out too). A shape of more than 64 keys is
    /// built by inserting.
    pub(crate) fn build(&self, values: &mut [Option<Value>]) -> Value {
        if self.keys.len() > u64::BITS as usize {
            return self.inserted(values);
        }
        let mut map = self.template.clone();
        let laid_out_alike = map.keys().zip(&self.order).all(|(key, &place)| {
            matches!((key, self.keys.get(place)), (Key::String(key), Some(known)) if Arc::ptr_eq(key, known))
        });
        if !laid_out_alike {
            return self.inserted(values);
        }
        // The places whose value is left out (at most 64 keys: above).
        let mut absent = 0_u64;
        for (slot, &place) in map.values_mut().zip(&self.order) {
            match values.get_mut(place).and_then(Option::take) {
                Some(value) => *slot = value,
                None => absent |= 1 << place,
            }
        }
        // Only the keys left out are hashed (an optional field, a cluster-scoped target).
        for (place, key) in self.keys.iter().enumerate() {
            if absent & (1 << place) != 0 {
                map.remove(&Key::String(key.clone()));
            }
        }
        Value::Map(Map { map: Arc::new(map) })
    }

    /// The same map, built by inserting each entry.
    fn inserted(&self, values: &mut [Option<Value>]) -> Value {
        let mut map = HashMap::with_capacity(self.keys.len());
        for (key, value) in self.keys.iter().zip(values.iter_mut()) {
            if let Some(value) = value.take() {
                map.insert(Key::String(key.clone()), value);
            }
        }
        Value::Map(Map { map: Arc::new(map) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::value::to_json;
    use serde_json::json;

    fn int(n: i64) -> Option<Value> {
        Some(Value::Int(n))
    }

    #[test]
    fn each_value_lands_under_its_own_key() {
        let names: Vec<String> = (0..70).map(|i| format!("key{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        for len in [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 40, 64, 65, 70] {
            let shape = MapShape::new(&names[..len]);
            let mut values: Vec<Option<Value>> = (0..len as i64).map(int).collect();
            let built = shape.build(&mut values);
            let expected: serde_json::Map<String, serde_json::Value> =
                (0..len).map(|i| (format!("key{i}"), json!(i))).collect();
            assert_eq!(to_json(&built), serde_json::Value::Object(expected), "{len} keys");
            // Equal to the map inserted key by key, and a second build is a fresh map.
            let mut again: Vec<Option<Value>> = (0..len as i64).map(int).collect();
            assert_eq!(built, shape.inserted(&mut again));
            if len > 0 {
                let mut other: Vec<Option<Value>> = (0..len as i64).map(|i| int(i + 1)).collect();
                assert_ne!(shape.build(&mut other), built, "{len} keys");
            }
        }
    }

    #[test]
    fn a_value_left_out_leaves_its_key_out() {
        let shape = MapShape::new(&["kind", "namespace", "name"]);
        let mut values = [
            Some(Value::String(Arc::new("Namespace".into()))),
            None,
            Some(Value::String(Arc::new("db".into()))),
        ];
        assert_eq!(
            to_json(&shape.build(&mut values)),
            json!({"kind": "Namespace", "name": "db"})
        );
        assert_eq!(to_json(&shape.build(&mut [None, None, None])), json!({}));
        assert_eq!(
            to_json(&shape.build(&mut [int(1)])),
            json!({"kind": 1}),
            "values short"
        );
    }

    #[test]
    fn a_template_laid_out_otherwise_is_built_by_inserting() {
        let mut shape = MapShape::new(&["a", "b", "c"]);
        // As if a clone iterated its last two entries in another order than the template's.
        shape.order.swap(1, 2);
        let built = shape.build(&mut [int(1), int(2), int(3)]);
        assert_eq!(to_json(&built), json!({"a": 1, "b": 2, "c": 3}));
    }
}
