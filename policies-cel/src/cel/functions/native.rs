//! Native implementations of the functions policies call most (sizes, strings, conversions,
//! optionals): no conversion through the `cel` crate's value representation on the hot path.

use std::sync::Arc;

use std::sync::LazyLock;

use crate::cel::functions::bridge::BridgeCall;
use crate::cel::functions::{
    Builtin, authorizer, format, lists, semver, string_index, strings, time, types, urls,
};
use crate::cel::ops::{insert_new_key, key_order};
use crate::cel::upstream::objects::{Key, OptionalValue};
use crate::cel::value::{format_duration, key_string, type_name};
use crate::cel::{Budget, EvalError, Value};

/// Calls `builtin` on already evaluated arguments.
pub(crate) fn call(
    builtin: Builtin,
    target: Option<Value>,
    args: &mut dyn Iterator<Item = Value>,
    budget: &Budget,
) -> Result<Value, EvalError> {
    use Builtin::*;
    let mut next = || args.next().unwrap_or(Value::Null);
    // Functions callable both as `f(x)` and `x.f()` take the receiver first.
    let mut this = target.unwrap_or_else(&mut next);
    match builtin {
        Size => size(&this),
        Contains | StartsWith | EndsWith => {
            let (Value::String(s), Value::String(part)) = (&this, next()) else {
                return Err(overload(builtin, &this));
            };
            budget.charge_len(s.len())?;
            Ok(Value::Bool(match builtin {
                Contains => s.contains(part.as_str()),
                StartsWith => s.starts_with(part.as_str()),
                _ => s.ends_with(part.as_str()),
            }))
        }
        Matches => {
            let (Value::String(s), Value::String(pattern)) = (&this, next()) else {
                return Err(overload(builtin, &this));
            };
            budget.charge_len(s.len() + pattern.len())?;
            let regex = regex::Regex::new(&pattern)
                .map_err(|e| EvalError::function("matches", format!("invalid regular expression: {e}")))?;
            Ok(Value::Bool(regex.is_match(s)))
        }
        String => to_string(this, budget),
        Int => to_int(this),
        Uint => to_uint(this),
        Double => to_double(this),
        Type => Ok(types::type_of(&this)),
        Timestamp => to_timestamp(this, budget),
        Duration => match this {
            Value::Duration(_) => Ok(this),
            Value::String(_) => DURATION_OF_STRING.call(None, vec![this], budget),
            other => Err(overload(builtin, &other)),
        },
        Bool => match &this {
            Value::Bool(_) => Ok(this),
            // Go's strconv.ParseBool, as cel-go.
            Value::String(s) => match s.as_str() {
                "true" | "True" | "TRUE" | "t" | "T" | "1" => Ok(Value::Bool(true)),
                "false" | "False" | "FALSE" | "f" | "F" | "0" => Ok(Value::Bool(false)),
                _ => Err(EvalError::function(
                    "bool",
                    format!("cannot convert {s:?} to bool"),
                )),
            },
            _ => Err(overload(builtin, &this)),
        },
        Join => {
            let Value::List(items) = &this else {
                return Err(overload(builtin, &this));
            };
            let separator = match next() {
                Value::String(s) => s,
                Value::Null => Arc::new(std::string::String::new()),
                other => return Err(overload(builtin, &other)),
            };
            budget.charge_len(items.len())?;
            let mut parts = Vec::with_capacity(items.len());
            for item in items.iter() {
                match item {
                    Value::String(s) => parts.push(s.as_str()),
                    other => {
                        return Err(EvalError::function(
                            "join",
                            format!("list element is {}, not string", type_name(other)),
                        ));
                    }
                }
            }
            Ok(string(parts.join(&separator)))
        }
        LowerAscii | UpperAscii | Trim => {
            let Value::String(s) = &this else {
                return Err(overload(builtin, &this));
            };
            budget.charge_len(s.len())?;
            Ok(string(match builtin {
                LowerAscii => s.to_ascii_lowercase(),
                UpperAscii => s.to_ascii_uppercase(),
                _ => s.trim().to_owned(),
            }))
        }
        Replace => {
            let (Value::String(s), Value::String(from), Value::String(to)) = (&this, next(), next()) else {
                return Err(overload(builtin, &this));
            };
            let limit = match next() {
                Value::Int(n) => n,
                Value::Null => -1,
                other => return Err(overload(builtin, &other)),
            };
            budget.charge_len(s.len() * (1 + to.len()))?;
            Ok(string(if limit < 0 {
                s.replace(from.as_str(), &to)
            } else {
                s.replacen(from.as_str(), &to, limit as usize)
            }))
        }
        Split => {
            let (Value::String(s), Value::String(separator)) = (&this, next()) else {
                return Err(overload(builtin, &this));
            };
            let limit = match next() {
                Value::Int(n) => n,
                Value::Null => -1,
                other => return Err(overload(builtin, &other)),
            };
            budget.charge_len(s.len())?;
            let parts: Vec<Value> = match limit {
                0 => Vec::new(),
                // Go's strings.SplitN with an empty separator: one part per character, the
                // last part holding the rest.
                n if separator.is_empty() => {
                    let count = s.chars().count();
                    let n = if n < 0 { count } else { (n as usize).min(count) };
                    let mut parts: Vec<Value> = s
                        .chars()
                        .take(n.saturating_sub(1))
                        .map(|c| string(c.to_string()))
                        .collect();
                    let consumed: usize = s.chars().take(n.saturating_sub(1)).map(char::len_utf8).sum();
                    if consumed < s.len() {
                        parts.push(string(s[consumed..].to_owned()));
                    }
                    parts
                }
                n if n < 0 => s
                    .split(separator.as_str())
                    .map(|p| string(p.to_owned()))
                    .collect(),
                n => s
                    .splitn(n as usize, separator.as_str())
                    .map(|p| string(p.to_owned()))
                    .collect(),
            };
            Ok(Value::List(Arc::new(parts)))
        }
        StringFormat => {
            let formatted = strings::format(&this, &next(), budget)?;
            if let Value::String(s) = &formatted {
                budget.charge_len(s.len())?;
            }
            Ok(formatted)
        }
        Sum => lists::sum(&this, budget),
        Includes => lists::includes(&this, &next(), budget),
        QuantityIsInteger => quantity_is_integer(this, budget),
        OptionalOf => Ok(optional(Some(this))),
        OptionalNone => Ok(optional(None)),
        OptionalOfNonZero => Ok(optional(if is_zero(&this) { None } else { Some(this) })),
        HasValue => Ok(Value::Bool(as_optional(&this, builtin)?.value().is_some())),
        OptionalValue => as_optional(&this, builtin)?
            .value()
            .cloned()
            .ok_or_else(|| EvalError::function("value", "optional.none() dereference")),
        Or => {
            let other = next();
            match as_optional(&this, builtin)?.value() {
                Some(_) => Ok(this),
                None => {
                    as_optional(&other, builtin)?;
                    Ok(other)
                }
            }
        }
        OrValue => Ok(as_optional(&this, builtin)?.value().cloned().unwrap_or_else(next)),
        MapInsert => {
            let (key, value) = (next(), next());
            let key = map_key(&key)?;
            let Value::Map(map) = &mut this else {
                return Err(overload(builtin, &this));
            };
            insert_new_key(Arc::make_mut(&mut map.map), key, value).map_err(|key| repeated(&key))?;
            Ok(this)
        }
        MapMerge => {
            let entry = next();
            let Value::Map(entry) = entry else {
                return Err(overload(builtin, &entry));
            };
            let Value::Map(map) = &mut this else {
                return Err(overload(builtin, &this));
            };
            let target = Arc::make_mut(&mut map.map);
            // A one-entry map in practice; sorted so that which repeat is named never depends on
            // hash order.
            let mut entries: Vec<_> = entry.map.iter().collect();
            entries.sort_by(|a, b| key_order(a.0, b.0));
            for (key, value) in entries {
                insert_new_key(target, key.clone(), value.clone()).map_err(|key| repeated(&key))?;
            }
            Ok(this)
        }
        SortByKeys => lists::sort_by_keys("sortBy", this, next(), budget),
        Sort => lists::sort_by_keys("sort", this.clone(), this, budget),
        Slice => {
            let (start, end) = (next(), next());
            lists::slice(&this, &start, &end, budget)
        }
        Flatten => {
            let depth = args.next();
            lists::flatten(&this, depth.as_ref(), budget)
        }
        Authorizer(method) => authorizer::call(method, this, next(), next()),
        Time(getter) => time::call(getter, &this, args.next()),
        Url(function) => urls::call(function, &this),
        Format(function) => format::call(function, this, next()),
        Semver(function) => semver::call(function, this, args.next(), budget),
        StringIndex(function) => {
            let first = next();
            string_index::call(function, &this, first, args.next(), budget)
        }
    }
}

/// The error of `transformMap`/`transformMapEntry` producing a key twice, as cel-go words it.
fn repeated(key: &Key) -> EvalError {
    EvalError::Other(format!("insert failed: key {} already exists", key_string(key)))
}

fn overload(builtin: Builtin, value: &Value) -> EvalError {
    EvalError::overload(format!("{builtin:?} on {}", type_name(value)))
}

pub(crate) fn string(s: std::string::String) -> Value {
    Value::String(Arc::new(s))
}

pub(crate) fn optional(value: Option<Value>) -> Value {
    Value::Opaque(Arc::new(match value {
        Some(v) => OptionalValue::of(v),
        None => OptionalValue::none(),
    }))
}

/// The optional inside `value`, if it is one.
pub(crate) fn as_optional_value(value: &Value) -> Option<&OptionalValue> {
    match value {
        Value::Opaque(o) => o.downcast_ref::<OptionalValue>(),
        _ => None,
    }
}

fn as_optional(value: &Value, builtin: Builtin) -> Result<&OptionalValue, EvalError> {
    as_optional_value(value).ok_or_else(|| overload(builtin, value))
}

pub(crate) fn map_key(value: &Value) -> Result<Key, EvalError> {
    match value {
        Value::String(s) => Ok(Key::String(s.clone())),
        Value::Int(i) => Ok(Key::Int(*i)),
        Value::UInt(u) => Ok(Key::Uint(*u)),
        Value::Bool(b) => Ok(Key::Bool(*b)),
        other => Err(EvalError::overload(format!(
            "map key of type {}",
            type_name(other)
        ))),
    }
}

fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::UInt(u) => *u == 0,
        Value::Float(f) => *f == 0.0,
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::List(l) => l.is_empty(),
        Value::Map(m) => m.map.is_empty(),
        Value::Duration(d) => d.is_zero(),
        // cel-go's `Timestamp.IsZeroValue` is Go's `time.Time.IsZero`: the first instant of
        // year 1 (UTC), not the Unix epoch.
        Value::Timestamp(t) => t.timestamp() == GO_ZERO_TIME_UNIX && t.timestamp_subsec_nanos() == 0,
        _ => false,
    }
}

/// `0001-01-01T00:00:00Z` in seconds since the Unix epoch.
const GO_ZERO_TIME_UNIX: i64 = -62_135_596_800;

fn size(value: &Value) -> Result<Value, EvalError> {
    let n = match value {
        Value::String(s) => s.chars().count(),
        Value::Bytes(b) => b.len(),
        Value::List(l) => l.len(),
        Value::Map(m) => m.map.len(),
        other => return Err(EvalError::overload(format!("size on {}", type_name(other)))),
    };
    Ok(Value::Int(n as i64))
}

static QUANTITY_IS_INTEGRAL: LazyLock<BridgeCall> = LazyLock::new(|| BridgeCall::new("isInteger", true, 0));
static QUANTITY_AS_INTEGER: LazyLock<BridgeCall> = LazyLock::new(|| BridgeCall::new("asInteger", true, 0));

/// `q.isInteger()`: Kubernetes answers whether `q.AsInt64()` succeeds, so a whole quantity past
/// int64 (`quantity("9223372036854775808")`) is not an integer; `kube-cel` checks integrality
/// alone.
fn quantity_is_integer(this: Value, budget: &Budget) -> Result<Value, EvalError> {
    if QUANTITY_IS_INTEGRAL.call(Some(this.clone()), Vec::new(), budget)? != Value::Bool(true) {
        return Ok(Value::Bool(false));
    }
    let fits = QUANTITY_AS_INTEGER.call(Some(this), Vec::new(), budget).is_ok();
    Ok(Value::Bool(fits))
}

static TIMESTAMP_OF_STRING: LazyLock<BridgeCall> = LazyLock::new(|| BridgeCall::new("timestamp", false, 1));
static DURATION_OF_STRING: LazyLock<BridgeCall> = LazyLock::new(|| BridgeCall::new("duration", false, 1));

/// `timestamp(x)`: a timestamp as it is, seconds since the epoch (within cel-go's range, years 1
/// to 9999), or an RFC 3339 string through the library.
fn to_timestamp(value: Value, budget: &Budget) -> Result<Value, EvalError> {
    // 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in seconds since the epoch.
    const RANGE: std::ops::RangeInclusive<i64> = -62_135_596_800..=253_402_300_799;
    match value {
        Value::Timestamp(_) => Ok(value),
        Value::Int(seconds) => RANGE
            .contains(&seconds)
            .then(|| chrono::DateTime::from_timestamp(seconds, 0))
            .flatten()
            .map(|t| Value::Timestamp(t.fixed_offset()))
            .ok_or(EvalError::Overflow("timestamp")),
        Value::String(_) => TIMESTAMP_OF_STRING.call(None, vec![value], budget),
        other => Err(EvalError::overload(format!("timestamp on {}", type_name(&other)))),
    }
}

/// `string(x)` on a Kubernetes value (`ip`, `cidr`): their library's `x.string()`.
static OPAQUE_TO_STRING: LazyLock<BridgeCall> = LazyLock::new(|| BridgeCall::new("string", true, 0));

fn to_string(value: Value, budget: &Budget) -> Result<Value, EvalError> {
    Ok(match value {
        Value::String(_) => value,
        Value::Int(i) => string(i.to_string()),
        Value::UInt(u) => string(u.to_string()),
        Value::Float(f) => string(format_double(f)),
        Value::Bool(b) => string(b.to_string()),
        Value::Bytes(b) => string(
            std::string::String::from_utf8(b.to_vec())
                .map_err(|_| EvalError::function("string", "invalid UTF-8 in bytes"))?,
        ),
        Value::Duration(d) => string(format_duration(&d)),
        Value::Timestamp(t) => string(t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)),
        Value::Null => string("null".to_owned()),
        Value::Opaque(ref o) => match o.downcast_ref::<types::CelType>() {
            Some(t) => string(t.name().to_owned()),
            None if matches!(o.runtime_type_name(), "net.IP" | "net.CIDR") => {
                return OPAQUE_TO_STRING.call(Some(value), Vec::new(), budget);
            }
            None => return Err(EvalError::overload(format!("string on {}", type_name(&value)))),
        },
        other => return Err(EvalError::overload(format!("string on {}", type_name(&other)))),
    })
}

/// Formats a double the way cel-go does (Go's `%g`): the shortest digits that read back
/// exactly, in exponent form when the decimal exponent is below -4 or at least 6
/// (`1.0` → `"1"`, `2.5` → `"2.5"`, `100000.0` → `"100000"`, `1e6` → `"1e+06"`, `1e-5` → `"1e-05"`).
pub(crate) fn format_double(f: f64) -> std::string::String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Shortest round-trip digits and the decimal exponent, from Rust's `{:e}` ("1.5e-7").
    let scientific = format!("{f:e}");
    let Some((mantissa, exponent)) = scientific.split_once('e') else {
        return scientific;
    };
    let Ok(exponent) = exponent.parse::<i32>() else {
        return scientific;
    };
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let digits: std::string::String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if !(-4..6).contains(&exponent) {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            std::string::String::new()
        } else {
            format!(".{rest}")
        };
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}{fraction}e{exponent_sign}{:02}", exponent.abs());
    }
    if exponent < 0 {
        let zeros = "0".repeat((-exponent - 1) as usize);
        return format!("{sign}0.{zeros}{digits}");
    }
    let point = exponent as usize + 1;
    if digits.len() <= point {
        format!("{sign}{digits}{}", "0".repeat(point - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..point], &digits[point..])
    }
}

fn to_int(value: Value) -> Result<Value, EvalError> {
    match value {
        Value::Int(_) => Ok(value),
        Value::UInt(u) => i64::try_from(u)
            .map(Value::Int)
            .map_err(|_| EvalError::Overflow("int")),
        Value::Float(f) => {
            if f.is_finite() && f > -9.223_372_036_854_776e18 && f < 9.223_372_036_854_776e18 {
                Ok(Value::Int(f.trunc() as i64))
            } else {
                Err(EvalError::Overflow("int"))
            }
        }
        Value::String(s) => s
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| EvalError::function("int", format!("cannot parse {s:?}"))),
        Value::Timestamp(t) => Ok(Value::Int(t.timestamp())),
        // Nanoseconds, as cel-go.
        Value::Duration(d) => d
            .num_nanoseconds()
            .map(Value::Int)
            .ok_or(EvalError::Overflow("int")),
        other => Err(EvalError::overload(format!("int on {}", type_name(&other)))),
    }
}

fn to_uint(value: Value) -> Result<Value, EvalError> {
    match value {
        Value::UInt(_) => Ok(value),
        Value::Int(i) => u64::try_from(i)
            .map(Value::UInt)
            .map_err(|_| EvalError::Overflow("uint")),
        Value::Float(f) => {
            if f.is_finite() && f > -1.0 && f < 1.844_674_407_370_955_2e19 {
                Ok(Value::UInt(f.trunc() as u64))
            } else {
                Err(EvalError::Overflow("uint"))
            }
        }
        Value::String(s) => s
            .parse::<u64>()
            .map(Value::UInt)
            .map_err(|_| EvalError::function("uint", format!("cannot parse {s:?}"))),
        other => Err(EvalError::overload(format!("uint on {}", type_name(&other)))),
    }
}

fn to_double(value: Value) -> Result<Value, EvalError> {
    match value {
        Value::Float(_) => Ok(value),
        Value::Int(i) => Ok(Value::Float(i as f64)),
        Value::UInt(u) => Ok(Value::Float(u as f64)),
        Value::String(s) => s
            .parse::<f64>()
            .map(Value::Float)
            .map_err(|_| EvalError::function("double", format!("cannot parse {s:?}"))),
        other => Err(EvalError::overload(format!("double on {}", type_name(&other)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_like_go_percent_g() {
        let cases = [
            (1.0, "1"),
            (2.5, "2.5"),
            (-2.5, "-2.5"),
            (100000.0, "100000"),
            (123456.7, "123456.7"),
            (1e6, "1e+06"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (1e100, "1e+100"),
            (0.1 + 0.2, "0.30000000000000004"),
            (0.0, "0"),
            (f64::INFINITY, "+Inf"),
        ];
        for (value, expected) in cases {
            assert_eq!(format_double(value), expected, "{value}");
        }
    }
}
