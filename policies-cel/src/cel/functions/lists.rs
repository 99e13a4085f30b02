//! List functions implemented natively: `<list>.sum()` and `includes` (version 1, Kubernetes
//! 1.37+) of the Kubernetes lists library, and
//! `slice`, `flatten`, `sort` and the ordering behind `sortBy` of cel-go's lists extension
//! (version 3, Kubernetes 1.34+), with cel-go's errors (`kube-cel` worded them its own way and
//! sorted mixed types with a different message).
//!
//! `sum` replaces `kube-cel`'s, which cannot sum durations (Kubernetes declares `sum` for lists of
//! `int`, `uint`, `double` and `duration`) and does not report integer overflow.

use std::mem::discriminant;
use std::sync::Arc;

use crate::cel::ops::{compare, equal};
use crate::cel::value::type_name;
use crate::cel::{Budget, EvalError, Value};

/// `list.@sortByAssociatedKeys(keys)`: the list's elements in the order of their keys. The keys
/// must be of one comparable type (`int`, `uint`, `double`, `bool`, `string`, `bytes`,
/// `duration`, `timestamp`), as cel-go requires. Elements with equal keys keep their order
/// (cel-go's `sort.Slice` leaves that unspecified; a stable order is one of its answers).
pub(crate) fn sort_by_keys(
    function: &'static str,
    list: Value,
    keys: Value,
    budget: &Budget,
) -> Result<Value, EvalError> {
    let (Value::List(items), Value::List(keys)) = (&list, &keys) else {
        return Err(EvalError::overload(format!(
            "{function} on {} with keys {}",
            type_name(&list),
            type_name(&keys)
        )));
    };
    if items.len() != keys.len() {
        return Err(EvalError::function(
            function,
            format!(
                "@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got {} and {} elements respectively",
                items.len(),
                keys.len()
            ),
        ));
    }
    let Some(first) = keys.first() else {
        return Ok(list);
    };
    if !matches!(
        first,
        Value::Int(_)
            | Value::UInt(_)
            | Value::Float(_)
            | Value::Bool(_)
            | Value::String(_)
            | Value::Bytes(_)
            | Value::Duration(_)
            | Value::Timestamp(_)
    ) {
        return Err(EvalError::function(function, "list elements must be comparable"));
    }
    if keys.iter().any(|key| discriminant(key) != discriminant(first)) {
        return Err(EvalError::function(
            function,
            "list elements must have the same type",
        ));
    }
    // n log n comparisons, charged up front like the other list functions.
    budget.charge_len(keys.len() * (usize::BITS - keys.len().leading_zeros()).max(1) as usize)?;
    let mut order: Vec<usize> = (0..keys.len()).collect();
    let mut failure = None;
    order.sort_by(|&a, &b| {
        compare(&keys[a], &keys[b]).unwrap_or_else(|e| {
            failure.get_or_insert(e);
            std::cmp::Ordering::Equal
        })
    });
    if let Some(error) = failure {
        return Err(error);
    }
    Ok(Value::List(Arc::new(
        order.into_iter().map(|i| items[i].clone()).collect(),
    )))
}

/// `list.slice(start, end)`: the elements from `start` up to, not including, `end`.
pub(crate) fn slice(list: &Value, start: &Value, end: &Value, budget: &Budget) -> Result<Value, EvalError> {
    let (Value::List(items), Value::Int(start), Value::Int(end)) = (list, start, end) else {
        return Err(EvalError::overload(format!(
            "slice({}, {}) on {}",
            type_name(start),
            type_name(end),
            type_name(list)
        )));
    };
    let (start, end) = (*start, *end);
    let fail = |why: String| {
        Err(EvalError::function(
            "slice",
            format!("cannot slice({start}, {end}), {why}"),
        ))
    };
    if start < 0 || end < 0 {
        return fail("negative indexes not supported".into());
    }
    if start > end {
        return fail("start index must be less than or equal to end index".into());
    }
    if items.len() < end as usize {
        return fail(format!("list is length {}", items.len()));
    }
    budget.charge_len((end - start) as usize)?;
    Ok(Value::List(Arc::new(
        items[start as usize..end as usize].to_vec(),
    )))
}

/// `list.flatten()` (one level) and `list.flatten(depth)`.
pub(crate) fn flatten(list: &Value, depth: Option<&Value>, budget: &Budget) -> Result<Value, EvalError> {
    let depth = match depth {
        None => 1,
        Some(Value::Int(depth)) => *depth,
        Some(other) => return Err(EvalError::overload(format!("flatten({})", type_name(other)))),
    };
    let Value::List(items) = list else {
        return Err(EvalError::overload(format!("flatten on {}", type_name(list))));
    };
    if depth < 0 {
        return Err(EvalError::function("flatten", "level must be non-negative"));
    }
    fn collect(items: &[Value], depth: i64, out: &mut Vec<Value>, budget: &Budget) -> Result<(), EvalError> {
        budget.charge_len(items.len())?;
        for item in items {
            match item {
                Value::List(nested) if depth > 0 => collect(nested, depth - 1, out, budget)?,
                other => out.push(other.clone()),
            }
        }
        Ok(())
    }
    let mut out = Vec::with_capacity(items.len());
    collect(items, depth, &mut out, budget)?;
    Ok(Value::List(Arc::new(out)))
}

/// `target.includes(item)`: whether a list holds an element equal to `item`, or any other value
/// equals it (`'a'.includes('a')`), with CEL's equality across numeric types.
pub(crate) fn includes(target: &Value, item: &Value, budget: &Budget) -> Result<Value, EvalError> {
    Ok(Value::Bool(match target {
        Value::List(items) => {
            budget.charge_len(items.len())?;
            items.iter().any(|element| equal(element, item))
        }
        other => equal(other, item),
    }))
}

/// `list.sum()`: `0` for an empty list, otherwise the sum of elements of one summable type.
pub(crate) fn sum(this: &Value, budget: &Budget) -> Result<Value, EvalError> {
    let Value::List(items) = this else {
        return Err(EvalError::overload(format!("sum on {}", type_name(this))));
    };
    budget.charge_len(items.len())?;
    let mut iter = items.iter();
    let Some(first) = iter.next() else {
        return Ok(Value::Int(0));
    };
    let mut total = match first {
        Value::Int(_) | Value::UInt(_) | Value::Float(_) | Value::Duration(_) => first.clone(),
        other => {
            return Err(EvalError::function(
                "sum",
                format!("cannot sum values of type {}", type_name(other)),
            ));
        }
    };
    for item in iter {
        total = match (&total, item) {
            (Value::Int(a), Value::Int(b)) => a
                .checked_add(*b)
                .map(Value::Int)
                .ok_or(EvalError::Overflow("sum"))?,
            (Value::UInt(a), Value::UInt(b)) => a
                .checked_add(*b)
                .map(Value::UInt)
                .ok_or(EvalError::Overflow("sum"))?,
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            (Value::Duration(a), Value::Duration(b)) => a
                .checked_add(b)
                .map(Value::Duration)
                .ok_or(EvalError::Overflow("sum"))?,
            (total, item) => {
                return Err(EvalError::function(
                    "sum",
                    format!("cannot add {} to a sum of {}", type_name(item), type_name(total)),
                ));
            }
        };
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::new(items))
    }

    #[test]
    fn sums_each_summable_type() {
        let budget = Budget::default();
        assert_eq!(sum(&list(vec![]), &budget), Ok(Value::Int(0)));
        assert_eq!(
            sum(&list(vec![Value::Int(1), Value::Int(2)]), &budget),
            Ok(Value::Int(3))
        );
        let seconds = |s| Value::Duration(chrono::Duration::seconds(s));
        assert_eq!(sum(&list(vec![seconds(1), seconds(2)]), &budget), Ok(seconds(3)));
        assert_eq!(
            sum(&list(vec![Value::Int(i64::MAX), Value::Int(1)]), &budget),
            Err(EvalError::Overflow("sum"))
        );
        assert!(matches!(
            sum(&list(vec![Value::Int(1), Value::Float(1.0)]), &budget),
            Err(EvalError::Function { .. })
        ));
    }
}
