//! The position functions of cel-go's strings extension, as the cel-go release Kubernetes 1.34 to
//! 1.36 vendor (v0.26, v0.27) defines them: `charAt`, `indexOf`, `lastIndexOf` and `substring`,
//! all counting in code points; and `indexOf`/`lastIndexOf` on lists, of the Kubernetes lists
//! library.
//!
//! They replace `kube-cel`'s, which searched from a negative offset instead of failing, found a
//! match past the end of the string, and worded its errors differently. The edges are cel-go's
//! own, odd ones included: an empty needle answers the offset as given (`"abc".indexOf("", 5)`
//! is 5, `"abc".indexOf("", -1)` is -1), a non-empty needle with an offset at or past the end
//! answers -1, and a negative offset is an error.

use crate::cel::ops::equal;
use crate::cel::value::type_name;
use crate::cel::{Budget, EvalError, Value};

/// Which position function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Function {
    CharAt,
    IndexOf,
    LastIndexOf,
    Substring,
}

impl Function {
    /// The function for `name` called as a method with `argc` arguments.
    pub(crate) fn resolve(name: &str, method: bool, argc: usize) -> Option<Function> {
        if !method {
            return None;
        }
        Some(match (name, argc) {
            ("charAt", 1) => Function::CharAt,
            ("indexOf", 1 | 2) => Function::IndexOf,
            ("lastIndexOf", 1 | 2) => Function::LastIndexOf,
            ("substring", 1 | 2) => Function::Substring,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Function::CharAt => "charAt",
            Function::IndexOf => "indexOf",
            Function::LastIndexOf => "lastIndexOf",
            Function::Substring => "substring",
        }
    }
}

fn out_of_range(function: Function, index: i64) -> EvalError {
    EvalError::function(function.name(), format!("index out of range: {index}"))
}

/// Calls `function` on the string `this` with its one or two arguments.
pub(crate) fn call(
    function: Function,
    this: &Value,
    first: Value,
    second: Option<Value>,
    budget: &Budget,
) -> Result<Value, EvalError> {
    let text = match this {
        Value::String(text) => text,
        Value::List(items) if second.is_none() => return list_index(function, items, &first, budget),
        other => {
            return Err(EvalError::overload(format!(
                "{} on {}",
                function.name(),
                type_name(other)
            )));
        }
    };
    budget.charge_len(text.len())?;
    let chars: Vec<char> = text.chars().collect();
    let int = |value: &Value| match value {
        Value::Int(i) => Ok(*i),
        other => Err(EvalError::overload(format!(
            "{} with a {} position",
            function.name(),
            type_name(other)
        ))),
    };
    match function {
        Function::CharAt => {
            let index = int(&first)?;
            let at = usize::try_from(index).ok().filter(|&i| i <= chars.len());
            let at = at.ok_or_else(|| out_of_range(function, index))?;
            Ok(string(chars.get(at).map(char::to_string).unwrap_or_default()))
        }
        Function::Substring => {
            let start = int(&first)?;
            let end = match &second {
                Some(end) => int(end)?,
                None => chars.len() as i64,
            };
            if second.is_some() && start > end {
                return Err(EvalError::function(
                    "substring",
                    format!("invalid substring range. start: {start}, end: {end}"),
                ));
            }
            let bound = |i: i64| {
                usize::try_from(i)
                    .ok()
                    .filter(|&i| i <= chars.len())
                    .ok_or_else(|| out_of_range(function, i))
            };
            let (start, end) = (bound(start)?, bound(end)?);
            Ok(string(chars[start..end].iter().collect()))
        }
        Function::IndexOf | Function::LastIndexOf => {
            let Value::String(needle_text) = &first else {
                return Err(EvalError::overload(format!(
                    "{} of {}",
                    function.name(),
                    type_name(&first)
                )));
            };
            let needle: Vec<char> = needle_text.chars().collect();
            let last = function == Function::LastIndexOf;
            let offset = match &second {
                Some(offset) => int(offset)?,
                None if last && needle.is_empty() => return Ok(Value::Int(chars.len() as i64)),
                // cel-go compares byte lengths here, before searching from the last character.
                None if last && text.len() < needle_text.len() => return Ok(Value::Int(-1)),
                None if last => chars.len() as i64 - 1,
                None => 0,
            };
            if needle.is_empty() {
                return Ok(Value::Int(offset));
            }
            let Ok(start) = usize::try_from(offset) else {
                return Err(out_of_range(function, offset));
            };
            if start >= chars.len() || needle.len() > chars.len() {
                return Ok(Value::Int(-1));
            }
            let matches_at = |i: usize| chars[i..].starts_with(&needle);
            let found = if last {
                (0..=start.min(chars.len() - needle.len()))
                    .rev()
                    .find(|&i| matches_at(i))
            } else {
                (start..=chars.len() - needle.len()).find(|&i| matches_at(i))
            };
            Ok(Value::Int(found.map_or(-1, |i| i as i64)))
        }
    }
}

/// `list.indexOf(x)` and `list.lastIndexOf(x)` of the Kubernetes lists library: the first (last)
/// position of an element equal to `x`, or -1.
fn list_index(
    function: Function,
    items: &[Value],
    wanted: &Value,
    budget: &Budget,
) -> Result<Value, EvalError> {
    budget.charge_len(items.len())?;
    let found = match function {
        Function::IndexOf => items.iter().position(|item| equal(item, wanted)),
        Function::LastIndexOf => items.iter().rposition(|item| equal(item, wanted)),
        Function::CharAt | Function::Substring => {
            return Err(EvalError::overload(format!("{} on list", function.name())));
        }
    };
    Ok(Value::Int(found.map_or(-1, |i| i as i64)))
}

fn string(s: String) -> Value {
    Value::String(std::sync::Arc::new(s))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn run(function: Function, this: &str, first: Value, second: Option<i64>) -> Result<Value, EvalError> {
        call(
            function,
            &Value::String(Arc::new(this.into())),
            first,
            second.map(Value::Int),
            &Budget::default(),
        )
    }

    fn text(s: &str) -> Value {
        Value::String(Arc::new(s.into()))
    }

    #[test]
    fn index_of_follows_cel_go_at_the_edges() {
        use Function::*;
        type Case<'a> = (Function, &'a str, &'a str, Option<i64>, Result<i64, &'a str>);
        let cases: &[Case] = &[
            (IndexOf, "abc", "b", None, Ok(1)),
            (IndexOf, "abc", "c", Some(2), Ok(2)),
            (IndexOf, "abc", "b", Some(3), Ok(-1)),
            (IndexOf, "abc", "b", Some(-1), Err("index out of range: -1")),
            (IndexOf, "abc", "", Some(5), Ok(5)),
            (IndexOf, "abc", "", Some(-1), Ok(-1)),
            (IndexOf, "", "a", None, Ok(-1)),
            (IndexOf, "abc", "abcd", None, Ok(-1)),
            (IndexOf, "ta©o©", "©", Some(2), Ok(2)),
            (IndexOf, "ta©o©", "©", Some(3), Ok(4)),
            (LastIndexOf, "abcb", "b", None, Ok(3)),
            (LastIndexOf, "abc", "", None, Ok(3)),
            (LastIndexOf, "abc", "b", Some(3), Ok(-1)),
            (LastIndexOf, "abc", "b", Some(-1), Err("index out of range: -1")),
            (LastIndexOf, "abc", "", Some(7), Ok(7)),
            (LastIndexOf, "abc", "c", Some(1), Ok(-1)),
            (LastIndexOf, "abc", "bc", Some(2), Ok(1)),
            (LastIndexOf, "", "@@", None, Ok(-1)),
            (LastIndexOf, "bananananana", "nana", Some(7), Ok(6)),
            (LastIndexOf, "ta©o©", "©", Some(3), Ok(2)),
        ];
        for (function, this, needle, offset, expected) in cases {
            let got = run(*function, this, text(needle), *offset);
            let expected = expected
                .map(Value::Int)
                .map_err(|message| EvalError::function(function.name(), message));
            assert_eq!(got, expected, "{this:?}.{function:?}({needle:?}, {offset:?})");
        }
    }

    #[test]
    fn char_at_and_substring_follow_cel_go() {
        use Function::*;
        assert_eq!(run(CharAt, "ta©o", Value::Int(2), None), Ok(text("©")));
        assert_eq!(run(CharAt, "abc", Value::Int(3), None), Ok(text("")));
        assert_eq!(
            run(CharAt, "abc", Value::Int(4), None),
            Err(EvalError::function("charAt", "index out of range: 4"))
        );
        assert_eq!(run(Substring, "ta©o", Value::Int(2), None), Ok(text("©o")));
        assert_eq!(run(Substring, "ta©o", Value::Int(1), Some(3)), Ok(text("a©")));
        assert_eq!(run(Substring, "abc", Value::Int(3), None), Ok(text("")));
        assert_eq!(
            run(Substring, "abc", Value::Int(2), Some(1)),
            Err(EvalError::function(
                "substring",
                "invalid substring range. start: 2, end: 1"
            ))
        );
        assert_eq!(
            run(Substring, "abc", Value::Int(-1), Some(2)),
            Err(EvalError::function("substring", "index out of range: -1"))
        );
        assert_eq!(
            run(Substring, "abc", Value::Int(1), Some(4)),
            Err(EvalError::function("substring", "index out of range: 4"))
        );
    }
}
