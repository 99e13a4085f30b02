//! Helpers shared by the CEL test files: compile, evaluate, and assert values with their types.

#![allow(dead_code)] // each test crate uses its own subset

use std::sync::Arc;

use policies_cel::cel::value::{to_json, type_name};
use policies_cel::cel::{Bindings, Budget, Env, EvalError, Program, Value};
use serde_json::Value as Json;

/// Compiles `source` in the admission environment, panicking with the caret display.
pub fn compile(source: &str) -> Program {
    Env::admission()
        .compile(source)
        .unwrap_or_else(|e| panic!("{source}: {}", e.render()))
}

/// Evaluates `source` with `bindings`.
pub fn eval_in(bindings: &Bindings, source: &str) -> Result<Value, EvalError> {
    compile(source).eval(bindings, &Budget::default())
}

/// Evaluates `source` with no variables set.
pub fn eval(source: &str) -> Result<Value, EvalError> {
    eval_in(&Bindings::new(), source)
}

/// The value of `source`, panicking on an evaluation error.
pub fn value(source: &str) -> Value {
    eval(source).unwrap_or_else(|e| panic!("{source}: {e}"))
}

/// Asserts `source` evaluates to `expected`, of the same CEL type (`Value`'s `==` treats
/// `1`, `1u` and `1.0` as equal).
#[track_caller]
pub fn is(source: &str, expected: Value) {
    let got = value(source);
    assert_eq!(
        (type_name(&got), &got),
        (type_name(&expected), &expected),
        "{source}"
    );
}

/// Asserts `source` evaluates to `expected`, compared as JSON (for lists and maps).
#[track_caller]
pub fn is_json(source: &str, expected: Json) {
    assert_eq!(to_json(&value(source)), expected, "{source}");
}

#[track_caller]
pub fn is_true(source: &str) {
    is(source, Value::Bool(true));
}

#[track_caller]
pub fn is_false(source: &str) {
    is(source, Value::Bool(false));
}

/// A CEL string.
pub fn string(s: &str) -> Value {
    Value::String(Arc::new(s.to_owned()))
}
