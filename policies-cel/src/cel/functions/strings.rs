//! `string.format(list)` of cel-go's strings extension (`'%s has %d items'.format([name, n])`).
//! `%f` and `%e` print as the `en_US` number printer behind Kubernetes' strings library (version
//! 2, the legacy formatter): thousands grouped, exponents in superscript. The legacy formatter
//! of cel-go v0.26 (what Kubernetes 1.34-1.36 vendor) hands `%.Ne` to the printer as `%Ne`: the
//! mantissa always has six decimals and N is a width, the text padded with spaces on the left.
//!
//! Replaces `kube-cel`'s, whose `%s` printed doubles as `1.0` (cel-go: `1`), and bytes,
//! durations and timestamps as Rust debug output. `%s` follows `string(x)`; inside lists and
//! maps values print as CEL literals (`["a", 1, duration("60s")]`), as cel-go does.

use std::sync::Arc;

use crate::cel::functions::native::format_double;
use crate::cel::functions::types::CelType;
use crate::cel::upstream::objects::Key;
use crate::cel::value::{format_duration, type_name};
use crate::cel::{Budget, EvalError, Value};

const DEFAULT_PRECISION: usize = 6;

/// `format` called on `this` with the argument list `args`; `budget` pays for padding.
pub(crate) fn format(this: &Value, args: &Value, budget: &Budget) -> Result<Value, EvalError> {
    let (Value::String(template), Value::List(args)) = (this, args) else {
        return Err(EvalError::overload(format!(
            "format({}) on {}",
            type_name(args),
            type_name(this)
        )));
    };
    let error = |message: String| EvalError::function("format", message);
    let mut out = String::with_capacity(template.len());
    let mut chars = template.char_indices().peekable();
    let mut next_arg = 0usize;
    while let Some((_, c)) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek().is_some_and(|(_, c)| *c == '%') {
            chars.next();
            out.push('%');
            continue;
        }
        let Some(arg) = args.get(next_arg) else {
            return Err(error(format!("index {next_arg} out of range")));
        };
        next_arg += 1;
        let mut precision: Option<usize> = None;
        if chars.peek().is_some_and(|(_, c)| *c == '.') {
            chars.next();
            let mut digits = String::new();
            while let Some((_, d)) = chars.peek().filter(|(_, d)| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            precision = Some(digits.parse().map_err(|_| {
                error("could not parse formatting clause: error while parsing precision".into())
            })?);
        }
        let Some((_, verb)) = chars.next() else {
            return Err(error("unexpected end of string".into()));
        };
        let clause = |message: String| error(format!("error during formatting: {message}"));
        let formatted = match verb {
            's' => format_string(arg).map_err(clause)?,
            'd' => match arg {
                Value::Int(i) => i.to_string(),
                Value::UInt(u) => u.to_string(),
                other => {
                    return Err(clause(format!(
                        "decimal clause can only be used on integers, was given {}",
                        type_name(other)
                    )));
                }
            },
            'f' | 'e' => {
                let Some(f) = float_argument(arg) else {
                    let kind = if verb == 'f' { "fixed-point" } else { "scientific" };
                    return Err(clause(format!(
                        "{kind} clause can only be used on doubles, was given {}",
                        type_name(arg)
                    )));
                };
                if verb == 'f' {
                    locale_fixed(f, precision.unwrap_or(DEFAULT_PRECISION))
                } else {
                    let text = locale_scientific(f, DEFAULT_PRECISION);
                    let width = precision.unwrap_or(0);
                    let short = width.saturating_sub(text.chars().count());
                    budget.charge_len(short)?;
                    format!("{}{text}", " ".repeat(short))
                }
            }
            'b' => match arg {
                Value::Int(i) => format!("{}{:b}", if *i < 0 { "-" } else { "" }, i.unsigned_abs()),
                Value::UInt(u) => format!("{u:b}"),
                Value::Bool(b) => if *b { "1" } else { "0" }.to_owned(),
                other => {
                    return Err(clause(format!(
                        "only integers and bools can be formatted as binary, was given {}",
                        type_name(other)
                    )));
                }
            },
            'x' | 'X' => {
                let hex = match arg {
                    Value::Int(i) => format!("{}{:x}", if *i < 0 { "-" } else { "" }, i.unsigned_abs()),
                    Value::UInt(u) => format!("{u:x}"),
                    Value::String(s) => s.bytes().map(|b| format!("{b:02x}")).collect(),
                    Value::Bytes(b) => b.iter().map(|b| format!("{b:02x}")).collect(),
                    other => {
                        return Err(clause(format!(
                            "only integers, byte buffers, and strings can be formatted as hex, was given {}",
                            type_name(other)
                        )));
                    }
                };
                if verb == 'X' {
                    hex.to_ascii_uppercase()
                } else {
                    hex
                }
            }
            'o' => match arg {
                Value::Int(i) => format!("{}{:o}", if *i < 0 { "-" } else { "" }, i.unsigned_abs()),
                Value::UInt(u) => format!("{u:o}"),
                other => {
                    return Err(clause(format!(
                        "octal clause can only be used on integers, was given {}",
                        type_name(other)
                    )));
                }
            },
            other => {
                return Err(error(format!(
                    "could not parse formatting clause: unrecognized formatting clause \"{other}\""
                )));
            }
        };
        out.push_str(&formatted);
    }
    Ok(Value::String(Arc::new(out)))
}

/// A `%f`/`%e` argument: a double, or one of the strings `NaN`, `Infinity`, `-Infinity`.
fn float_argument(value: &Value) -> Option<f64> {
    match value {
        Value::Float(f) => Some(*f),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

fn non_finite(f: f64) -> Option<String> {
    if f.is_nan() {
        Some("NaN".into())
    } else if f.is_infinite() {
        Some(if f > 0.0 { "+Inf" } else { "-Inf" }.into())
    } else {
        None
    }
}

/// Go's `%.Nf`: how a double prints inside a list or map (a CEL literal, `.` as the separator).
fn fixed(f: f64, precision: usize) -> String {
    non_finite(f).unwrap_or_else(|| format!("{f:.precision$}"))
}

/// The `%f` clause as Kubernetes' strings library (version 2) prints it: through the `en_US`
/// number printer, which rounds as Go's `%f` does but groups the integer digits by thousands
/// (`1,234.500000`) and prints infinities as `∞`.
fn locale_fixed(f: f64, precision: usize) -> String {
    if let Some(text) = locale_non_finite(f) {
        return text;
    }
    let digits = format!("{:.precision$}", f.abs());
    let (integer, fraction) = digits
        .split_once('.')
        .map_or((digits.as_str(), None), |(i, f)| (i, Some(f)));
    let mut out = String::with_capacity(digits.len() + integer.len() / 3 + 1);
    if f < 0.0 {
        out.push('-');
    }
    for (i, digit) in integer.chars().enumerate() {
        if i > 0 && (integer.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    if let Some(fraction) = fraction {
        out.push('.');
        out.push_str(fraction);
    }
    out
}

/// Superscript digits, as the `en_US` number printer writes an exponent.
const SUPERSCRIPT_DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];

/// The `%e` clause as Kubernetes' strings library (version 2) prints it: through the `en_US`
/// number printer, as a mantissa times a power of ten with a superscript exponent of at least
/// two digits (`2.718280 × 10⁰⁰`, the spaces narrow no-break spaces). cel-go always asks for six
/// decimals (`precision`), whatever the clause says.
fn locale_scientific(f: f64, precision: usize) -> String {
    if let Some(text) = locale_non_finite(f) {
        return text;
    }
    let rust = format!("{:.precision$e}", f.abs());
    let (mantissa, exponent) = rust.split_once('e').unwrap_or((rust.as_str(), "0"));
    let (negative, exponent) = exponent
        .strip_prefix('-')
        .map_or((false, exponent), |e| (true, e));
    let mut out = String::with_capacity(mantissa.len() + 16);
    if f < 0.0 {
        out.push('-');
    }
    out.push_str(mantissa);
    out.push_str("\u{202f}×\u{202f}10");
    if negative {
        out.push('⁻');
    }
    for _ in exponent.len()..2 {
        out.push(SUPERSCRIPT_DIGITS[0]);
    }
    for digit in exponent.bytes() {
        out.push(SUPERSCRIPT_DIGITS[usize::from(digit.saturating_sub(b'0')).min(9)]);
    }
    out
}

/// NaN and the infinities as the `en_US` number printer writes them.
fn locale_non_finite(f: f64) -> Option<String> {
    if f.is_nan() {
        Some("NaN".into())
    } else if f.is_infinite() {
        Some(if f > 0.0 { "∞" } else { "-∞" }.into())
    } else {
        None
    }
}

/// `%s`: the value as `string(x)` would give it; lists and maps as CEL literals.
fn format_string(value: &Value) -> Result<String, String> {
    Ok(match value {
        Value::String(s) => s.to_string(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => format_double(*f),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Duration(d) => format_duration(d),
        Value::Timestamp(t) => t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        Value::List(items) => {
            let members = items.iter().map(literal).collect::<Result<Vec<_>, _>>()?;
            format!("[{}]", members.join(", "))
        }
        Value::Map(map) => {
            let mut entries = map
                .map
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Key::String(s) => format!("{:?}", s.as_str()),
                        Key::Int(i) => i.to_string(),
                        Key::Uint(u) => u.to_string(),
                        Key::Bool(b) => b.to_string(),
                    };
                    Ok((key, literal(v)?))
                })
                .collect::<Result<Vec<_>, String>>()?;
            entries.sort();
            let entries: Vec<String> = entries.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
            format!("{{{}}}", entries.join(", "))
        }
        Value::Opaque(o) if o.downcast_ref::<CelType>().is_some() => o
            .downcast_ref::<CelType>()
            .map(|t| t.name().to_owned())
            .unwrap_or_default(),
        other => {
            return Err(format!(
                "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given {}",
                type_name(other)
            ));
        }
    })
}

/// A value inside a list or map printed by `%s`: as a CEL literal.
fn literal(value: &Value) -> Result<String, String> {
    Ok(match value {
        Value::String(s) => format!("{:?}", s.as_str()),
        Value::Bytes(b) => format!("b{:?}", String::from_utf8_lossy(b)),
        Value::Float(f) if !f.is_finite() => format!("\"{}\"", fixed(*f, DEFAULT_PRECISION)),
        Value::Float(f) => fixed(*f, DEFAULT_PRECISION),
        Value::Duration(d) => format!("duration(\"{}\")", format_duration(d)),
        Value::Timestamp(t) => format!(
            "timestamp(\"{}\")",
            t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
        ),
        Value::Opaque(o) if o.downcast_ref::<CelType>().is_some() => {
            format!(
                "type({})",
                o.downcast_ref::<CelType>()
                    .map(|t| t.name().to_owned())
                    .unwrap_or_default()
            )
        }
        other => format_string(other)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(template: &str, args: Vec<Value>) -> Result<Value, EvalError> {
        format(
            &Value::String(Arc::new(template.into())),
            &Value::List(Arc::new(args)),
            &Budget::default(),
        )
    }

    fn text(s: &str) -> Value {
        Value::String(Arc::new(s.into()))
    }

    #[test]
    fn clauses_print_like_cel_go() {
        let args = vec![
            text("a"),
            Value::Int(-3),
            Value::Float(1.0),
            Value::Float(2.345),
            Value::Float(1234.5),
            Value::Int(255),
            Value::UInt(8),
            Value::Bool(true),
        ];
        assert_eq!(
            run("%s %d %s %.2f %e %X %o %b %%", args),
            Ok(text("a -3 1 2.35 1.234500\u{202f}×\u{202f}10⁰³ FF 10 1 %"))
        );
        assert_eq!(
            run(
                "%s",
                vec![Value::List(Arc::new(vec![
                    text("a"),
                    Value::Int(1),
                    Value::Float(1.5),
                    Value::Null
                ]))]
            ),
            Ok(text("[\"a\", 1, 1.500000, null]"))
        );
    }

    /// cel-go's formatting tests (legacy formatter, locale `en_US`), and the thousands
    /// grouping and exponent signs of the number printer behind it.
    #[test]
    #[allow(clippy::approx_constant)] // cel-go's own inputs
    fn fixed_and_scientific_clauses_print_as_the_en_us_number_printer() {
        let cases: &[(&str, f64, &str)] = &[
            ("%.3f", 1.2345, "1.234"),
            ("%f", 2.71828, "2.718280"),
            ("%e", 2.71828, "2.718280\u{202f}×\u{202f}10⁰⁰"),
            ("%.6e", 1052.032911275, "1.052033\u{202f}×\u{202f}10⁰³"),
            ("%e", -0.00012, "-1.200000\u{202f}×\u{202f}10⁻⁰⁴"),
            // cel-go reads `%.Ne` as a width: six decimals, padded to N characters.
            ("%.2e", 6.02e23, "6.020000\u{202f}×\u{202f}10²³"),
            ("%.20e", 6.02e23, "     6.020000\u{202f}×\u{202f}10²³"),
            ("%.16e", -0.5, "-5.000000\u{202f}×\u{202f}10⁻⁰¹"),
            ("%.0e", 1.0, "1.000000\u{202f}×\u{202f}10⁰⁰"),
            ("%.5e", f64::INFINITY, "    ∞"),
            ("%f", 1234567.5, "1,234,567.500000"),
            ("%.0f", -1234.0, "-1,234"),
            ("%.1f", 999.96, "1,000.0"),
            ("%f", f64::NAN, "NaN"),
            ("%f", f64::INFINITY, "∞"),
            ("%e", f64::NEG_INFINITY, "-∞"),
        ];
        for (template, value, expected) in cases {
            assert_eq!(
                run(template, vec![Value::Float(*value)]),
                Ok(text(expected)),
                "{template} of {value}"
            );
        }
        assert_eq!(run("%f", vec![text("Infinity")]), Ok(text("∞")));
        // Inside a list a double stays a CEL literal: Go's %f, no grouping.
        assert_eq!(
            run("%s", vec![Value::List(Arc::new(vec![Value::Float(1234.5)]))]),
            Ok(text("[1234.500000]"))
        );
    }

    #[test]
    fn clause_errors() {
        assert_eq!(
            run("%d", vec![text("x")]),
            Err(EvalError::function(
                "format",
                "error during formatting: decimal clause can only be used on integers, was given string"
            ))
        );
        assert_eq!(
            run("%s %s", vec![text("x")]),
            Err(EvalError::function("format", "index 1 out of range"))
        );
    }
}
