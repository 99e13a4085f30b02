//! Converting between JSON (Kubernetes objects) and CEL values, and naming CEL types.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value as Json;

use crate::cel::Value;
use crate::cel::functions::types::CelType;
use crate::cel::upstream::objects::{Key, Map, OptionalValue};

/// A JSON document as a CEL value: integers stay `int` (or `uint` past i64), other numbers
/// become `double`, objects become maps with string keys.
pub fn from_json(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Int(i)
            } else if let Some(u) = n.as_u64() {
                Value::UInt(u)
            } else {
                Value::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Json::String(s) => Value::String(Arc::new(s.clone())),
        Json::Array(items) => Value::List(Arc::new(items.iter().map(from_json).collect())),
        Json::Object(entries) => {
            let map: HashMap<Key, Value> = entries
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), from_json(v)))
                .collect();
            Value::Map(Map { map: Arc::new(map) })
        }
    }
}

/// [`from_json`] of a document no longer needed as JSON: its strings move into the CEL value
/// instead of being copied.
pub fn from_json_owned(json: Json) -> Value {
    match json {
        Json::String(s) => Value::String(Arc::new(s)),
        Json::Array(items) => Value::List(Arc::new(items.into_iter().map(from_json_owned).collect())),
        Json::Object(entries) => {
            let map: HashMap<Key, Value> = entries
                .into_iter()
                .map(|(k, v)| (Key::String(Arc::new(k)), from_json_owned(v)))
                .collect();
            Value::Map(Map { map: Arc::new(map) })
        }
        scalar => from_json(&scalar),
    }
}

/// A CEL value as JSON, the way Kubernetes prints CEL results: bytes as base64, durations as
/// `"1h2m3s"`-style strings, timestamps in RFC 3339, optionals as their value or null, and
/// map keys as strings (sorted, for stable output).
pub fn to_json(value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::UInt(u) => Json::from(*u),
        Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or_else(|| Json::String(f.to_string()), Json::Number)
        }
        Value::String(s) => Json::String(s.to_string()),
        Value::Bytes(b) => Json::String(base64_encode(b)),
        Value::List(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Map(map) => {
            let mut entries: Vec<(String, Json)> =
                map.map.iter().map(|(k, v)| (key_string(k), to_json(v))).collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Json::Object(entries.into_iter().collect())
        }
        Value::Duration(d) => Json::String(format_duration(d)),
        Value::Timestamp(t) => Json::String(t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)),
        Value::Opaque(o) => match (o.downcast_ref::<OptionalValue>(), o.downcast_ref::<CelType>()) {
            (Some(opt), _) => opt.value().map_or(Json::Null, to_json),
            (_, Some(t)) => Json::String(t.name().to_owned()),
            _ => Json::String(format!("<{}>", o.runtime_type_name())),
        },
        Value::Function(name, _) => Json::String(format!("<function {name}>")),
    }
}

/// The CEL type name of a value (`int`, `string`, `map`, `optional_type`, ...).
pub fn type_name(value: &Value) -> String {
    match value {
        Value::Null => "null_type".into(),
        Value::Bool(_) => "bool".into(),
        Value::Int(_) => "int".into(),
        Value::UInt(_) => "uint".into(),
        Value::Float(_) => "double".into(),
        Value::String(_) => "string".into(),
        Value::Bytes(_) => "bytes".into(),
        Value::List(_) => "list".into(),
        Value::Map(_) => "map".into(),
        Value::Duration(_) => "google.protobuf.Duration".into(),
        Value::Timestamp(_) => "google.protobuf.Timestamp".into(),
        Value::Opaque(o) => o.runtime_type_name().to_string(),
        Value::Function(..) => "function".into(),
    }
}

/// A map key as text.
pub fn key_string(key: &Key) -> String {
    match key {
        Key::String(s) => s.to_string(),
        Key::Int(i) => i.to_string(),
        Key::Uint(u) => u.to_string(),
        Key::Bool(b) => b.to_string(),
    }
}

/// A short, human rendering of a value for messages (CEL literal syntax for scalars).
pub fn display(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        Value::UInt(u) => format!("{u}u"),
        other => to_json(other).to_string(),
    }
}

/// The string form `string(duration)` gives: seconds with up to nine decimals, e.g. `"90s"`.
pub fn format_duration(d: &chrono::Duration) -> String {
    let nanos = i128::from(d.num_seconds()) * 1_000_000_000 + i128::from(d.subsec_nanos());
    let sign = if nanos < 0 { "-" } else { "" };
    let secs = nanos.unsigned_abs() / 1_000_000_000;
    let frac = nanos.unsigned_abs() % 1_000_000_000;
    if frac == 0 {
        format!("{sign}{secs}s")
    } else {
        let digits = format!("{frac:09}");
        format!("{sign}{secs}.{}s", digits.trim_end_matches('0'))
    }
}

fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_round_trips_through_cel() {
        let doc = json!({"a": [1, 2.5, "x", null, true], "b": {"c": 18446744073709551615u64}});
        assert_eq!(to_json(&from_json(&doc)), doc);
    }

    #[test]
    fn owned_documents_convert_as_borrowed_ones() {
        let doc = json!({"a": [1, 2.5, "x", null, true], "b": {"c": 18446744073709551615u64, "d": -3}});
        assert_eq!(from_json_owned(doc.clone()), from_json(&doc));
    }

    #[test]
    fn bytes_are_base64() {
        assert_eq!(
            to_json(&Value::Bytes(Arc::new(b"hello".to_vec()))),
            json!("aGVsbG8=")
        );
    }

    #[test]
    fn durations_print_in_seconds() {
        let d = |ms: i64| format_duration(&chrono::Duration::milliseconds(ms));
        assert_eq!(d(3_660_000), "3660s");
        assert_eq!(d(1500), "1.5s");
        assert_eq!(d(-100), "-0.1s");
        assert_eq!(d(-1500), "-1.5s");
        assert_eq!(d(0), "0s");
    }

    #[test]
    fn type_names_follow_cel() {
        assert_eq!(type_name(&from_json(&json!(1.5))), "double");
        assert_eq!(type_name(&from_json(&json!({}))), "map");
    }
}
