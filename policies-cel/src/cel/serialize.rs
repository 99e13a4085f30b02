//! Any `Serialize` type straight into a CEL value: what `from_json(&serde_json::to_value(x))`
//! gives (integers as `int`, or `uint` past i64; non-finite floats as null; maps with string
//! keys), without building the JSON tree in between. The impact estimate reaches CEL this way.

use std::collections::HashMap;
use std::sync::Arc;

use serde::ser::{self, Serialize};

use crate::cel::Value;
use crate::cel::upstream::objects::{Key, Map};

/// Why a value has no CEL form (a map key that is not text, a number past u64).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SerializeError(String);

impl ser::Error for SerializeError {
    fn custom<T: std::fmt::Display>(message: T) -> Self {
        Self(message.to_string())
    }
}

/// `value` as a CEL value.
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, SerializeError> {
    value.serialize(Serializer)
}

/// `text` as a CEL string (a shared one when short: [`shared_text`]).
pub(crate) fn string(text: &str) -> Value {
    Value::String(shared_text(text))
}

/// `text` as a CEL string. An estimate repeats its short strings (its struct field names; a
/// namespace, a workload's name, in every entry that names an object; the keys of flattened
/// structs) and so do the estimates after it, so each thread keeps the strings it made, in a
/// table probed from a hash of their text (a few neighbouring slots, so that two strings whose
/// hashes meet do not evict each other on every request): a repeated string costs a comparison
/// and a reference count instead of two allocations and a copy. Longer texts are made anew.
pub(crate) fn shared_text(text: &str) -> Arc<String> {
    const SLOTS: usize = 1024;
    const PROBES: usize = 4;
    const LONGEST: usize = 64;
    thread_local! {
        static TEXTS: std::cell::RefCell<Vec<Option<Arc<String>>>> =
            std::cell::RefCell::new(vec![None; SLOTS]);
    }
    if text.len() > LONGEST {
        return Arc::new(text.to_owned());
    }
    // FNV-1a over the bytes.
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    let first = (hash % SLOTS as u64) as usize;
    TEXTS.with_borrow_mut(|texts| {
        let mut free = None;
        for probe in 0..PROBES {
            let slot = (first + probe) % SLOTS;
            match &texts[slot] {
                Some(kept) if kept.as_str() == text => return kept.clone(),
                Some(_) => {}
                None => {
                    free.get_or_insert(slot);
                }
            }
        }
        let made = Arc::new(text.to_owned());
        texts[free.unwrap_or(first)] = Some(made.clone());
        made
    })
}

/// `entries` as a CEL map.
pub(crate) fn map(entries: HashMap<Key, Value>) -> Value {
    Value::Map(Map {
        map: Arc::new(entries),
    })
}

/// An unsigned number as serde gives it: an `int`, or a `uint` past i64.
pub(crate) fn unsigned(number: u64) -> Value {
    i64::try_from(number).map_or(Value::UInt(number), Value::Int)
}

/// A variant wrapping its content, as serde_json writes it: `{"Variant": content}`.
fn tagged(variant: &str, content: Value) -> Value {
    map(HashMap::from([(
        Key::String(Arc::new(variant.to_owned())),
        content,
    )]))
}

struct Serializer;

/// The entries a map of unknown length is given room for.
const UNKNOWN_MAP_LEN: usize = 8;

impl ser::Serializer for Serializer {
    type Ok = Value;
    type Error = SerializeError;
    type SerializeSeq = Seq;
    type SerializeTuple = Seq;
    type SerializeTupleStruct = Seq;
    type SerializeTupleVariant = Seq;
    type SerializeMap = Entries;
    type SerializeStruct = Entries;
    type SerializeStructVariant = Entries;

    fn serialize_bool(self, v: bool) -> Result<Value, SerializeError> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, SerializeError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, SerializeError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, SerializeError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, SerializeError> {
        Ok(Value::Int(v))
    }
    fn serialize_i128(self, v: i128) -> Result<Value, SerializeError> {
        if let Ok(v) = i64::try_from(v) {
            Ok(Value::Int(v))
        } else {
            u64::try_from(v)
                .map(Value::UInt)
                .map_err(|_| SerializeError(format!("{v} is out of range for a CEL number")))
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Value, SerializeError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, SerializeError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, SerializeError> {
        Ok(Value::Int(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, SerializeError> {
        Ok(unsigned(v))
    }
    fn serialize_u128(self, v: u128) -> Result<Value, SerializeError> {
        u64::try_from(v)
            .map(unsigned)
            .map_err(|_| SerializeError(format!("{v} is out of range for a CEL number")))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, SerializeError> {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Value, SerializeError> {
        Ok(if v.is_finite() {
            Value::Float(v)
        } else {
            Value::Null
        })
    }
    fn serialize_char(self, v: char) -> Result<Value, SerializeError> {
        Ok(Value::String(Arc::new(v.to_string())))
    }
    fn serialize_str(self, v: &str) -> Result<Value, SerializeError> {
        Ok(string(v))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, SerializeError> {
        Ok(Value::List(Arc::new(
            v.iter().map(|b| Value::Int((*b).into())).collect(),
        )))
    }
    fn serialize_none(self) -> Result<Value, SerializeError> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, SerializeError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, SerializeError> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, SerializeError> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value, SerializeError> {
        Ok(string(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value, SerializeError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, SerializeError> {
        Ok(tagged(variant, value.serialize(self)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq, SerializeError> {
        Ok(Seq {
            items: Vec::with_capacity(len.unwrap_or_default()),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq, SerializeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq, SerializeError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Seq, SerializeError> {
        Ok(Seq {
            items: Vec::with_capacity(len),
            variant: Some(variant),
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Entries, SerializeError> {
        // An unknown length is a struct with a flattened field (`Deletion`, `WorkloadEffect`):
        // room for a few entries spares the table its regrowths.
        Ok(Entries::new(len.unwrap_or(UNKNOWN_MAP_LEN), None))
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Entries, SerializeError> {
        Ok(Entries::new(len, None))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Entries, SerializeError> {
        Ok(Entries::new(len, Some(variant)))
    }
}

struct Seq {
    items: Vec<Value>,
    variant: Option<&'static str>,
}

impl Seq {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerializeError> {
        self.items.push(value.serialize(Serializer)?);
        Ok(())
    }

    fn finish(self) -> Value {
        let list = Value::List(Arc::new(self.items));
        match self.variant {
            Some(variant) => tagged(variant, list),
            None => list,
        }
    }
}

/// The four sequence traits, which differ only in their names: each element is pushed, the
/// end makes the list.
macro_rules! sequence {
    ($($trait:ident :: $method:ident),+ $(,)?) => {$(
        impl ser::$trait for Seq {
            type Ok = Value;
            type Error = SerializeError;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerializeError> {
                self.push(value)
            }
            fn end(self) -> Result<Value, SerializeError> {
                Ok(self.finish())
            }
        }
    )+};
}

sequence!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
);

struct Entries {
    entries: HashMap<Key, Value>,
    next_key: Option<Key>,
    variant: Option<&'static str>,
}

impl Entries {
    fn new(len: usize, variant: Option<&'static str>) -> Self {
        Self {
            entries: HashMap::with_capacity(len),
            next_key: None,
            variant,
        }
    }

    fn insert<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), SerializeError> {
        self.entries
            .insert(Key::String(shared_text(key)), value.serialize(Serializer)?);
        Ok(())
    }

    fn finish(self) -> Value {
        let value = map(self.entries);
        match self.variant {
            Some(variant) => tagged(variant, value),
            None => value,
        }
    }
}

impl ser::SerializeMap for Entries {
    type Ok = Value;
    type Error = SerializeError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerializeError> {
        let key = match key.serialize(Serializer)? {
            Value::String(text) => text,
            Value::Int(number) => Arc::new(number.to_string()),
            Value::UInt(number) => Arc::new(number.to_string()),
            Value::Bool(flag) => Arc::new(flag.to_string()),
            _ => return Err(SerializeError("a map key must be text".into())),
        };
        self.next_key = Some(Key::String(key));
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), SerializeError> {
        let key = self
            .next_key
            .take()
            .ok_or_else(|| SerializeError("a map value without its key".into()))?;
        self.entries.insert(key, value.serialize(Serializer)?);
        Ok(())
    }
    fn end(self) -> Result<Value, SerializeError> {
        Ok(self.finish())
    }
}

/// The two struct traits, which differ only in their names: each field is an entry.
macro_rules! fields {
    ($($trait:ident),+ $(,)?) => {$(
        impl ser::$trait for Entries {
            type Ok = Value;
            type Error = SerializeError;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), SerializeError> {
                self.insert(key, value)
            }
            fn end(self) -> Result<Value, SerializeError> {
                Ok(self.finish())
            }
        }
    )+};
}

fields!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::value::from_json;
    use serde_json::json;

    /// A short text is shared while its slot keeps it; texts whose hashes share a slot each
    /// still get their own text, and long ones are made anew.
    #[test]
    fn short_texts_are_shared_and_never_mixed_up() {
        let first = shared_text("databases");
        assert!(Arc::ptr_eq(&first, &shared_text("databases")));
        let texts: Vec<String> = (0..2000).map(|i| format!("name-{i}")).collect();
        for round in 0..2 {
            for text in &texts {
                assert_eq!(*shared_text(text), *text, "round {round}");
            }
        }
        let long = "x".repeat(65);
        assert!(!Arc::ptr_eq(&shared_text(&long), &shared_text(&long)));
        assert_eq!(*shared_text(&long), long);
        assert_eq!(*shared_text("databases"), "databases");
    }

    /// A working set of the size an estimate uses (its field names and names) stays shared
    /// from one request to the next: strings whose hashes meet take neighbouring slots instead
    /// of evicting each other.
    #[test]
    fn a_working_set_of_names_stays_shared() {
        let names: Vec<String> = (0..200).map(|i| format!("field{i}")).collect();
        let first: Vec<Arc<String>> = names.iter().map(|name| shared_text(name)).collect();
        for (name, kept) in names.iter().zip(&first) {
            assert!(Arc::ptr_eq(kept, &shared_text(name)), "{name} was evicted");
        }
    }

    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Inner {
        ready_before: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        node: Option<String>,
    }

    #[derive(serde::Serialize)]
    enum Shape {
        Unit,
        Wrapped(i32),
        Pair(i32, i32),
        Named { a: u8 },
    }

    #[derive(serde::Serialize)]
    struct Outer {
        #[serde(flatten)]
        inner: Inner,
        big: u64,
        small: i8,
        ratio: f64,
        infinite: f64,
        list: Vec<String>,
        keyed: std::collections::BTreeMap<u32, bool>,
        shapes: Vec<Shape>,
        tuple: (i32, String),
        nothing: (),
    }

    #[test]
    fn values_equal_the_json_round_trip() {
        let outer = Outer {
            inner: Inner {
                ready_before: 3,
                node: None,
            },
            big: u64::MAX,
            small: -4,
            ratio: 0.5,
            infinite: f64::INFINITY,
            list: vec!["a".into(), "b".into()],
            keyed: [(1, true), (2, false)].into(),
            shapes: vec![
                Shape::Unit,
                Shape::Wrapped(1),
                Shape::Pair(1, 2),
                Shape::Named { a: 7 },
            ],
            tuple: (1, "x".into()),
            nothing: (),
        };
        let through_json = from_json(&serde_json::to_value(&outer).unwrap());
        assert_eq!(to_value(&outer).unwrap(), through_json);
        assert_eq!(
            to_value(&json!({"k": [1, 2.5, null]})).unwrap(),
            from_json(&json!({"k": [1, 2.5, null]}))
        );
    }
}
