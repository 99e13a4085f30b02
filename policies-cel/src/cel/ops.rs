//! Operations on CEL values: field selection, indexing, equality and ordering (heterogeneous
//! numbers as cel-go), arithmetic with overflow checks, `in`, and map key order.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::cel::ast::BinOp;
use crate::cel::functions::native::map_key;
use crate::cel::upstream::objects::{Key, Map};
use crate::cel::value::type_name;
use crate::cel::{Budget, EvalError, Value};

pub(crate) fn key_value(key: &Key) -> Value {
    match key {
        Key::String(s) => Value::String(s.clone()),
        Key::Int(i) => Value::Int(*i),
        Key::Uint(u) => Value::UInt(*u),
        Key::Bool(b) => Value::Bool(*b),
    }
}

pub(crate) fn key_order(a: &Key, b: &Key) -> Ordering {
    let rank = |k: &Key| match k {
        Key::Bool(_) => 0,
        Key::Int(_) => 1,
        Key::Uint(_) => 2,
        Key::String(_) => 3,
    };
    match (a, b) {
        (Key::String(x), Key::String(y)) => x.cmp(y),
        (Key::Int(x), Key::Int(y)) => x.cmp(y),
        (Key::Uint(x), Key::Uint(y)) => x.cmp(y),
        (Key::Bool(x), Key::Bool(y)) => x.cmp(y),
        _ => rank(a).cmp(&rank(b)),
    }
}

/// The key of the other integer type with the same numeric value (`1` for `1u`, `1u` for `1`),
/// where one exists: CEL compares map keys numerically, so the two are the same key.
fn numeric_twin(key: &Key) -> Option<Key> {
    match key {
        Key::Int(i) => u64::try_from(*i).ok().map(Key::Uint),
        Key::Uint(u) => i64::try_from(*u).ok().map(Key::Int),
        Key::String(_) | Key::Bool(_) => None,
    }
}

/// Inserts a new entry, refusing a key the map already holds under CEL's key equality (`0` and
/// `0u` are one key). Gives the key back when it is a repeat, so the caller names it.
pub(crate) fn insert_new_key(
    map: &mut std::collections::HashMap<Key, Value>,
    key: Key,
    value: Value,
) -> Result<(), Key> {
    if map.contains_key(&key) || numeric_twin(&key).is_some_and(|twin| map.contains_key(&twin)) {
        return Err(key);
    }
    map.insert(key, value);
    Ok(())
}

pub(crate) fn select(operand: &Value, field: &Arc<String>) -> Result<Value, EvalError> {
    match operand {
        Value::Map(map) => field_of(map, field)
            .cloned()
            .ok_or_else(|| EvalError::NoSuchKey(field.to_string())),
        Value::Null => Err(EvalError::NoSuchKey(field.to_string())),
        other => Err(EvalError::overload(format!(
            "field selection '.{field}' on {}",
            type_name(other)
        ))),
    }
}

/// The most entries a map is searched through one by one for a field: below it, comparing
/// each key's text costs less than hashing the field (the `cel` crate's maps hash with SipHash),
/// and most maps a policy selects from are this small (an entry of `impact`, `request.kind`,
/// `metadata`).
const SCANNED_MAP: usize = 12;

/// The value of field `field` in `map` (the same as looking the key up).
pub(crate) fn field_of<'m>(map: &'m Map, field: &Arc<String>) -> Option<&'m Value> {
    if map.map.len() <= SCANNED_MAP {
        return map.map.iter().find_map(|(key, value)| match key {
            Key::String(name) if name == field => Some(value),
            _ => None,
        });
    }
    map.map.get(&Key::String(Arc::clone(field)))
}

pub(crate) fn missing(index: &Value) -> EvalError {
    match index {
        Value::String(s) => EvalError::NoSuchKey(s.to_string()),
        other => EvalError::NoSuchKey(crate::cel::value::display(other)),
    }
}

/// `container[index]`: `Ok(None)` when a list index is out of range or a map key is absent.
pub(crate) fn lookup(container: &Value, index: &Value) -> Result<Option<Value>, EvalError> {
    match container {
        Value::List(items) => {
            let position = match index {
                Value::Int(i) => *i,
                Value::UInt(u) => i64::try_from(*u).unwrap_or(i64::MAX),
                Value::Float(f) if f.fract() == 0.0 => *f as i64,
                other => {
                    return Err(EvalError::overload(format!(
                        "list index of type {}",
                        type_name(other)
                    )));
                }
            };
            Ok(usize::try_from(position).ok().and_then(|p| items.get(p)).cloned())
        }
        Value::Map(map) => {
            // Heterogeneous numeric keys: 1, 1u and 1.0 name the same entry.
            let key = match index {
                Value::Float(f)
                    if f.fract() == 0.0
                        && *f >= -9.223_372_036_854_776e18
                        && *f < 9.223_372_036_854_776e18 =>
                {
                    Key::Int(*f as i64)
                }
                Value::Float(f) if f.fract() == 0.0 && *f >= 0.0 && *f < 1.844_674_407_370_955_2e19 => {
                    Key::Uint(*f as u64)
                }
                Value::Float(_) => return Ok(None),
                other => map_key(other)?,
            };
            if let Some(found) = map.map.get(&key) {
                return Ok(Some(found.clone()));
            }
            let alternative = match key {
                Key::Int(i) => u64::try_from(i).ok().map(Key::Uint),
                Key::Uint(u) => i64::try_from(u).ok().map(Key::Int),
                _ => None,
            };
            Ok(alternative.and_then(|k| map.map.get(&k).cloned()))
        }
        Value::Null => Err(missing(index)),
        other => Err(EvalError::overload(format!("index into {}", type_name(other)))),
    }
}

pub(crate) fn binary(op: BinOp, left: Value, right: Value, budget: &Budget) -> Result<Value, EvalError> {
    match op {
        BinOp::Eq => Ok(Value::Bool(equal(&left, &right))),
        BinOp::Ne => Ok(Value::Bool(!equal(&left, &right))),
        BinOp::Lt => compare(&left, &right).map(|o| Value::Bool(o == Ordering::Less)),
        BinOp::Le => compare(&left, &right).map(|o| Value::Bool(o != Ordering::Greater)),
        BinOp::Gt => compare(&left, &right).map(|o| Value::Bool(o == Ordering::Greater)),
        BinOp::Ge => compare(&left, &right).map(|o| Value::Bool(o != Ordering::Less)),
        BinOp::In => contains(&right, &left, budget).map(Value::Bool),
        BinOp::Add => add(left, right, budget),
        BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => arithmetic(op, left, right),
    }
}

pub(crate) fn add(left: Value, right: Value, budget: &Budget) -> Result<Value, EvalError> {
    match (left, right) {
        (Value::Int(a), Value::Int(b)) => a
            .checked_add(b)
            .map(Value::Int)
            .ok_or(EvalError::Overflow("addition")),
        (Value::UInt(a), Value::UInt(b)) => a
            .checked_add(b)
            .map(Value::UInt)
            .ok_or(EvalError::Overflow("addition")),
        (Value::Float(a), Value::Float(b)) => Ok(Value::Float(a + b)),
        (Value::String(mut a), Value::String(b)) => {
            budget.charge_len(a.len() + b.len())?;
            if let Some(owned) = Arc::get_mut(&mut a) {
                owned.push_str(&b);
                return Ok(Value::String(a));
            }
            // Shared (a variable, a field of `impact`): one string of the joined length, not a
            // copy grown again.
            let mut joined = String::with_capacity(a.len() + b.len());
            joined.push_str(&a);
            joined.push_str(&b);
            Ok(Value::String(Arc::new(joined)))
        }
        (Value::List(mut a), Value::List(b)) => {
            budget.charge_len(a.len() + b.len())?;
            if a.is_empty() {
                return Ok(Value::List(b));
            }
            Arc::make_mut(&mut a).extend(b.iter().cloned());
            Ok(Value::List(a))
        }
        (Value::Bytes(mut a), Value::Bytes(b)) => {
            budget.charge_len(a.len() + b.len())?;
            Arc::make_mut(&mut a).extend_from_slice(&b);
            Ok(Value::Bytes(a))
        }
        (left, right) => temporal_arithmetic("+", left, right),
    }
}

fn arithmetic(op: BinOp, left: Value, right: Value) -> Result<Value, EvalError> {
    let overflow = |what| EvalError::Overflow(what);
    match (op, left, right) {
        (BinOp::Sub, Value::Int(a), Value::Int(b)) => {
            a.checked_sub(b).map(Value::Int).ok_or(overflow("subtraction"))
        }
        (BinOp::Sub, Value::UInt(a), Value::UInt(b)) => {
            a.checked_sub(b).map(Value::UInt).ok_or(overflow("subtraction"))
        }
        (BinOp::Sub, Value::Float(a), Value::Float(b)) => Ok(Value::Float(a - b)),
        (BinOp::Mul, Value::Int(a), Value::Int(b)) => {
            a.checked_mul(b).map(Value::Int).ok_or(overflow("multiplication"))
        }
        (BinOp::Mul, Value::UInt(a), Value::UInt(b)) => a
            .checked_mul(b)
            .map(Value::UInt)
            .ok_or(overflow("multiplication")),
        (BinOp::Mul, Value::Float(a), Value::Float(b)) => Ok(Value::Float(a * b)),
        (BinOp::Div, Value::Int(_), Value::Int(0)) | (BinOp::Div, Value::UInt(_), Value::UInt(0)) => {
            Err(EvalError::DivisionByZero)
        }
        (BinOp::Div, Value::Int(a), Value::Int(b)) => {
            a.checked_div(b).map(Value::Int).ok_or(overflow("division"))
        }
        (BinOp::Div, Value::UInt(a), Value::UInt(b)) => Ok(Value::UInt(a / b)),
        (BinOp::Div, Value::Float(a), Value::Float(b)) => Ok(Value::Float(a / b)),
        (BinOp::Rem, Value::Int(_), Value::Int(0)) | (BinOp::Rem, Value::UInt(_), Value::UInt(0)) => {
            Err(EvalError::ModulusByZero)
        }
        (BinOp::Rem, Value::Int(a), Value::Int(b)) => {
            a.checked_rem(b).map(Value::Int).ok_or(overflow("modulus"))
        }
        (BinOp::Rem, Value::UInt(a), Value::UInt(b)) => Ok(Value::UInt(a % b)),
        (BinOp::Sub, left, right) => temporal_arithmetic("-", left, right),
        (BinOp::Mul, left, right) => temporal_arithmetic("*", left, right),
        (BinOp::Div, left, right) => temporal_arithmetic("/", left, right),
        (_, left, right) => temporal_arithmetic("%", left, right),
    }
}

/// Timestamp and duration arithmetic (`+` and `-`), with cel-go's range checks; anything else
/// is an overload error naming both types.
fn temporal_arithmetic(symbol: &str, left: Value, right: Value) -> Result<Value, EvalError> {
    use chrono::Datelike;
    let in_range = |t: chrono::DateTime<chrono::FixedOffset>| (1..=9999).contains(&t.year()).then_some(t);
    let result = match (symbol, &left, &right) {
        ("+", Value::Duration(a), Value::Duration(b)) => a.checked_add(b).map(Value::Duration),
        ("-", Value::Duration(a), Value::Duration(b)) => a.checked_sub(b).map(Value::Duration),
        ("+", Value::Timestamp(t), Value::Duration(d)) | ("+", Value::Duration(d), Value::Timestamp(t)) => {
            t.checked_add_signed(*d).and_then(in_range).map(Value::Timestamp)
        }
        ("-", Value::Timestamp(t), Value::Duration(d)) => {
            t.checked_sub_signed(*d).and_then(in_range).map(Value::Timestamp)
        }
        ("-", Value::Timestamp(a), Value::Timestamp(b)) => Some(Value::Duration(a.signed_duration_since(*b))),
        _ => {
            return Err(EvalError::overload(format!(
                "{} {symbol} {}",
                type_name(&left),
                type_name(&right)
            )));
        }
    };
    let what = match (&left, &right) {
        (Value::Duration(_), Value::Duration(_)) => "duration arithmetic",
        _ => "timestamp arithmetic",
    };
    result.ok_or(EvalError::Overflow(what))
}

fn contains(container: &Value, item: &Value, budget: &Budget) -> Result<bool, EvalError> {
    match container {
        Value::List(items) => {
            budget.charge_len(items.len())?;
            Ok(items.iter().any(|candidate| equal(candidate, item)))
        }
        Value::Map(_) => Ok(lookup(container, item)?.is_some()),
        other => Err(EvalError::overload(format!("'in' on {}", type_name(other)))),
    }
}

/// CEL equality: numbers compare by value across int/uint/double, other types must match.
pub(crate) fn equal(left: &Value, right: &Value) -> bool {
    match (left, right) {
        (
            Value::Int(_) | Value::UInt(_) | Value::Float(_),
            Value::Int(_) | Value::UInt(_) | Value::Float(_),
        ) => compare_numbers(left, right) == Some(Ordering::Equal),
        (Value::String(a), Value::String(b)) => a == b,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Null, Value::Null) => true,
        (Value::Bytes(a), Value::Bytes(b)) => a == b,
        (Value::List(a), Value::List(b)) => {
            a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| equal(x, y))
        }
        (Value::Map(a), Value::Map(b)) => {
            // Keys match numerically across int and uint, as in `lookup`.
            a.map.len() == b.map.len()
                && a.map.iter().all(|(k, v)| {
                    lookup(right, &key_value(k))
                        .ok()
                        .flatten()
                        .is_some_and(|other| equal(v, &other))
                })
        }
        (Value::Duration(a), Value::Duration(b)) => a == b,
        (Value::Timestamp(a), Value::Timestamp(b)) => a == b,
        (Value::Opaque(_), Value::Opaque(_)) => left == right,
        _ => false,
    }
}

pub(crate) fn compare_numbers(left: &Value, right: &Value) -> Option<Ordering> {
    match (left, right) {
        (Value::Int(a), Value::Int(b)) => Some(a.cmp(b)),
        (Value::UInt(a), Value::UInt(b)) => Some(a.cmp(b)),
        (Value::Float(a), Value::Float(b)) => a.partial_cmp(b),
        (Value::Int(a), Value::UInt(b)) => Some(if *a < 0 {
            Ordering::Less
        } else {
            (*a as u64).cmp(b)
        }),
        (Value::UInt(a), Value::Int(b)) => Some(if *b < 0 {
            Ordering::Greater
        } else {
            a.cmp(&(*b as u64))
        }),
        (Value::Int(a), Value::Float(b)) => (*a as f64).partial_cmp(b),
        (Value::Float(a), Value::Int(b)) => a.partial_cmp(&(*b as f64)),
        (Value::UInt(a), Value::Float(b)) => (*a as f64).partial_cmp(b),
        (Value::Float(a), Value::UInt(b)) => a.partial_cmp(&(*b as f64)),
        _ => None,
    }
}

pub(crate) fn compare(left: &Value, right: &Value) -> Result<Ordering, EvalError> {
    let ordering = match (left, right) {
        (Value::String(a), Value::String(b)) => Some(a.cmp(b)),
        (Value::Bool(a), Value::Bool(b)) => Some(a.cmp(b)),
        (Value::Bytes(a), Value::Bytes(b)) => Some(a.cmp(b)),
        (Value::Duration(a), Value::Duration(b)) => Some(a.cmp(b)),
        (Value::Timestamp(a), Value::Timestamp(b)) => Some(a.cmp(b)),
        (Value::Opaque(_), Value::Opaque(_)) => left.partial_cmp(right),
        _ => compare_numbers(left, right),
    };
    ordering.ok_or_else(|| {
        EvalError::overload(format!(
            "comparison of {} and {}",
            type_name(left),
            type_name(right)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A map of `size` string keys `k0`.., with an int key and a bool key besides.
    fn map_of(size: usize) -> Map {
        let mut entries: HashMap<Key, Value> = (0..size)
            .map(|i| (Key::String(Arc::new(format!("k{i}"))), Value::Int(i as i64)))
            .collect();
        entries.insert(Key::Int(7), Value::Bool(true));
        entries.insert(Key::Bool(true), Value::Null);
        Map {
            map: Arc::new(entries),
        }
    }

    #[test]
    fn a_field_is_found_as_the_key_would_be_in_small_and_large_maps() {
        for size in [0, 1, SCANNED_MAP - 2, SCANNED_MAP, 40] {
            let map = map_of(size);
            for name in
                (0..size + 2)
                    .map(|i| format!("k{i}"))
                    .chain(["7".into(), "true".into(), String::new()])
            {
                let field = Arc::new(name);
                let expected = map.map.get(&Key::String(Arc::clone(&field)));
                assert_eq!(field_of(&map, &field), expected, "{field} in {size}");
            }
        }
    }
}
