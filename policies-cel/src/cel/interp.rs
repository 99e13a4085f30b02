//! The interpreter: walks a lowered [`Node`] tree with CEL's semantics (commutative error
//! absorption in `&&`/`||`, heterogeneous numeric equality, optionals), charging every step to
//! the [`Budget`].

use std::collections::HashMap;
use std::sync::Arc;

use crate::cel::ast::{Comprehension, Kind, Node};
use crate::cel::functions::native::{as_optional_value, map_key, optional};
use crate::cel::functions::{self, bridge::BridgeCall};
use crate::cel::ops::{add, binary, field_of, insert_new_key, key_order, key_value, lookup, missing, select};
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

    /// `operand.field` read alone when `operand` is a root whose activation can read single
    /// fields: `Some(None)` when the root has no such field, `None` to select as usual. The
    /// operand's step is charged as if it had been evaluated.
    fn root_field(&mut self, operand: &Node, field: &str) -> Result<Option<Option<Value>>, EvalError> {
        let Kind::Root(root) = operand.kind else {
            return Ok(None);
        };
        let Some(value) = self.activation.root_field(root, field) else {
            return Ok(None);
        };
        self.budget.charge(1)?;
        Ok(Some(value))
    }

    /// The map `operand` holds when it is a local variable holding a map (an element of a
    /// comprehension, most often): borrowed where it is instead of copied out to select one
    /// field. The operand's step is charged as if it had been evaluated.
    fn local_map(&self, operand: &Node) -> Result<Option<&Map>, EvalError> {
        let Kind::Local(slot) = operand.kind else {
            return Ok(None);
        };
        let Some(Value::Map(map)) = self.locals.get(slot) else {
            return Ok(None);
        };
        self.budget.charge(1)?;
        Ok(Some(map))
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
                if let Some(value) = self.root_field(operand, field)? {
                    return value.ok_or_else(|| EvalError::NoSuchKey(field.to_string()));
                }
                if let Some(map) = self.local_map(operand)? {
                    return field_of(map, field)
                        .cloned()
                        .ok_or_else(|| EvalError::NoSuchKey(field.to_string()));
                }
                let operand = self.eval(operand)?;
                // Selecting from an optional (`a.?b.c`) stays optional: none when absent.
                if let Some(opt) = as_optional_value(&operand) {
                    return Ok(match opt.value() {
                        Some(Value::Map(map)) => optional(field_of(map, field).cloned()),
                        Some(Value::Null) => optional(None),
                        Some(other) => return select(other, field),
                        None => operand.clone(),
                    });
                }
                select(&operand, field)
            }
            Kind::Has { operand, field } if let Some(value) = self.root_field(operand, field)? => {
                Ok(Value::Bool(value.is_some()))
            }
            Kind::Has { operand, field } if let Some(map) = self.local_map(operand)? => {
                Ok(Value::Bool(field_of(map, field).is_some()))
            }
            Kind::Has { operand, field } => match self.eval(operand)? {
                Value::Map(map) => Ok(Value::Bool(field_of(&map, field).is_some())),
                Value::Null => Ok(Value::Bool(false)),
                other => Err(EvalError::overload(format!("has() on {}", type_name(&other)))),
            },
            Kind::OptSelect { operand, field } => {
                if let Some(value) = self.root_field(operand, field)? {
                    return Ok(optional(value));
                }
                let operand = self.eval(operand)?;
                let operand = match as_optional_value(&operand) {
                    Some(opt) => match opt.value() {
                        Some(inner) => inner.clone(),
                        None => return Ok(operand),
                    },
                    None => operand,
                };
                Ok(match &operand {
                    Value::Map(map) => optional(field_of(map, field).cloned()),
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
                    if let Err(key) = insert_new_key(&mut map, key, value) {
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
            Kind::FindConst {
                target,
                regex,
                all,
                limit,
            } => {
                let subject = self.eval(target)?;
                let limit = match limit {
                    Some(limit) => Some(self.eval(limit)?),
                    None => None,
                };
                find_const(&subject, regex, *all, limit.as_ref(), self.budget)
            }
            Kind::Call {
                builtin,
                target,
                args,
            } => {
                let target = match target {
                    Some(t) => Some(self.eval(t)?),
                    None => None,
                };
                // Most calls take three arguments or fewer: they are evaluated into the stack.
                if args.is_empty() {
                    return functions::call(*builtin, target, &mut std::iter::empty(), self.budget);
                }
                if let [first, rest @ ..] = args.as_slice()
                    && rest.len() < 3
                {
                    let mut values = [self.eval(first)?, Value::Null, Value::Null];
                    for (slot, arg) in values.iter_mut().skip(1).zip(rest) {
                        *slot = self.eval(arg)?;
                    }
                    let mut given = values.into_iter().take(args.len());
                    return functions::call(*builtin, target, &mut given, self.budget);
                }
                let mut given = self.eval_all(args)?.into_iter();
                functions::call(*builtin, target, &mut given, self.budget)
            }
            Kind::Bridge { call, target, args } => self.bridge(call, target.as_deref(), args),
            Kind::ClusterCall { method, args } => {
                let args = self.eval_all(args)?;
                let view = self.activation.cluster().ok_or_else(|| {
                    EvalError::Unavailable("cluster (no cluster model for this request)".into())
                })?;
                functions::cluster::call(view, *method, &args, self.budget)
            }
            Kind::HistoryCall { method, args } => {
                let args = self.eval_all(args)?;
                let history = self
                    .activation
                    .history()
                    .ok_or_else(|| EvalError::Unavailable("history (no history for this request)".into()))?;
                functions::history::call(history, *method, &args, self.budget)
            }
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

/// `find` / `findAll` with a compiled pattern, answering as the `kube-cel` library does: the first
/// match (or `""`); every match, or the first `limit` of them (all when negative).
fn find_const(
    subject: &Value,
    regex: &regex::Regex,
    all: bool,
    limit: Option<&Value>,
    budget: &Budget,
) -> Result<Value, EvalError> {
    let name = if all { "findAll" } else { "find" };
    let Value::String(text) = subject else {
        return Err(EvalError::overload(format!("{name} on {}", type_name(subject))));
    };
    budget.charge_len(text.len())?;
    if !all {
        let found = regex
            .find(text)
            .map(|m| m.as_str().to_owned())
            .unwrap_or_default();
        return Ok(Value::String(Arc::new(found)));
    }
    let limit = match limit {
        None => usize::MAX,
        Some(Value::Int(n)) => usize::try_from(*n).unwrap_or(usize::MAX),
        Some(other) => {
            return Err(EvalError::overload(format!(
                "findAll limit of type {}",
                type_name(other)
            )));
        }
    };
    let found: Vec<Value> = regex
        .find_iter(text)
        .take(limit)
        .map(|m| Value::String(Arc::new(m.as_str().to_owned())))
        .collect();
    Ok(Value::List(Arc::new(found)))
}
