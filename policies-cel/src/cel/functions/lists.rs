//! List functions implemented natively: `<list>.sum()` of the Kubernetes lists library, and the
//! ordering behind `sortBy` of cel-go's lists extension.
//!
//! `sum` replaces `kube-cel`'s, which cannot sum durations (Kubernetes declares `sum` for lists of
//! `int`, `uint`, `double` and `duration`) and does not report integer overflow.

use std::mem::discriminant;
use std::sync::Arc;

use crate::cel::ops::compare;
use crate::cel::value::type_name;
use crate::cel::{Budget, EvalError, Value};

/// `list.@sortByAssociatedKeys(keys)`: the list's elements in the order of their keys. The keys
/// must be of one comparable type (`int`, `uint`, `double`, `bool`, `string`, `bytes`,
/// `duration`, `timestamp`), as cel-go requires. Elements with equal keys keep their order
/// (cel-go's `sort.Slice` leaves that unspecified; a stable order is one of its answers).
pub(crate) fn sort_by_keys(list: Value, keys: Value, budget: &Budget) -> Result<Value, EvalError> {
    let (Value::List(items), Value::List(keys)) = (&list, &keys) else {
        return Err(EvalError::overload(format!(
            "sortBy on {} with keys {}",
            type_name(&list),
            type_name(&keys)
        )));
    };
    if items.len() != keys.len() {
        return Err(EvalError::function(
            "sortBy",
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
        return Err(EvalError::function("sortBy", "list elements must be comparable"));
    }
    if keys.iter().any(|key| discriminant(key) != discriminant(first)) {
        return Err(EvalError::function(
            "sortBy",
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
