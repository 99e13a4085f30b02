//! The core CEL language as Kubernetes (cel-go) evaluates it: literals, arithmetic, equality,
//! errors and their absorption, macros and comprehensions, optionals, conversions, types,
//! strings, time, compile errors, cost budgets and lazily evaluated composited variables.

use crate::common;

use common::*;

use std::sync::Arc;
use std::time::{Duration, Instant};

use policies_cel::cel::value::{from_json, to_json};
use policies_cel::cel::{Bindings, Budget, CompileError, Env, EvalError, Program, Root, Value};
use serde_json::{Value as Json, json};

fn eval_with(source: &str, object: Json) -> Result<Value, EvalError> {
    compile(source).eval(
        &Bindings::new().with(Root::Object, from_json(&object)),
        &Budget::default(),
    )
}

#[track_caller]
fn fails(source: &str, expected: EvalError) {
    assert_eq!(eval(source), Err(expected), "{source}");
}

fn compile_error(source: &str) -> CompileError {
    match Env::admission().compile(source) {
        Ok(_) => panic!("{source}: compiled"),
        Err(e) => e,
    }
}

fn function_error(function: &str, message: &str) -> EvalError {
    EvalError::Function {
        function: function.into(),
        message: message.into(),
    }
}

fn overload(what: &str) -> EvalError {
    EvalError::NoSuchOverload(what.into())
}

// ---------------------------------------------------------------------------------------------
// Literals

#[test]
fn integer_and_double_literals() {
    is("42", Value::Int(42));
    is("-42", Value::Int(-42));
    is("0x1F", Value::Int(31));
    is("-9223372036854775808", Value::Int(i64::MIN));
    is("42u", Value::UInt(42));
    is("0x1Fu", Value::UInt(31));
    is("18446744073709551615u", Value::UInt(u64::MAX));
    is("1.5", Value::Float(1.5));
    is("-0.25", Value::Float(-0.25));
    is("1e3", Value::Float(1000.0));
    is("2.5e-3", Value::Float(0.0025));
    is("true", Value::Bool(true));
    is("null", Value::Null);
}

#[test]
fn string_literals_and_escapes() {
    is(r#"'single' + "double""#, string("singledouble"));
    is(r"'a\tb\nc'", string("a\tb\nc"));
    is(r"'\x41\101\u00e9\U0001F600'", string("AAé😀"));
    is(r#"'it\'s' + "\"q\"" + '\\'"#, string("it's\"q\"\\"));
    is("'''multi\nline'''", string("multi\nline"));
    is(r"r'a\tb\n'", string(r"a\tb\n"));
    is(r#"R"\d+""#, string(r"\d+"));
    is(r"b'\x00\xff'", Value::Bytes(Arc::new(vec![0, 255])));
    is("b'abc'", Value::Bytes(Arc::new(b"abc".to_vec())));
    is("b'é'", Value::Bytes(Arc::new("é".as_bytes().to_vec())));
    is(r"size('\u00e9')", Value::Int(1));
}

// ---------------------------------------------------------------------------------------------
// Arithmetic

#[test]
fn arithmetic_on_each_numeric_type() {
    is("1 + 2 * 3 - 4", Value::Int(3));
    is("(1 + 2) * 3", Value::Int(9));
    is("7 / 2", Value::Int(3));
    is("7 / -2", Value::Int(-3));
    is("-7 % 3", Value::Int(-1));
    is("7 % -3", Value::Int(1));
    is("7u / 2u", Value::UInt(3));
    is("7u % 4u", Value::UInt(3));
    is("10u - 3u * 2u", Value::UInt(4));
    is("7.0 / 2.0", Value::Float(3.5));
    is("0.1 + 0.2", Value::Float(0.1 + 0.2));
    is("-(3.5)", Value::Float(-3.5));
    is("1.0 / 0.0", Value::Float(f64::INFINITY));
    is("-1.0 / 0.0", Value::Float(f64::NEG_INFINITY));
    assert!(matches!(value("0.0 / 0.0"), Value::Float(f) if f.is_nan()));
}

#[test]
fn integer_overflow_is_an_error() {
    fails("9223372036854775807 + 1", EvalError::Overflow("addition"));
    fails("-9223372036854775808 - 1", EvalError::Overflow("subtraction"));
    fails("9223372036854775807 * 2", EvalError::Overflow("multiplication"));
    fails("-(-9223372036854775807 - 1)", EvalError::Overflow("negation"));
    fails("(-9223372036854775807 - 1) / -1", EvalError::Overflow("division"));
    fails("(-9223372036854775807 - 1) % -1", EvalError::Overflow("modulus"));
    fails("18446744073709551615u + 1u", EvalError::Overflow("addition"));
    fails("0u - 1u", EvalError::Overflow("subtraction"));
    fails(
        "18446744073709551615u * 2u",
        EvalError::Overflow("multiplication"),
    );
}

#[test]
fn division_and_modulus_by_zero_are_errors() {
    fails("1 / 0", EvalError::DivisionByZero);
    fails("1 % 0", EvalError::ModulusByZero);
    fails("1u / 0u", EvalError::DivisionByZero);
    fails("1u % 0u", EvalError::ModulusByZero);
    assert_eq!(EvalError::DivisionByZero.to_string(), "division by zero");
    assert_eq!(EvalError::ModulusByZero.to_string(), "modulus by zero");
}

#[test]
fn arithmetic_does_not_mix_types() {
    // Refused when the policy is created (see the type checker's tests); through `dyn` the
    // same mistakes are evaluation errors.
    fails("dyn(1) + 1u", overload("int + uint"));
    fails("dyn(1) + 1.0", overload("int + double"));
    fails("dyn(1u) * 2.0", overload("uint * double"));
    fails("dyn('a') + 1", overload("string + int"));
    fails("dyn([1]) + 'a'", overload("list + string"));
    fails("-dyn('a')", overload("negation of string"));
    fails("-dyn(1u)", overload("negation of uint"));
}

// ---------------------------------------------------------------------------------------------
// Equality and ordering

#[test]
fn numbers_compare_across_types() {
    // `==` between literals of different types is refused when the policy is created; values
    // known only at run time compare numerically.
    is_true("dyn(1) == 1u && dyn(1u) == 1.0 && dyn(1) == 1.0");
    is_true("dyn(1) != 2u && dyn(2.5) != 2");
    is_true("1 < 1.5 && 1.5 < 2u && 2u < 3");
    is_true("-1 < 1u");
    is_true("18446744073709551615u > 9223372036854775807");
    is_true("2u >= 2.0 && 2.0 <= 2");
    is_true("[1, dyn(2u), 3.0] == [1.0, dyn(2), 3u]");
    is_true("{'a': dyn(1)} == {'a': 1.0}");
    is_true("{dyn(1): 'x'} == {1u: 'x'}");
}

#[test]
fn equality_of_other_types() {
    is_true("'abc' == 'abc' && 'abc' != 'abd'");
    is_true("b'abc' == b'abc'");
    is_true("null == null");
    is_true("[dyn(1), 'a', [true]] == [dyn(1), 'a', [true]]");
    is_true("{'a': dyn([1]), 'b': {'c': null}} == {'b': dyn({'c': null}), 'a': [1]}");
    is(" [1, 2] == [2, 1]", Value::Bool(false));
    is("{'a': 1} == {'a': 1, 'b': 2}", Value::Bool(false));
    // Values of different types are simply unequal.
    is("dyn(1) == 'a'", Value::Bool(false));
    is("null == dyn(0)", Value::Bool(false));
    is("dyn([]) == {}", Value::Bool(false));
    is("dyn(1) != 'a'", Value::Bool(true));
}

#[test]
fn ordering_of_strings_bytes_bools_and_errors() {
    is_true("'abc' < 'abd' && 'Z' < 'a' && 'a' < 'aa'");
    is_true("b'\\x01' < b'\\x02'");
    is_true("false < true");
    fails("dyn('a') < 1", overload("comparison of string and int"));
    fails("dyn([1]) < dyn([2])", overload("comparison of list and list"));
    fails("dyn(null) < 1", overload("comparison of null_type and int"));
}

// ---------------------------------------------------------------------------------------------
// Concatenation, membership, indexing

#[test]
fn concatenation() {
    is("'ab' + 'cd' + ''", string("abcd"));
    is_json("[1, 2] + [3] + []", json!([1, 2, 3]));
    is_json("[] + ['a']", json!(["a"]));
    is("b'ab' + b'\\x00'", Value::Bytes(Arc::new(vec![b'a', b'b', 0])));
}

#[test]
fn membership_in_lists_and_maps() {
    is_true("'a' in ['a', 'b']");
    is("'c' in ['a', 'b']", Value::Bool(false));
    is_true("2 in [1, dyn(2u), 3.0] && 3 in [1, dyn(2u), 3.0] && dyn(2.0) in [1, 2]");
    is_true("[1] in [[1], [2]]");
    is_true("'k' in {'k': 1}");
    is("'v' in {'k': 'v'}", Value::Bool(false));
    // Keys are matched numerically across int, uint and double.
    is_true("dyn(1u) in {1: 'x'} && dyn(1.0) in {1: 'x'} && dyn(2) in {2u: 'y'}");
    is("dyn(1.5) in {1: 'x'}", Value::Bool(false));
    is("!('a' in [])", Value::Bool(true));
    fails("1 in dyn('abc')", overload("'in' on string"));
}

#[test]
fn indexing_lists_and_maps() {
    is("[10, 20, 30][1]", Value::Int(20));
    is("[10, 20, 30][dyn(2u)]", Value::Int(30));
    is("[10, 20, 30][dyn(0.0)]", Value::Int(10));
    fails("[1, 2][5]", EvalError::IndexOutOfRange { index: 5, size: 2 });
    fails("[1, 2][-1]", EvalError::IndexOutOfRange { index: -1, size: 2 });
    fails("[][0]", EvalError::IndexOutOfRange { index: 0, size: 0 });
    fails("[1, 2][dyn('x')]", overload("list index of type string"));
    assert_eq!(
        EvalError::IndexOutOfRange { index: 5, size: 2 }.to_string(),
        "index 5 out of range in list of size 2"
    );
    is("{'a': 1}['a']", Value::Int(1));
    is("{1: 'one'}[dyn(1u)]", string("one"));
    is("{1: 'one'}[dyn(1.0)]", string("one"));
    is("{true: 'yes'}[true]", string("yes"));
    fails("{'a': 1}['b']", EvalError::NoSuchKey("b".into()));
    fails("{1: 'one'}[2]", EvalError::NoSuchKey("2".into()));
    assert_eq!(EvalError::NoSuchKey("b".into()).to_string(), "no such key: b");
    fails("dyn('abc')[0]", overload("index into string"));
}

// ---------------------------------------------------------------------------------------------
// Field selection and has()

#[test]
fn field_selection_and_its_errors() {
    let object = json!({"metadata": {"name": "web", "labels": {"app": "web"}}, "spec": {"replicas": 3}});
    assert_eq!(
        eval_with("object.metadata.name", object.clone()),
        Ok(string("web"))
    );
    assert_eq!(
        eval_with("object.metadata.labels['app']", object.clone()),
        Ok(string("web"))
    );
    assert_eq!(
        eval_with("object.spec.replicas * 2", object.clone()),
        Ok(Value::Int(6))
    );
    assert_eq!(
        eval_with("object.spec.paused", object.clone()),
        Err(EvalError::NoSuchKey("paused".into()))
    );
    assert_eq!(
        eval_with("object.status.phase", object.clone()),
        Err(EvalError::NoSuchKey("status".into()))
    );
    assert_eq!(
        eval_with("object.spec.replicas.value", object),
        Err(overload("field selection '.value' on int"))
    );
    // Roots that are not set read as null (oldObject on CREATE).
    assert_eq!(eval("oldObject == null"), Ok(Value::Bool(true)));
    assert_eq!(
        eval("oldObject.metadata"),
        Err(EvalError::NoSuchKey("metadata".into()))
    );
}

#[test]
fn has_on_maps() {
    let object = json!({"spec": {"replicas": 3, "template": {"spec": {}}, "nothing": null}});
    let has = |source: &str| eval_with(source, object.clone());
    assert_eq!(has("has(object.spec)"), Ok(Value::Bool(true)));
    assert_eq!(has("has(object.status)"), Ok(Value::Bool(false)));
    assert_eq!(has("has(object.spec.replicas)"), Ok(Value::Bool(true)));
    assert_eq!(has("has(object.spec.template.spec)"), Ok(Value::Bool(true)));
    assert_eq!(
        has("has(object.spec.template.spec.containers)"),
        Ok(Value::Bool(false))
    );
    assert_eq!(has("has(object.spec.nothing)"), Ok(Value::Bool(true)));
    // has() tests only the last field: a missing parent is an error.
    assert_eq!(
        has("has(object.status.phase)"),
        Err(EvalError::NoSuchKey("status".into()))
    );
    assert_eq!(has("has(object.spec.replicas.x)"), Err(overload("has() on int")));
    assert_eq!(
        has("!has(object.status) || object.status.phase == 'Running'"),
        Ok(Value::Bool(true))
    );
    is_true("has({'a': {'b': 1}}.a.b) && !has({'a': {}}.a.b)");
}

// ---------------------------------------------------------------------------------------------
// Logic

#[test]
fn logical_operators_absorb_errors_commutatively() {
    is_true("1 / 0 == 1 || true");
    is_true("true || 1 / 0 == 1");
    is("1 / 0 == 1 && false", Value::Bool(false));
    is("false && 1 / 0 == 1", Value::Bool(false));
    fails("1 / 0 == 1 || false", EvalError::DivisionByZero);
    fails("false || 1 / 0 == 1", EvalError::DivisionByZero);
    fails("1 / 0 == 1 && true", EvalError::DivisionByZero);
    fails("!(1 / 0 == 1)", EvalError::DivisionByZero);
    // The first error wins when both sides fail.
    fails("{}.a || 1 / 0 == 1", EvalError::NoSuchKey("a".into()));
    // Non-bool operands are errors, absorbed the same way.
    is_true("dyn('x') || true");
    fails("dyn('x') && true", overload("expected bool, found string"));
    let object = json!({"spec": {}});
    assert_eq!(
        eval_with("!has(object.spec.x) || object.spec.x > 0", object.clone()),
        Ok(Value::Bool(true))
    );
    assert_eq!(
        eval_with("object.spec.x > 0 || !has(object.spec.x)", object),
        Ok(Value::Bool(true))
    );
}

#[test]
fn conditional_operator() {
    is("true ? 'yes' : 'no'", string("yes"));
    is("1 > 2 ? 'yes' : 'no'", string("no"));
    is("true ? 1 : 1 / 0", Value::Int(1));
    is("false ? 1 / 0 : 2", Value::Int(2));
    is("(true ? [1] : [2, 3]).size()", Value::Int(1));
    fails("dyn(1) ? 2 : 3", overload("expected bool, found int"));
    fails("(1 / 0 == 0) ? 1 : 2", EvalError::DivisionByZero);
}

// ---------------------------------------------------------------------------------------------
// Macros

#[test]
fn macros_over_lists() {
    is_true("[1, 2, 3].all(x, x > 0)");
    is("[1, 2, 3].all(x, x > 1)", Value::Bool(false));
    is_true("[].all(x, false)");
    is_true("[1, 2, 3].exists(x, x == 2)");
    is("[].exists(x, true)", Value::Bool(false));
    is_true("[1, 2, 3].exists_one(x, x > 2)");
    is("[1, 2, 3].exists_one(x, x > 1)", Value::Bool(false));
    is_true("[1, 2, 3].existsOne(x, x == 1)");
    is_json("[1, 2, 3].map(x, x * 10)", json!([10, 20, 30]));
    is_json("[1, 2, 3, 4].map(x, x % 2 == 0, x * 10)", json!([20, 40]));
    is_json("[1, 2, 3, 4].filter(x, x % 2 == 1)", json!([1, 3]));
    is_json("[].map(x, x)", json!([]));
    is_json("['a', 'b'].map(s, s + s).filter(s, s != 'aa')", json!(["bb"]));
}

#[test]
fn macros_absorb_errors_like_logical_operators() {
    is_true("[0, 1].exists(x, 1 / x == 1)");
    is_true("[1, 0].exists(x, 1 / x == 1)");
    is("[0, 2].all(x, 2 / x == 2)", Value::Bool(false));
    fails("[0, 1].all(x, 1 / x == 1)", EvalError::DivisionByZero);
    fails("[0].exists(x, 1 / x == 1)", EvalError::DivisionByZero);
    fails("[0, 1].map(x, 1 / x)", EvalError::DivisionByZero);
    fails("[0, 1].filter(x, 1 / x == 1)", EvalError::DivisionByZero);
    fails("[0, 1].exists_one(x, 1 / x == 1)", EvalError::DivisionByZero);
    fails("dyn(1).all(x, true)", overload("comprehension over int"));
}

#[test]
fn macros_over_maps_iterate_keys_in_sorted_order() {
    is_json("{'c': 3, 'a': 1, 'b': 2}.map(k, k)", json!(["a", "b", "c"]));
    is_json("{3: 'c', 1: 'a', 2: 'b'}.map(k, k)", json!([1, 2, 3]));
    is_json("{'c': 3, 'a': 1, 'b': 2}.filter(k, k != 'b')", json!(["a", "c"]));
    is_true("{'a': 1, 'b': 2}.all(k, k in ['a', 'b'])");
    is_true("{'a': 1, 'b': 2}.exists(k, k == 'b')");
    is_true("{'a': 1, 'b': 2}.exists_one(k, k == 'a')");
    let object = json!({"metadata": {"labels": {"team": "a", "app": "web", "tier": "db"}}});
    assert_eq!(
        eval_with(
            "object.metadata.labels.map(k, k + '=' + object.metadata.labels[k]).join(',')",
            object
        ),
        Ok(string("app=web,team=a,tier=db"))
    );
}

#[test]
fn nested_comprehensions() {
    is_json("[[1, 2], [3]].map(l, l.map(x, x + 1))", json!([[2, 3], [4]]));
    is_json(
        "[1, 2].map(x, [10, 20].map(y, x * y))",
        json!([[10, 20], [20, 40]]),
    );
    is_true("[1, 2].all(x, [1, 2, 3].exists(y, y == x))");
    is_true("[[1], [2, 3]].exists(l, l.all(x, x > 1))");
    // An inner variable shadows an outer one of the same name.
    is_json("[1, 2].map(x, [x * 10].map(x, x + 1))", json!([[11], [21]]));
    let object = json!({"spec": {"containers": [
        {"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 443}]},
        {"name": "b", "ports": [{"containerPort": 8080}]},
    ]}});
    assert_eq!(
        eval_with(
            "object.spec.containers.map(c, c.ports.map(p, p.containerPort)).map(l, l.size())",
            object.clone()
        )
        .map(|v| to_json(&v)),
        Ok(json!([2, 1]))
    );
    assert_eq!(
        eval_with(
            "object.spec.containers.all(c, c.ports.all(p, p.containerPort > 0))",
            object
        ),
        Ok(Value::Bool(true))
    );
}

#[test]
fn two_variable_comprehensions_over_lists() {
    is_true("[10, 20, 30].all(i, v, v == (i + 1) * 10)");
    is_true("['a', 'b'].exists(i, v, i == 1 && v == 'b')");
    is_true("[1, 2, 2].existsOne(i, v, v == 1)");
    is("[1, 2, 2].existsOne(i, v, v == 2)", Value::Bool(false));
    is_true("[5, 5].exists_one(i, v, i == 0)");
    is_json("[1, 2, 3].transformList(i, v, v * i)", json!([0, 2, 6]));
    is_json("[1, 2, 3].transformList(i, v, i > 0, v * 10)", json!([20, 30]));
    is_json(
        "['a', 'b'].transformMap(i, v, v + string(i))",
        json!({"0": "a0", "1": "b1"}),
    );
    is_json(
        "['a', 'b', 'c'].transformMap(i, v, i != 1, v)",
        json!({"0": "a", "2": "c"}),
    );
    is_json(
        "['a', 'b'].transformMapEntry(i, v, {v: i})",
        json!({"a": 0, "b": 1}),
    );
    is_json(
        "['a', 'b'].transformMapEntry(i, v, i == 0, {v: i})",
        json!({"a": 0}),
    );
    is("[5, 6].transformMap(i, v, v)[1]", Value::Int(6));
}

#[test]
fn two_variable_comprehensions_over_maps() {
    is_true("{'a': 1, 'b': 2}.all(k, v, v > 0 && k.size() == 1)");
    is_true("{'a': 1, 'b': 2}.exists(k, v, k == 'b' && v == 2)");
    is_true("{'a': 1, 'b': 2}.existsOne(k, v, v > 1)");
    is_json(
        "{'b': 2, 'a': 1}.transformList(k, v, k + '=' + string(v))",
        json!(["a=1", "b=2"]),
    );
    is_json("{'a': 1, 'b': 2}.transformList(k, v, v > 1, k)", json!(["b"]));
    is_json(
        "{'a': 1, 'b': 2}.transformMap(k, v, v * 10)",
        json!({"a": 10, "b": 20}),
    );
    is_json(
        "{'a': 1, 'b': 2}.transformMap(k, v, k != 'a', v * 10)",
        json!({"b": 20}),
    );
    is_json(
        "{'a': 1, 'b': 2}.transformMapEntry(k, v, {k + k: v + 1})",
        json!({"aa": 2, "bb": 3}),
    );
    is_json(
        "{'a': 1, 'b': 2}.transformMapEntry(k, v, v > 1, {string(v): k})",
        json!({"2": "b"}),
    );
    fails(
        "{'a': 1, 'b': 1}.transformMapEntry(k, v, {v: k})",
        EvalError::Other("insert failed: key 1 already exists".into()),
    );
    let object = json!({"metadata": {"labels": {"app": "web", "env": "prod"}}});
    assert_eq!(
        eval_with(
            "object.metadata.labels.all(k, v, v.matches('^[a-z]+$'))",
            object.clone()
        ),
        Ok(Value::Bool(true))
    );
    assert_eq!(
        eval_with(
            "object.metadata.labels.transformMap(k, v, v.upperAscii())",
            object
        )
        .map(|v| to_json(&v)),
        Ok(json!({"app": "WEB", "env": "PROD"}))
    );
}

#[test]
fn cel_bind() {
    is("cel.bind(x, 2, x * x)", Value::Int(4));
    is("cel.bind(x, 2, cel.bind(y, x + 1, x * y))", Value::Int(6));
    is("cel.bind(x, 1, cel.bind(x, 'shadow', x))", string("shadow"));
    is("cel.bind(x, 1, cel.bind(x, x + 1, x))", Value::Int(2));
    is_json("cel.bind(xs, [1, 2], xs.map(x, x + xs.size()))", json!([3, 4]));
    is_json("cel.bind(x, [1, 2], x.map(x, x * 10))", json!([10, 20]));
    is_json(
        "[1, 2].map(x, cel.bind(y, x * 2, [x, y]))",
        json!([[1, 2], [2, 4]]),
    );
    fails("cel.bind(x, 1 / 0, x)", EvalError::DivisionByZero);
    let object = json!({"spec": {"containers": [{"image": "a:1"}, {"image": "b"}]}});
    assert_eq!(
        eval_with(
            "cel.bind(images, object.spec.containers.map(c, c.image), images.filter(i, !i.contains(':')).size())",
            object
        ),
        Ok(Value::Int(1))
    );
    assert_eq!(
        compile_error("cel.bind(1, 2, 3)").message,
        "cel.bind: argument must be a simple name"
    );
}

// ---------------------------------------------------------------------------------------------
// Optionals

#[test]
fn optional_field_and_index_selection() {
    let object = json!({"spec": {"replicas": 3, "template": {"metadata": {}}}, "list": [1, 2]});
    let eval = |source: &str| eval_with(source, object.clone());
    assert_eq!(eval("object.?spec.?replicas.orValue(1)"), Ok(Value::Int(3)));
    assert_eq!(
        eval("object.?spec.?paused.orValue(false)"),
        Ok(Value::Bool(false))
    );
    assert_eq!(
        eval("object.?status.?phase.?x.orValue('none')"),
        Ok(string("none"))
    );
    assert_eq!(
        eval("object.spec.?template.?metadata.?labels.hasValue()"),
        Ok(Value::Bool(false))
    );
    assert_eq!(eval("object.?spec.replicas.value()"), Ok(Value::Int(3)));
    assert_eq!(eval("object.spec[?'replicas'].value()"), Ok(Value::Int(3)));
    assert_eq!(eval("object.spec[?'x'].hasValue()"), Ok(Value::Bool(false)));
    assert_eq!(eval("object.list[?1].value()"), Ok(Value::Int(2)));
    assert_eq!(eval("object.list[?5].orValue(0)"), Ok(Value::Int(0)));
    assert_eq!(eval("object.?list[0].value()"), Ok(Value::Int(1)));
    assert_eq!(
        eval("object.?spec.?replicas.value().?x"),
        Err(overload("field selection on int"))
    );
}

#[test]
fn optional_values_and_literals() {
    is_true("optional.of(1).hasValue()");
    is("optional.none().hasValue()", Value::Bool(false));
    is("optional.of(0).value()", Value::Int(0));
    fails(
        "optional.none().value()",
        function_error("value", "optional.none() dereference"),
    );
    is("optional.none().orValue(7)", Value::Int(7));
    is("optional.of(1).orValue(7)", Value::Int(1));
    is("optional.none().or(optional.of(2)).value()", Value::Int(2));
    is("optional.of(1).or(optional.of(2)).value()", Value::Int(1));
    is(
        "optional.none().or(optional.none()).hasValue()",
        Value::Bool(false),
    );
    is("optional.ofNonZeroValue(0).hasValue()", Value::Bool(false));
    is("optional.ofNonZeroValue('').hasValue()", Value::Bool(false));
    is("optional.ofNonZeroValue([]).hasValue()", Value::Bool(false));
    is("optional.ofNonZeroValue({}).hasValue()", Value::Bool(false));
    is("optional.ofNonZeroValue(null).hasValue()", Value::Bool(false));
    is("optional.ofNonZeroValue(false).hasValue()", Value::Bool(false));
    is("optional.ofNonZeroValue(5).value()", Value::Int(5));
    is_true("optional.of(1) == optional.of(1) && optional.none() == optional.none()");
    is("optional.of(1) == optional.of(2)", Value::Bool(false));
    is_json("[?optional.of(1), ?optional.none(), 3]", json!([1, 3]));
    is_json("[?{'a': 1}.?a, ?{'a': 1}.?b]", json!([1]));
    is_json(
        "{?'a': optional.of(1), ?'b': optional.none(), 'c': 3}",
        json!({"a": 1, "c": 3}),
    );
    is_json("{?'k': {'x': 'v'}.?x}", json!({"k": "v"}));
    fails(
        "dyn(optional.of(1).value()).hasValue()",
        overload("HasValue on int"),
    );
    fails("optional.none().or(dyn(1))", overload("Or on int"));
}

// ---------------------------------------------------------------------------------------------
// Conversions, types, dyn

#[test]
fn dyn_is_transparent() {
    is("dyn(1) + 1", Value::Int(2));
    is_true("dyn('a') == 'a'");
    is_true("[dyn(1), 'a'][1] == 'a'");
    is_true("type(dyn(1u)) == uint");
}

#[test]
fn conversions() {
    is("int(1.9)", Value::Int(1));
    is("int(-1.9)", Value::Int(-1));
    is("int(42u)", Value::Int(42));
    is("int('-42')", Value::Int(-42));
    is(
        "int(timestamp('2024-01-01T00:00:00Z'))",
        Value::Int(1_704_067_200),
    );
    is("int(duration('1.5s'))", Value::Int(1_500_000_000));
    is("uint(42)", Value::UInt(42));
    is("uint(2.7)", Value::UInt(2));
    is("uint('7')", Value::UInt(7));
    is("double(1)", Value::Float(1.0));
    is("double(3u)", Value::Float(3.0));
    is("double('2.5')", Value::Float(2.5));
    is("double('1e3')", Value::Float(1000.0));
    is("string(42)", string("42"));
    is("string(42u)", string("42"));
    is("string(true)", string("true"));
    is("string(b'abc')", string("abc"));
    is("string('x')", string("x"));
    is("string(duration('1h1m'))", string("3660s"));
    is("string(duration('1.5s'))", string("1.5s"));
    is("string(duration('-100ms'))", string("-0.1s"));
    is(
        "string(timestamp('2024-03-05T10:20:30.5Z'))",
        string("2024-03-05T10:20:30.500Z"),
    );
    is(
        "bool('true') && bool('TRUE') && bool('t') && bool('1')",
        Value::Bool(true),
    );
    is("bool('false') || bool('F') || bool('0')", Value::Bool(false));
    is("bytes('abc')", Value::Bytes(Arc::new(b"abc".to_vec())));
}

#[test]
fn doubles_convert_to_strings_like_cel_go() {
    is("string(1.0)", string("1"));
    is("string(-2.5)", string("-2.5"));
    is("string(100000.0)", string("100000"));
    is("string(1000000.0)", string("1e+06"));
    is("string(0.0001)", string("0.0001"));
    is("string(0.00001)", string("1e-05"));
    is("string(123.456)", string("123.456"));
    is("string(1e100)", string("1e+100"));
}

#[test]
fn conversion_errors() {
    fails("int('1.5')", function_error("int", "cannot parse \"1.5\""));
    fails("int('x')", function_error("int", "cannot parse \"x\""));
    fails("int(1e19)", EvalError::Overflow("int"));
    fails("int(18446744073709551615u)", EvalError::Overflow("int"));
    fails("uint(-1)", EvalError::Overflow("uint"));
    fails("uint(-1.5)", EvalError::Overflow("uint"));
    fails("double('x')", function_error("double", "cannot parse \"x\""));
    fails(
        "string(b'\\xff')",
        function_error("string", "invalid UTF-8 in bytes"),
    );
    fails("string(dyn([1]))", overload("string on list"));
    fails(
        "bool('yes')",
        function_error("bool", "cannot convert \"yes\" to bool"),
    );
    fails("bool(dyn(1))", overload("Bool on int"));
    fails("int(dyn([]))", overload("int on list"));
}

#[test]
fn types_are_values() {
    is_true("type(1) == int && type(1u) == uint && type(1.0) == double");
    is_true("type('a') == string && type(b'a') == bytes && type(true) == bool");
    is_true("type([]) == list && type({}) == map && type(null) == null_type");
    is_true("type(duration('1s')) == google.protobuf.Duration");
    is_true("type(timestamp('2024-01-01T00:00:00Z')) == google.protobuf.Timestamp");
    is_true("type(optional.none()) == optional_type");
    is_true("type(type(1)) == type && type(int) == type");
    is_true("type(1) != string && type(1) == type(2)");
    is_json("[type(1), type('a')]", json!(["int", "string"]));
    let object = json!({"spec": {"replicas": 3, "name": "x", "ports": [80]}});
    assert_eq!(
        eval_with(
            "[object.spec.replicas, object.spec.name, object.spec.ports].map(v, '%s'.format([type(v)]))",
            object
        )
        .map(|v| to_json(&v)),
        Ok(json!(["int", "string", "list"]))
    );
    // A comprehension variable may shadow a type name.
    is_json("[1, 2].map(int, int + 1)", json!([2, 3]));
}

// ---------------------------------------------------------------------------------------------
// Strings

#[test]
fn size_in_both_forms() {
    is("size('héllo')", Value::Int(5));
    is("'héllo'.size()", Value::Int(5));
    is("size(b'\\xc3\\xa9')", Value::Int(2));
    is("b'abc'.size()", Value::Int(3));
    is("size([1, 2, 3])", Value::Int(3));
    is("[1, 2].size()", Value::Int(2));
    is("size({'a': 1})", Value::Int(1));
    is("{}.size()", Value::Int(0));
    fails("size(dyn(1))", overload("size on int"));
    fails("dyn(1).size()", overload("size on int"));
}

#[test]
fn string_predicates_and_regular_expressions() {
    is_true("'hello'.contains('ell') && 'hello'.contains('')");
    is_true("'hello'.startsWith('he') && 'hello'.endsWith('lo')");
    is("'hello'.startsWith('lo')", Value::Bool(false));
    is_true("'hello'.matches('^h.*o$')");
    is_true("'hello'.matches('ll')");
    is_true("matches('hello', '[a-z]+')");
    is("'Hello'.matches('^[a-z]+$')", Value::Bool(false));
    is_true("'abc123'.matches(r'\\d+')");
    let object = json!({"pattern": "^v[0-9]+$", "bad": "(", "tag": "v12"});
    assert_eq!(
        eval_with("object.tag.matches(object.pattern)", object.clone()),
        Ok(Value::Bool(true))
    );
    assert_eq!(
        eval_with("object.tag.matches(object.bad)", object),
        Err(function_error(
            "matches",
            "invalid regular expression: regex parse error:\n    (\n    ^\nerror: unclosed group"
        ))
    );
    fails("dyn(1).contains('a')", overload("Contains on int"));
}

#[test]
fn an_invalid_literal_regular_expression_is_a_compile_error() {
    let error = compile_error("object.metadata.name.matches('[a-z')");
    assert_eq!(
        error.message,
        "invalid regular expression '[a-z': unclosed character class"
    );
    assert_eq!(
        error.render(),
        "ERROR: <input>:1:30: invalid regular expression '[a-z': unclosed character class\n \
         | object.metadata.name.matches('[a-z')\n \
         | .............................^"
    );
    let global = compile_error("matches(object.metadata.name, '(')");
    assert_eq!(global.line_col(), (1, 31));
    assert_eq!(
        compile_error("'x'.find('[')").message,
        "invalid regular expression '[': unclosed character class"
    );
}

#[test]
fn string_extension_functions() {
    is("['a', 'b', 'c'].join()", string("abc"));
    is("['a', 'b', 'c'].join(', ')", string("a, b, c"));
    is("[].join('-')", string(""));
    is_json("'a,b,c'.split(',')", json!(["a", "b", "c"]));
    is_json("'a,b,c'.split(',', 2)", json!(["a", "b,c"]));
    is_json("'a,b,c'.split(',', 1)", json!(["a,b,c"]));
    is_json("'a,b,c'.split(',', 0)", json!([]));
    is_json("'a,b,c'.split(',', -1)", json!(["a", "b", "c"]));
    is_json("'abc'.split('')", json!(["a", "b", "c"]));
    is_json("'abc'.split('', 2)", json!(["a", "bc"]));
    is("'aaa'.replace('a', 'b')", string("bbb"));
    is("'aaa'.replace('a', 'b', 2)", string("bba"));
    is("'aaa'.replace('a', 'b', 0)", string("aaa"));
    is("'aaa'.replace('a', 'b', -1)", string("bbb"));
    is("'ÀbC'.lowerAscii()", string("Àbc"));
    is("'àbc'.upperAscii()", string("àBC"));
    is("'  \\t hi \\n'.trim()", string("hi"));
    is("'héllo'.charAt(1)", string("é"));
    is("'abc'.charAt(3)", string(""));
    is("'hello mellow'.indexOf('ello')", Value::Int(1));
    is("'hello mellow'.indexOf('ello', 2)", Value::Int(7));
    is("'hello'.indexOf('x')", Value::Int(-1));
    is("'héllo'.indexOf('l')", Value::Int(2));
    is("'hello mellow'.lastIndexOf('ello')", Value::Int(7));
    is("'hello mellow'.lastIndexOf('ello', 6)", Value::Int(1));
    is("'tacocat'.substring(4)", string("cat"));
    is("'tacocat'.substring(1, 4)", string("aco"));
    is("strings.quote('say \"hi\"\\n')", string("\"say \\\"hi\\\"\\n\""));
}

#[test]
fn string_extension_errors() {
    fails(
        "'abc'.charAt(4)",
        function_error("charAt", "index out of range: 4"),
    );
    fails(
        "'tacocat'.substring(4, 1)",
        function_error("substring", "invalid substring range. start: 4, end: 1"),
    );
    fails(
        "'tacocat'.substring(0, 9)",
        function_error("substring", "index out of range: 9"),
    );
    fails(
        "'abc'.indexOf('b', -1)",
        function_error("indexOf", "index out of range: -1"),
    );
    fails(
        "[dyn(1), 2].join(',')",
        function_error("join", "list element is int, not string"),
    );
}

#[test]
fn string_format() {
    is(
        "'%s is %d years'.format([dyn('Ann'), 42])",
        string("Ann is 42 years"),
    );
    is("'%s|%s|%s'.format([1.0, 2.5, 1000000.0])", string("1|2.5|1e+06"));
    is(
        "'%.2f %f %e'.format([3.14159, 1234.5, 1234.5])",
        string("3.14 1,234.500000 1.234500\u{202f}×\u{202f}10⁰³"),
    );
    is(
        "'%x %X %o %b %%'.format([255, 255, 8, 5])",
        string("ff FF 10 101 %"),
    );
    is("'%x'.format(['hi'])", string("6869"));
    is("'%s'.format([b'bytes'])", string("bytes"));
    is(
        "'%s %s'.format([dyn(duration('90s')), timestamp('2024-01-01T00:00:00Z')])",
        string("90s 2024-01-01T00:00:00Z"),
    );
    is(
        "'%s'.format([[dyn(1), 'a', true, null]])",
        string("[1, \"a\", true, null]"),
    );
    is(
        "'%s'.format([{'b': dyn(2), 'a': [1]}])",
        string("{\"a\":[1], \"b\":2}"),
    );
    is("'%s'.format([type(1)])", string("int"));
    // A constant format string applied to a list literal is checked when the expression
    // compiles, as cel-go's format validator does; otherwise the same mistakes fail at run time.
    let decimal = "error during formatting: decimal clause can only be used on integers, was given string";
    let unrecognized = "could not parse formatting clause: unrecognized formatting clause \"q\"";
    for (source, message) in [
        ("'%d'.format(['x'])", decimal),
        ("'%s %s'.format(['x'])", "index 1 out of range"),
        ("'%q'.format([1])", unrecognized),
    ] {
        assert_eq!(compile_error(source).message, message, "{source}");
    }
    fails("'%d'.format([dyn('x')])", function_error("format", decimal));
    fails(
        "'%s %s'.format(dyn(['x']))",
        function_error("format", "index 1 out of range"),
    );
    fails("('%' + 'q').format([1])", function_error("format", unrecognized));
}

// ---------------------------------------------------------------------------------------------
// Time

#[test]
fn timestamps_from_seconds_and_from_timestamps() {
    // cel-go's timestamp(int) and timestamp(timestamp) overloads.
    is_true("timestamp(0) == timestamp('1970-01-01T00:00:00Z')");
    is_true("timestamp(1700000000) == timestamp('2023-11-14T22:13:20Z')");
    is_true("timestamp(timestamp('2024-01-01T00:00:00Z')) == timestamp('2024-01-01T00:00:00Z')");
    fails("timestamp(300000000000)", EvalError::Overflow("timestamp"));
}

#[test]
fn durations() {
    is_true("duration('1h') == duration('60m') && duration('1h30m') == duration('5400s')");
    is_true("duration('1.5h') == duration('90m') && duration('1ms') < duration('1s')");
    is_true("duration('1h') + duration('1m') == duration('61m')");
    is_true("duration('1h') - duration('2h') == duration('-1h')");
    is_true("duration('0s') - duration('1s') == duration('-1s')");
    is_true("duration(duration('90s')) == duration('1m30s')");
    is("duration('1h30m').getHours()", Value::Int(1));
    is("duration('1h30m').getMinutes()", Value::Int(90));
    is("duration('1h30m').getSeconds()", Value::Int(5400));
    is("duration('1.5s').getMilliseconds()", Value::Int(1500));
    fails(
        "duration('1h') + dyn(1)",
        overload("google.protobuf.Duration + int"),
    );
    assert!(
        matches!(eval("duration('1d')"), Err(EvalError::Function { function, .. }) if function == "duration")
    );
}

#[test]
fn timestamps() {
    is_true("timestamp('2024-03-05T10:20:30Z') + duration('1h') == timestamp('2024-03-05T11:20:30Z')");
    is_true("timestamp('2024-03-05T10:20:30Z') - duration('30s') == timestamp('2024-03-05T10:20:00Z')");
    is_true("timestamp('2024-03-05T10:20:30Z') - timestamp('2024-03-05T10:00:00Z') == duration('20m30s')");
    is_true("timestamp('2024-03-05T10:20:30Z') < timestamp('2024-03-05T10:20:31Z')");
    is_true("timestamp('2024-03-05T12:20:30+02:00') == timestamp('2024-03-05T10:20:30Z')");
    let t = "timestamp('2024-03-05T10:20:30.123Z')";
    is(&format!("{t}.getFullYear()"), Value::Int(2024));
    is(&format!("{t}.getMonth()"), Value::Int(2));
    is(&format!("{t}.getDayOfYear()"), Value::Int(64));
    is(&format!("{t}.getDayOfMonth()"), Value::Int(4));
    is(&format!("{t}.getDate()"), Value::Int(5));
    is(&format!("{t}.getDayOfWeek()"), Value::Int(2));
    is(&format!("{t}.getHours()"), Value::Int(10));
    is(&format!("{t}.getMinutes()"), Value::Int(20));
    is(&format!("{t}.getSeconds()"), Value::Int(30));
    is(&format!("{t}.getMilliseconds()"), Value::Int(123));
    fails(
        "timestamp('nope')",
        function_error("timestamp", "premature end of input"),
    );
}

#[test]
fn timestamp_accessors_read_utc_unless_given_a_zone() {
    // Written with a +02:00 offset, read in UTC: 01:20 local is 23:20 the day before.
    let t = "timestamp('2024-03-05T01:20:30+02:00')";
    is(&format!("{t}.getHours()"), Value::Int(23));
    is(&format!("{t}.getDate()"), Value::Int(4));
    is(&format!("{t}.getHours('UTC')"), Value::Int(23));
    is(&format!("{t}.getHours('+05:30')"), Value::Int(4));
    is(&format!("{t}.getMinutes('+05:30')"), Value::Int(50));
    is(&format!("{t}.getDayOfWeek('-08:00')"), Value::Int(1));
    fails(
        &format!("{t}.getHours('America/New_York')"),
        function_error(
            "getHours",
            "unsupported time zone 'America/New_York': only UTC and fixed offsets such as '+05:30' are available offline",
        ),
    );
}

// ---------------------------------------------------------------------------------------------
// Compile errors

#[test]
fn undeclared_references_point_at_the_identifier() {
    let error = compile_error("object.spec.replicas > objekt.spec.replicas");
    assert_eq!(error.message, "undeclared reference to 'objekt'");
    assert_eq!(error.line_col(), (1, 24));
    assert_eq!(
        error.render(),
        "ERROR: <input>:1:24: undeclared reference to 'objekt'\n \
         | object.spec.replicas > objekt.spec.replicas\n \
         | .......................^"
    );
    let multiline = compile_error("object.a == 1 &&\n  unknownFn(object)");
    assert_eq!(multiline.message, "undeclared reference to 'unknownFn'");
    assert_eq!(multiline.line_col(), (2, 3));
    let namespaced = compile_error("object.a.x.y(1)");
    assert!(
        namespaced.message.starts_with("undeclared reference to"),
        "{}",
        namespaced.message
    );
    assert_eq!(
        compile_error("'x'.noSuchFunction()").message,
        "undeclared reference to 'noSuchFunction'"
    );
}

#[test]
fn wrong_argument_counts_are_compile_errors() {
    let error = compile_error("object.name.startsWith('a', 'b')");
    assert_eq!(
        error.message,
        "found no matching overload for 'startsWith' applied to 'dyn.(string, string)'"
    );
    assert_eq!(error.line_col(), (1, 13));
    assert_eq!(
        compile_error("size()").message,
        "found no matching overload for 'size' applied to '()'"
    );
    assert_eq!(
        compile_error("matches('x')").message,
        "found no matching overload for 'matches' applied to '(string)'"
    );
    assert_eq!(
        compile_error("'%s'.format()").message,
        "found no matching overload for 'format' applied to 'string.()'"
    );
}

#[test]
fn syntax_errors() {
    let error = compile_error("object.spec.replicas >");
    assert!(
        error
            .message
            .starts_with("Syntax error: mismatched input '<EOF>'"),
        "{}",
        error.message
    );
    assert_eq!(error.line_col(), (1, 23));
    let unbalanced = compile_error("(1 + 2");
    assert!(
        unbalanced.message.starts_with("Syntax error"),
        "{}",
        unbalanced.message
    );
    assert_eq!(compile_error("").message, "expression is empty");
    assert_eq!(compile_error("   ").message, "expression is empty");
}

#[test]
fn message_construction_is_not_supported() {
    let error = compile_error("Foo{a: 1}");
    assert_eq!(
        error.message,
        "message construction ('Foo{...}') is not supported"
    );
    assert_eq!(error.line_col(), (1, 1));
}

#[test]
fn undeclared_variables() {
    let env = Env::admission().with_variables(["replicas"]);
    let error = env
        .compile("variables.replicas > variables.undeclared")
        .unwrap_err();
    assert_eq!(error.message, "undeclared reference to 'variables.undeclared'");
    assert_eq!(error.line_col(), (1, 32));
    assert_eq!(
        Env::admission().compile("variables").unwrap_err().message,
        "`variables` can only be used as `variables.<name>`"
    );
    assert!(env.compile("variables.replicas").is_ok());
}

// ---------------------------------------------------------------------------------------------
// Cost budget

#[test]
fn a_runaway_comprehension_stops_at_the_cost_limit() {
    let items: Vec<String> = (0..300).map(|i| i.to_string()).collect();
    let big = format!("[{}]", items.join(","));
    // 300^3 = 27 million iterations if nothing stopped it.
    let source = format!("cel.bind(big, {big}, big.all(x, big.all(y, big.all(z, true))))");
    let program = compile(&source);
    let budget = Budget::default();
    let started = Instant::now();
    let result = program.eval(&Bindings::new(), &budget);
    assert_eq!(result, Err(EvalError::CostLimitExceeded { limit: 10_000_000 }));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(budget.spent(), 10_000_001);
    assert_eq!(
        EvalError::CostLimitExceeded { limit: 10_000_000 }.to_string(),
        "operation cancelled: actual cost limit exceeded (limit 10000000)"
    );
    // The same expression over the literal list, as written out in a policy.
    let inline = compile(&format!("{big}.all(x, {big}.all(y, {big}.all(z, true)))"));
    assert_eq!(
        inline.eval(&Bindings::new(), &Budget::new(1_000_000)),
        Err(EvalError::CostLimitExceeded { limit: 1_000_000 })
    );
}

#[test]
fn what_a_library_call_would_build_is_charged_before_it_is_built() {
    // Built whole, each would ask for more memory than any machine has (found by fuzzing:
    // `lists.range` aborted the process).
    for source in [
        "lists.range(2222222222222222) == []",
        // A thousand bytes, a million, then a million times a million.
        "cel.bind(a, lists.range(1000).map(i, 'x').join(), \
         cel.bind(b, a.replace('', a), b.replace('', b).size() > 0))",
    ] {
        let result = compile(source).eval(&Bindings::new(), &Budget::default());
        assert_eq!(
            result,
            Err(EvalError::CostLimitExceeded { limit: 10_000_000 }),
            "{source}"
        );
    }
    // What fits in the budget is built as before.
    assert_eq!(
        compile("lists.range(100000).size() == 100000 && 'abc'.replace('b', 'xyz') == 'axyzc'")
            .eval(&Bindings::new(), &Budget::default()),
        Ok(Value::Bool(true))
    );
}

#[test]
fn a_tiny_budget_stops_a_modest_expression() {
    let program = compile("[1, 2, 3].map(x, x * 2).filter(x, x > 2).size() == 2");
    assert_eq!(
        program.eval(&Bindings::new(), &Budget::default()),
        Ok(Value::Bool(true))
    );
    let budget = Budget::new(10);
    assert_eq!(
        program.eval(&Bindings::new(), &budget),
        Err(EvalError::CostLimitExceeded { limit: 10 })
    );
    assert_eq!(budget.spent(), 11);
    // An error that is out of budget is not absorbed by `||`.
    let absorbing = compile("[1, 2, 3, 4, 5, 6, 7, 8].map(x, x).size() > 0 || true");
    assert_eq!(
        absorbing.eval(&Bindings::new(), &Budget::new(5)),
        Err(EvalError::CostLimitExceeded { limit: 5 })
    );
}

#[test]
fn a_time_limit_stops_evaluation() {
    let items: Vec<String> = (0..400).map(|i| i.to_string()).collect();
    let source = format!(
        "cel.bind(big, [{}], big.all(x, big.all(y, big.all(z, true))))",
        items.join(",")
    );
    let budget = Budget::new(u64::MAX).with_time_limit(Duration::from_millis(50));
    let started = Instant::now();
    let result = compile(&source).eval(&Bindings::new(), &budget);
    assert_eq!(result, Err(EvalError::TimeLimitExceeded { millis: 50 }));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn string_growth_is_charged() {
    // Doubling a string 30 times would make a gigabyte.
    let source = "cel.bind(s, 'xxxxxxxxxxxxxxxx', [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,\
                  21,22,23,24,25,26,27,28,29,30].map(i, s + s + s + s + s + s + s + s).size())";
    assert_eq!(
        compile(source).eval(&Bindings::new(), &Budget::new(200)),
        Err(EvalError::CostLimitExceeded { limit: 200 })
    );
}

// ---------------------------------------------------------------------------------------------
// Composited variables

fn variables(declarations: &[(&str, &str)]) -> (Env, Vec<Arc<Program>>) {
    let mut env = Env::admission();
    let mut programs = Vec::new();
    for (name, source) in declarations {
        programs.push(Arc::new(
            env.compile(source)
                .unwrap_or_else(|e| panic!("{source}: {}", e.render())),
        ));
        env.declare_variable(*name);
    }
    (env, programs)
}

#[test]
fn a_failing_variable_is_only_an_error_when_read() {
    let (env, programs) = variables(&[
        ("broken", "object.missing.field"),
        ("name", "object.metadata.name"),
    ]);
    let bindings = Bindings::new()
        .with(Root::Object, from_json(&json!({"metadata": {"name": "web"}})))
        .with_variables(&programs);
    let budget = Budget::default();
    let ok = env.compile("variables.name == 'web'").unwrap();
    assert_eq!(ok.eval(&bindings, &budget), Ok(Value::Bool(true)));
    let reads = env.compile("variables.broken == 1").unwrap();
    assert_eq!(
        reads.eval(&bindings, &budget),
        Err(EvalError::NoSuchKey("missing".into()))
    );
    // Read under a short-circuit that never needs it: no error.
    let guarded = env
        .compile("variables.name == 'web' || variables.broken")
        .unwrap();
    assert_eq!(guarded.eval(&bindings, &budget), Ok(Value::Bool(true)));
    // An error absorbed by `||` on the other side.
    let absorbed = env.compile("variables.broken == 1 || true").unwrap();
    assert_eq!(absorbed.eval(&bindings, &budget), Ok(Value::Bool(true)));
    assert!(reads.variables_used().contains(&0) && !reads.variables_used().contains(&1));
}

#[test]
fn each_variable_is_evaluated_once() {
    let items: Vec<String> = (0..2000).map(|i| i.to_string()).collect();
    let costly = format!("[{}].map(x, x * 2).filter(x, x % 3 == 0)", items.join(","));
    let (env, programs) = variables(&[("costly", costly.as_str())]);

    let once = env.compile("size(variables.costly)").unwrap();
    let budget = Budget::default();
    assert_eq!(
        once.eval(&Bindings::new().with_variables(&programs), &budget),
        Ok(Value::Int(667))
    );
    let cost_of_one_read = budget.spent();
    assert!(cost_of_one_read > 10_000, "{cost_of_one_read}");

    let thrice = env
        .compile("size(variables.costly) + size(variables.costly) + variables.costly[0]")
        .unwrap();
    let budget = Budget::default();
    assert_eq!(
        thrice.eval(&Bindings::new().with_variables(&programs), &budget),
        Ok(Value::Int(1334))
    );
    assert!(
        budget.spent() < cost_of_one_read + 50,
        "{} vs {cost_of_one_read}",
        budget.spent()
    );

    // Several expressions over the same bindings share the computed value.
    let bindings = Bindings::new().with_variables(&programs);
    let budget = Budget::default();
    once.eval(&bindings, &budget).unwrap();
    let after_first = budget.spent();
    once.eval(&bindings, &budget).unwrap();
    assert!(
        budget.spent() - after_first < 10,
        "{}",
        budget.spent() - after_first
    );
}

#[test]
fn later_variables_read_earlier_ones() {
    let (env, programs) = variables(&[
        ("containers", "object.spec.containers"),
        ("images", "variables.containers.map(c, c.image)"),
        ("untagged", "variables.images.filter(i, !i.contains(':'))"),
    ]);
    let object = json!({"spec": {"containers": [{"image": "nginx:1.25"}, {"image": "busybox"}]}});
    let bindings = Bindings::new()
        .with(Root::Object, from_json(&object))
        .with_variables(&programs);
    let program = env
        .compile("variables.untagged == ['busybox'] && size(variables.images) == 2")
        .unwrap();
    assert_eq!(program.eval(&bindings, &Budget::default()), Ok(Value::Bool(true)));
    // A variable cannot read one declared after it.
    let early = Env::admission().with_variables(["containers"]);
    assert_eq!(
        early.compile("variables.images").unwrap_err().message,
        "undeclared reference to 'variables.images'"
    );
}

// ---------------------------------------------------------------------------------------------
// Math extension

#[test]
fn libraries_kubernetes_does_not_declare_are_refused() {
    // cel-go's math and encoders extensions, strings v3's reverse, and kube-cel's extras are
    // not in the environment kube-apiserver compiles policies against.
    for source in [
        "math.greatest(1, 2)",
        "math.abs(-5)",
        "base64.encode(b'hello')",
        "jsonpatch.escapeKey('a/b')",
        "[1, 2].first()",
        "isIPv4('1.2.3.4')",
    ] {
        let message = compile_error(source).message;
        assert!(
            message.starts_with("undeclared reference to '"),
            "{source}: {message}"
        );
    }
    assert_eq!(
        compile_error("'gums'.reverse()").message,
        "found no matching overload for 'reverse' applied to 'string.()'"
    );
}
