//! The interpreter: walks a lowered [`Node`] tree with CEL's semantics (commutative error
//! absorption in `&&`/`||`, heterogeneous numeric equality, optionals), charging every step to
//! the [`Budget`].

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

use crate::cel::ast::{BinOp, Comprehension, Kind, Node};
use crate::cel::functions::native::{as_optional_value, map_key, optional};
use crate::cel::functions::{self, bridge::BridgeCall};
use crate::cel::upstream::objects::{Key, Map};
use crate::cel::value::type_name;
use crate::cel::{Activation, Budget, EvalError, Value};

/// Evaluates `node` against `activation`.
pub(crate) fn eval(node: &Node, activation: &dyn Activation, budget: &Budget) -> Result<Value, EvalError> {
    let mut frame = Frame {
        activation,
        budget,
        locals: Vec::new(),
    };
    frame.eval(node)
}

struct Frame<'a> {
    activation: &'a dyn Activation,
    budget: &'a Budget,
    /// Comprehension and `cel.bind` variables; slot numbers were assigned at compile time.
    locals: Vec<Value>,
}

impl Frame<'_> {
    fn local(&self, slot: usize) -> Result<Value, EvalError> {
        match self.locals.get(slot) {
            Some(Value::Opaque(o)) if let Some(ErrorValue(error)) = o.downcast_ref::<ErrorValue>() => {
                Err(error.clone())
            }
            Some(value) => Ok(value.clone()),
            None => Err(EvalError::Other(format!("internal: local #{slot} unset"))),
        }
    }

    fn bool(&mut self, node: &Node) -> Result<bool, EvalError> {
        match self.eval(node)? {
            Value::Bool(b) => Ok(b),
            other => Err(EvalError::overload(format!(
                "expected bool, found {}",
                type_name(&other)
            ))),
        }
    }

    fn eval(&mut self, node: &Node) -> Result<Value, EvalError> {
        self.budget.charge(1)?;
        match &node.kind {
            Kind::Const(value) => Ok(value.clone()),
            Kind::Root(root) => self.activation.root(*root),
            Kind::Variable(index) => self.activation.variable(*index, self.budget),
            Kind::Local(slot) => self.local(*slot),
            Kind::AppendToLocal { slot, elements } => {
                let mut accu = match self.locals.get_mut(*slot) {
                    Some(value) => std::mem::replace(value, Value::Null),
                    None => return Err(EvalError::Other(format!("internal: local #{slot} unset"))),
                };
                let mut new = Vec::with_capacity(elements.len());
                for element in elements {
                    new.push(self.eval(element)?);
                }
                match &mut accu {
                    Value::List(list) => {
                        self.budget.charge_len(new.len())?;
                        Arc::make_mut(list).extend(new);
                        Ok(accu)
                    }
                    _ => add(accu, Value::List(Arc::new(new)), self.budget),
                }
            }
            Kind::Select { operand, field } => {
                let operand = self.eval(operand)?;
                // Selecting from an optional (`a.?b.c`) stays optional: none when absent.
                if let Some(opt) = as_optional_value(&operand) {
                    return Ok(match opt.value() {
                        Some(Value::Map(map)) => optional(map.map.get(&Key::String(field.clone())).cloned()),
                        Some(Value::Null) => optional(None),
                        Some(other) => return select(other, field),
                        None => operand.clone(),
                    });
                }
                select(&operand, field)
            }
            Kind::Has { operand, field } => match self.eval(operand)? {
                Value::Map(map) => Ok(Value::Bool(map.map.contains_key(&Key::String(field.clone())))),
                Value::Null => Ok(Value::Bool(false)),
                other => Err(EvalError::overload(format!("has() on {}", type_name(&other)))),
            },
            Kind::OptSelect { operand, field } => {
                let operand = self.eval(operand)?;
                let operand = match as_optional_value(&operand) {
                    Some(opt) => match opt.value() {
                        Some(inner) => inner.clone(),
                        None => return Ok(operand),
                    },
                    None => operand,
                };
                Ok(match &operand {
                    Value::Map(map) => optional(map.map.get(&Key::String(field.clone())).cloned()),
                    Value::Null => optional(None),
                    other => {
                        return Err(EvalError::overload(format!(
                            "field selection on {}",
                            type_name(other)
                        )));
                    }
                })
            }
            Kind::Index { operand, index } => {
                let operand = self.eval(operand)?;
                let index = self.eval(index)?;
                if let Some(opt) = as_optional_value(&operand) {
                    return Ok(match opt.value() {
                        Some(inner) => optional(lookup(inner, &index)?),
                        None => operand.clone(),
                    });
                }
                lookup(&operand, &index)?.ok_or_else(|| match (&operand, &index) {
                    (Value::List(items), Value::Int(i)) => EvalError::IndexOutOfRange {
                        index: *i,
                        size: items.len(),
                    },
                    _ => missing(&index),
                })
            }
            Kind::OptIndex { operand, index } => {
                let operand = self.eval(operand)?;
                let index = self.eval(index)?;
                let operand = match as_optional_value(&operand) {
                    Some(opt) => match opt.value() {
                        Some(inner) => inner.clone(),
                        None => return Ok(operand),
                    },
                    None => operand,
                };
                Ok(optional(lookup(&operand, &index)?))
            }
            Kind::And(left, right) => {
                let left = self.bool(left);
                match &left {
                    Ok(false) => return Ok(Value::Bool(false)),
                    Err(e) if e.is_budget() => return left.map(Value::Bool),
                    _ => {}
                }
                match (left, self.bool(right)) {
                    (_, Err(e)) if e.is_budget() => Err(e),
                    (_, Ok(false)) => Ok(Value::Bool(false)),
                    (Ok(true), Ok(true)) => Ok(Value::Bool(true)),
                    (Err(e), _) | (_, Err(e)) => Err(e),
                    (Ok(false), _) => Ok(Value::Bool(false)),
                }
            }
            Kind::Or(left, right) => {
                let left = self.bool(left);
                match &left {
                    Ok(true) => return Ok(Value::Bool(true)),
                    Err(e) if e.is_budget() => return left.map(Value::Bool),
                    _ => {}
                }
                match (left, self.bool(right)) {
                    (_, Err(e)) if e.is_budget() => Err(e),
                    (_, Ok(true)) => Ok(Value::Bool(true)),
                    (Ok(false), Ok(false)) => Ok(Value::Bool(false)),
                    (Err(e), _) | (_, Err(e)) => Err(e),
                    (Ok(true), _) => Ok(Value::Bool(true)),
                }
            }
            Kind::Not(operand) => Ok(Value::Bool(!self.bool(operand)?)),
            Kind::NotStrictlyFalse(operand) => {
                Ok(Value::Bool(!matches!(self.eval(operand), Ok(Value::Bool(false)))))
            }
            Kind::Neg(operand) => match self.eval(operand)? {
                Value::Int(i) => i
                    .checked_neg()
                    .map(Value::Int)
                    .ok_or(EvalError::Overflow("negation")),
                Value::Float(f) => Ok(Value::Float(-f)),
                Value::Duration(d) => Ok(Value::Duration(-d)),
                other => Err(EvalError::overload(format!("negation of {}", type_name(&other)))),
            },
            Kind::Cond(cond, then, otherwise) => {
                if self.bool(cond)? {
                    self.eval(then)
                } else {
                    self.eval(otherwise)
                }
            }
            Kind::Binary(op, left, right) => {
                let left = self.eval(left)?;
                let right = self.eval(right)?;
                binary(*op, left, right, self.budget)
            }
            Kind::List { elements, optional } => {
                let mut items = Vec::with_capacity(elements.len());
                for (element, is_optional) in elements.iter().zip(optional) {
                    let value = self.eval(element)?;
                    if *is_optional {
                        match as_optional_value(&value) {
                            Some(opt) => items.extend(opt.value().cloned()),
                            None => items.push(value),
                        }
                    } else {
                        items.push(value);
                    }
                }
                Ok(Value::List(Arc::new(items)))
            }
            Kind::Map { entries } => {
                let mut map = HashMap::with_capacity(entries.len());
                for (key, value, is_optional) in entries {
                    let key = map_key(&self.eval(key)?)?;
                    let mut value = self.eval(value)?;
                    if *is_optional && let Some(opt) = as_optional_value(&value) {
                        match opt.value() {
                            Some(inner) => value = inner.clone(),
                            None => continue,
                        }
                    }
                    if map.insert(key.clone(), value).is_some() {
                        let key = crate::cel::value::display(&key_value(&key));
                        return Err(EvalError::Other(format!("Failed with repeated key: {key}")));
                    }
                }
                Ok(Value::Map(Map { map: Arc::new(map) }))
            }
            Kind::MatchesConst { target, regex } => match self.eval(target)? {
                Value::String(s) => {
                    self.budget.charge_len(s.len())?;
                    Ok(Value::Bool(regex.is_match(&s)))
                }
                other => Err(EvalError::overload(format!("matches on {}", type_name(&other)))),
            },
            Kind::Call {
                builtin,
                target,
                args,
            } => {
                let target = match target {
                    Some(t) => Some(self.eval(t)?),
                    None => None,
                };
                let args = self.eval_all(args)?;
                functions::call(*builtin, target, args, self.budget)
            }
            Kind::Bridge { call, target, args } => self.bridge(call, target.as_deref(), args),
            Kind::Comprehension(c) => {
                let base = self.locals.len();
                let result = self.comprehension(c);
                self.locals.truncate(base);
                result
            }
            Kind::Bind { slot, init, body } => {
                let value = self.eval(init)?;
                let base = self.locals.len();
                if base != *slot {
                    return Err(EvalError::Other("internal: scope mismatch in cel.bind".into()));
                }
                self.locals.push(value);
                let result = self.eval(body);
                self.locals.truncate(base);
                result
            }
        }
    }

    fn eval_all(&mut self, nodes: &[Node]) -> Result<Vec<Value>, EvalError> {
        nodes.iter().map(|n| self.eval(n)).collect()
    }

    fn bridge(
        &mut self,
        call: &BridgeCall,
        target: Option<&Node>,
        args: &[Node],
    ) -> Result<Value, EvalError> {
        let target = match target {
            Some(t) => Some(self.eval(t)?),
            None => None,
        };
        let args = self.eval_all(args)?;
        call.call(target, args, self.budget)
    }

    fn comprehension(&mut self, c: &Comprehension) -> Result<Value, EvalError> {
        let range = self.eval(&c.range)?;
        let init = self.eval(&c.accu_init)?;
        if self.locals.len() != c.accu_slot {
            return Err(EvalError::Other(
                "internal: scope mismatch in comprehension".into(),
            ));
        }
        self.locals.push(init);
        self.locals.push(Value::Null);
        if c.iter2_slot.is_some() {
            self.locals.push(Value::Null);
        }
        match &range {
            Value::List(items) => {
                for (index, item) in items.iter().enumerate() {
                    let pair = match c.iter2_slot {
                        Some(_) => (Value::Int(index as i64), Some(item.clone())),
                        None => (item.clone(), None),
                    };
                    if !self.iterate(c, pair)? {
                        break;
                    }
                }
            }
            Value::Map(map) => {
                let mut entries: Vec<(&Key, &Value)> = map.map.iter().collect();
                entries.sort_by(|a, b| key_order(a.0, b.0));
                for (key, value) in entries {
                    let key = key_value(key);
                    let pair = match c.iter2_slot {
                        Some(_) => (key, Some(value.clone())),
                        None => (key, None),
                    };
                    if !self.iterate(c, pair)? {
                        break;
                    }
                }
            }
            other => {
                return Err(EvalError::overload(format!(
                    "comprehension over {}",
                    type_name(other)
                )));
            }
        }
        self.eval(&c.result)
    }

    /// One iteration; false when the loop condition ended the loop.
    fn iterate(
        &mut self,
        c: &Comprehension,
        (first, second): (Value, Option<Value>),
    ) -> Result<bool, EvalError> {
        self.budget.charge(1)?;
        self.locals[c.iter_slot] = first;
        if let (Some(slot), Some(second)) = (c.iter2_slot, second) {
            self.locals[slot] = second;
        }
        if !self.bool(&c.loop_cond)? {
            return Ok(false);
        }
        let accu = match self.eval(&c.loop_step) {
            Ok(accu) => accu,
            // `all`/`exists` keep going after an error, which a later `false`/`true` absorbs
            // (`[0, 1].exists(x, 1 / x > 0)` is true), as cel-go's error-valued accumulators.
            Err(error) if absorbs_errors(c) && !error.is_budget() => {
                Value::Opaque(Arc::new(ErrorValue(error)))
            }
            Err(error) => return Err(error),
        };
        self.locals[c.accu_slot] = accu;
        Ok(true)
    }
}

/// An error held by a comprehension accumulator; reading the accumulator yields the error.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ErrorValue(EvalError);

impl crate::cel::upstream::objects::Opaque for ErrorValue {
    fn runtime_type_name(&self) -> &str {
        "error"
    }
}

/// True for comprehensions whose step is a logical operator (`all`, `exists`).
fn absorbs_errors(c: &Comprehension) -> bool {
    matches!(c.loop_step.kind, Kind::And(..) | Kind::Or(..))
}

fn key_value(key: &Key) -> Value {
    match key {
        Key::String(s) => Value::String(s.clone()),
        Key::Int(i) => Value::Int(*i),
        Key::Uint(u) => Value::UInt(*u),
        Key::Bool(b) => Value::Bool(*b),
    }
}

fn key_order(a: &Key, b: &Key) -> Ordering {
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

fn select(operand: &Value, field: &Arc<String>) -> Result<Value, EvalError> {
    match operand {
        Value::Map(map) => map
            .map
            .get(&Key::String(field.clone()))
            .cloned()
            .ok_or_else(|| EvalError::NoSuchKey(field.to_string())),
        Value::Null => Err(EvalError::NoSuchKey(field.to_string())),
        other => Err(EvalError::overload(format!(
            "field selection '.{field}' on {}",
            type_name(other)
        ))),
    }
}

fn missing(index: &Value) -> EvalError {
    match index {
        Value::String(s) => EvalError::NoSuchKey(s.to_string()),
        other => EvalError::NoSuchKey(crate::cel::value::display(other)),
    }
}

/// `container[index]`: `Ok(None)` when a list index is out of range or a map key is absent.
fn lookup(container: &Value, index: &Value) -> Result<Option<Value>, EvalError> {
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

fn binary(op: BinOp, left: Value, right: Value, budget: &Budget) -> Result<Value, EvalError> {
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

fn add(left: Value, right: Value, budget: &Budget) -> Result<Value, EvalError> {
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
            Arc::make_mut(&mut a).push_str(&b);
            Ok(Value::String(a))
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

fn compare_numbers(left: &Value, right: &Value) -> Option<Ordering> {
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

fn compare(left: &Value, right: &Value) -> Result<Ordering, EvalError> {
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
