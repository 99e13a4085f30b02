//! The static check cel-go's strings library (versions 1 to 3) runs on `format` calls when a
//! policy is created (`ext/formatting.go`, `stringFormatValidator`): a constant format string
//! applied to a list literal has its clauses read, each clause's argument type-checked against
//! it, and the count of arguments compared with the clauses'. The same library exempts these
//! arguments from the homogeneous-literal rule (`mod.rs`: a list or map literal anywhere below a
//! call of `format` may mix types).
//!
//! Errors are cel-go's, placed where it places them: on the argument whose type does not fit,
//! otherwise on the call.

use std::collections::HashMap;

use crate::cel::check::types::ExprType;
use crate::cel::check::{TypeError, error};
use crate::cel::upstream::common::ast::{EntryExpr, Expr, IdedExpr};

/// The types the checker found, by node, for the nodes below a format call's argument list.
pub(super) type NodeTypes = HashMap<u64, ExprType>;

/// Checks `template.format([elements])` (the call is `call`).
pub(super) fn validate(
    call: &IdedExpr,
    template: &str,
    elements: &[IdedExpr],
    types: &NodeTypes,
) -> Result<(), TypeError> {
    let bytes = template.as_bytes();
    let at_call = |message: String| error(call, message);
    let (mut i, mut next_arg, mut requested) = (0, 0, 0);
    while i < bytes.len() {
        if bytes[i] != b'%' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) == Some(&b'%') {
            i += 2;
            continue;
        }
        requested += 1;
        if i + 1 >= bytes.len() {
            return Err(at_call("unexpected end of string".into()));
        }
        let Some(element) = elements.get(next_arg) else {
            return Err(at_call(format!("index {next_arg} out of range")));
        };
        let mut j = i + 1;
        if bytes[j] == b'.' {
            j += 1;
            let start = j;
            loop {
                let Some(byte) = bytes.get(j) else {
                    return Err(at_call(precision_error(
                        "could not find end of precision specifier".into(),
                    )));
                };
                if !byte.is_ascii_digit() {
                    break;
                }
                j += 1;
            }
            let digits = &template[start..j];
            if digits.parse::<i64>().is_err() {
                let why = if digits.is_empty() {
                    "invalid syntax"
                } else {
                    "value out of range"
                };
                return Err(at_call(precision_error(format!(
                    "error while converting precision to integer: strconv.Atoi: parsing \"{digits}\": {why}"
                ))));
            }
        }
        let verb = bytes[j];
        let accepted: &[Kind] = match verb {
            b's' => {
                string_clause(element, types)?;
                &[]
            }
            b'd' => &[Kind::Int, Kind::Uint],
            b'f' | b'e' => &[Kind::Double, Kind::String],
            b'b' => &[Kind::Int, Kind::Uint, Kind::Bool],
            b'x' | b'X' => &[Kind::Int, Kind::Uint, Kind::String, Kind::Bytes],
            b'o' => &[Kind::Int, Kind::Uint],
            other => {
                return Err(at_call(format!(
                    "could not parse formatting clause: unrecognized formatting clause \"{}\"",
                    char::from(other)
                )));
            }
        };
        if verb != b's' {
            let t = type_of(element, types);
            if !fits(&t, accepted) {
                let clause = match verb {
                    b'd' => "decimal clause can only be used on integers",
                    b'f' => "fixed-point clause can only be used on doubles",
                    b'e' => "scientific clause can only be used on doubles",
                    b'b' => "only integers and bools can be formatted as binary",
                    b'o' => "octal clause can only be used on integers",
                    _ => "only integers, byte buffers, and strings can be formatted as hex",
                };
                return Err(error(
                    element,
                    format!("error during formatting: {clause}, was given {}", type_name(&t)),
                ));
            }
        }
        i = j + 1;
        next_arg += 1;
    }
    if elements.len() > requested {
        return Err(at_call(format!(
            "too many arguments supplied to string.format (expected {requested}, got {})",
            elements.len()
        )));
    }
    Ok(())
}

fn precision_error(why: String) -> String {
    format!("could not parse formatting clause: error while parsing precision: {why}")
}

/// What a clause looks at of a type: its kind, parameters aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Int,
    Uint,
    Double,
    Bool,
    String,
    Bytes,
    List,
    Map,
    Timestamp,
    Duration,
    Type,
    Null,
}

fn kind(t: &ExprType) -> Option<Kind> {
    Some(match t {
        ExprType::Int => Kind::Int,
        ExprType::Uint => Kind::Uint,
        ExprType::Double => Kind::Double,
        ExprType::Bool => Kind::Bool,
        ExprType::String => Kind::String,
        ExprType::Bytes => Kind::Bytes,
        ExprType::List(_) => Kind::List,
        ExprType::Map(..) => Kind::Map,
        ExprType::Timestamp => Kind::Timestamp,
        ExprType::Duration => Kind::Duration,
        ExprType::Type(_) => Kind::Type,
        ExprType::Null => Kind::Null,
        _ => return None,
    })
}

/// Whether a value of type `t` may meet the clause: `dyn` (and a type already in error) may.
fn fits(t: &ExprType, accepted: &[Kind]) -> bool {
    match t {
        ExprType::Dyn | ExprType::Error | ExprType::Param(_) => true,
        other => kind(other).is_some_and(|k| accepted.contains(&k)),
    }
}

/// `%s`: the argument prints as a string, and so does every element of a list or map literal
/// in it, however deep.
fn string_clause(element: &IdedExpr, types: &NodeTypes) -> Result<(), TypeError> {
    const PRINTABLE: [Kind; 12] = [
        Kind::List,
        Kind::Map,
        Kind::Int,
        Kind::Uint,
        Kind::Double,
        Kind::Bool,
        Kind::String,
        Kind::Timestamp,
        Kind::Bytes,
        Kind::Duration,
        Kind::Type,
        Kind::Null,
    ];
    let t = type_of(element, types);
    if !fits(&t, &PRINTABLE) {
        return Err(error(
            element,
            format!(
                "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given {}",
                type_name(&t)
            ),
        ));
    }
    match &element.expr {
        Expr::List(list) => list.elements.iter().try_for_each(|e| string_clause(e, types)),
        Expr::Map(map) => map.entries.iter().try_for_each(|entry| match &entry.expr {
            EntryExpr::MapEntry(entry) => {
                string_clause(&entry.key, types)?;
                string_clause(&entry.value, types)
            }
            EntryExpr::StructField(_) => Ok(()),
        }),
        _ => Ok(()),
    }
}

fn type_of(node: &IdedExpr, types: &NodeTypes) -> ExprType {
    types.get(&node.id).cloned().unwrap_or(ExprType::Dyn)
}

/// A type's name as cel-go's `TypeName()` gives it (what its format errors say).
fn type_name(t: &ExprType) -> String {
    match t {
        ExprType::Null => "null_type".into(),
        ExprType::Duration => "google.protobuf.Duration".into(),
        ExprType::Timestamp => "google.protobuf.Timestamp".into(),
        ExprType::List(_) => "list".into(),
        ExprType::Map(..) => "map".into(),
        ExprType::Type(_) => "type".into(),
        ExprType::Opaque(name, _) => (*name).into(),
        ExprType::Object(object) => object.name.into(),
        other => other.to_string(),
    }
}
