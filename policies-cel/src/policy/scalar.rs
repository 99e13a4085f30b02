//! YAML 1.2 core-schema resolution of scalars into JSON values.

use saphyr_parser::{ScalarStyle, Tag};
use serde_json::{Number, Value};

/// Resolves a scalar with the YAML 1.2 core schema.
pub(crate) fn resolve_scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Value, String> {
    if let Some(tag) = tag {
        if tag.is_yaml_core_schema() {
            return match tag.suffix.as_str() {
                "str" | "binary" | "timestamp" => Ok(Value::String(text.to_owned())),
                "null" => Ok(Value::Null),
                "bool" => parse_bool(text)
                    .map(Value::Bool)
                    .ok_or_else(|| format!("`{text}` is not a !!bool")),
                "int" => parse_int(text).ok_or_else(|| format!("`{text}` is not an !!int")),
                "float" => parse_float(text)
                    .or_else(|| parse_int(text))
                    .ok_or_else(|| format!("`{text}` is not a !!float")),
                // `!!map`/`!!seq` on a scalar, or something exotic: keep the text.
                _ => Ok(Value::String(text.to_owned())),
            };
        }
        if tag.handle == "!" && tag.suffix.is_empty() {
            // The non-specific tag `!` forces a string.
            return Ok(Value::String(text.to_owned()));
        }
    }
    if style != ScalarStyle::Plain {
        return Ok(Value::String(text.to_owned()));
    }
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Ok(Value::Null);
    }
    if let Some(b) = parse_bool(text) {
        return Ok(Value::Bool(b));
    }
    Ok(parse_int(text)
        .or_else(|| parse_float(text))
        .unwrap_or_else(|| Value::String(text.to_owned())))
}

fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

fn parse_int(text: &str) -> Option<Value> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = if let Some(hex) = digits.strip_prefix("0x") {
        (16, hex)
    } else if let Some(octal) = digits.strip_prefix("0o") {
        (8, octal)
    } else {
        (10, digits)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    if radix != 10 && text.starts_with(['-', '+']) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok();
    let number = match (negative, magnitude) {
        (false, Some(m)) => Number::from(m),
        (true, Some(m)) if m <= i64::MAX as u64 + 1 => Number::from(0i64.wrapping_sub_unsigned(m)),
        // Too large for 64 bits: a float, as JSON parsers do.
        _ => return parse_float(text),
    };
    Some(Value::Number(number))
}

fn parse_float(text: &str) -> Option<Value> {
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    let looks_numeric = !body.is_empty()
        && body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'))
        && body
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '.')
        && body.chars().any(|c| c.is_ascii_digit());
    if !looks_numeric {
        // `.inf` and `.nan` have no JSON form; they stay strings.
        return None;
    }
    let float: f64 = text.parse().ok()?;
    Number::from_f64(float).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers() {
        assert_eq!(parse_int("-9223372036854775808"), Some(json!(i64::MIN)));
        assert_eq!(parse_int("18446744073709551615"), Some(json!(u64::MAX)));
        assert_eq!(parse_int("1e3"), None);
        assert_eq!(parse_float("1e3"), Some(json!(1000.0)));
        assert_eq!(parse_float("1.2.3"), None);
        assert_eq!(parse_float(".inf"), None);
        assert_eq!(
            resolve_scalar("1.0.1", ScalarStyle::Plain, None),
            Ok(json!("1.0.1"))
        );
        assert_eq!(resolve_scalar("-", ScalarStyle::Plain, None), Ok(json!("-")));
    }
}
