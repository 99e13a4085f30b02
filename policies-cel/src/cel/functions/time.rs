//! Timestamp and duration accessors (`getHours`, `getDayOfWeek`, ...) with cel-go's semantics.
//!
//! Replaces the `cel` crate's, which read a timestamp in the offset it was written with instead
//! of UTC and ignore the time-zone argument (`ts.getHours('+02:00')`). Time zones are UTC and
//! fixed offsets (`'+05:30'`, `'-08:00'`); IANA names (`'America/New_York'`) need a time-zone
//! database and are an error rather than a silently wrong answer.

use chrono::{DateTime, Datelike, FixedOffset, Offset, Timelike};

use crate::cel::value::type_name;
use crate::cel::{EvalError, Value};

/// An accessor of the timestamp/duration library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Getter {
    FullYear,
    Month,
    DayOfYear,
    DayOfMonth,
    Date,
    DayOfWeek,
    Hours,
    Minutes,
    Seconds,
    Milliseconds,
}

impl Getter {
    pub(crate) fn resolve(name: &str, method: bool, argc: usize) -> Option<Getter> {
        if !method || argc > 1 {
            return None;
        }
        Some(match name {
            "getFullYear" => Getter::FullYear,
            "getMonth" => Getter::Month,
            "getDayOfYear" => Getter::DayOfYear,
            "getDayOfMonth" => Getter::DayOfMonth,
            "getDate" => Getter::Date,
            "getDayOfWeek" => Getter::DayOfWeek,
            "getHours" => Getter::Hours,
            "getMinutes" => Getter::Minutes,
            "getSeconds" => Getter::Seconds,
            "getMilliseconds" => Getter::Milliseconds,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Getter::FullYear => "getFullYear",
            Getter::Month => "getMonth",
            Getter::DayOfYear => "getDayOfYear",
            Getter::DayOfMonth => "getDayOfMonth",
            Getter::Date => "getDate",
            Getter::DayOfWeek => "getDayOfWeek",
            Getter::Hours => "getHours",
            Getter::Minutes => "getMinutes",
            Getter::Seconds => "getSeconds",
            Getter::Milliseconds => "getMilliseconds",
        }
    }
}

/// Calls `getter` on `this`, with the time zone `zone` (`Value::Null` when not given).
pub(crate) fn call(getter: Getter, this: &Value, zone: Option<Value>) -> Result<Value, EvalError> {
    match (this, zone) {
        (Value::Timestamp(t), None) => Ok(timestamp_field(getter, &t.with_timezone(&utc()))),
        (Value::Timestamp(t), Some(Value::String(zone))) => {
            let offset = parse_zone(&zone).map_err(|m| EvalError::function(getter.name(), m))?;
            Ok(timestamp_field(getter, &t.with_timezone(&offset)))
        }
        (Value::Duration(d), None) => {
            let value = match getter {
                Getter::Hours => d.num_hours(),
                Getter::Minutes => d.num_minutes(),
                Getter::Seconds => d.num_seconds(),
                Getter::Milliseconds => d.num_milliseconds(),
                _ => {
                    return Err(EvalError::overload(format!(
                        "{} on google.protobuf.Duration",
                        getter.name()
                    )));
                }
            };
            Ok(Value::Int(value))
        }
        (this, zone) => Err(EvalError::overload(format!(
            "{}({}) on {}",
            getter.name(),
            zone.as_ref().map(type_name).unwrap_or_default(),
            type_name(this)
        ))),
    }
}

fn utc() -> FixedOffset {
    chrono::Utc.fix()
}

fn timestamp_field(getter: Getter, t: &DateTime<FixedOffset>) -> Value {
    Value::Int(match getter {
        Getter::FullYear => i64::from(t.year()),
        Getter::Month => i64::from(t.month0()),
        Getter::DayOfYear => i64::from(t.ordinal0()),
        Getter::DayOfMonth => i64::from(t.day0()),
        Getter::Date => i64::from(t.day()),
        Getter::DayOfWeek => i64::from(t.weekday().num_days_from_sunday()),
        Getter::Hours => i64::from(t.hour()),
        Getter::Minutes => i64::from(t.minute()),
        Getter::Seconds => i64::from(t.second()),
        Getter::Milliseconds => i64::from(t.nanosecond() % 1_000_000_000 / 1_000_000),
    })
}

/// A time-zone argument as cel-go reads it: `UTC` (or empty), or `[+-]HH:MM`.
fn parse_zone(zone: &str) -> Result<FixedOffset, String> {
    if zone.is_empty() || zone == "UTC" {
        return Ok(utc());
    }
    let Some((hours, minutes)) = zone.split_once(':') else {
        return Err(format!(
            "unsupported time zone '{zone}': only UTC and fixed offsets such as '+05:30' are available offline"
        ));
    };
    let invalid = || format!("invalid time zone offset '{zone}'");
    let negative = hours.starts_with('-');
    let hours: i32 = hours
        .trim_start_matches(['+', '-'])
        .parse()
        .map_err(|_| invalid())?;
    let minutes: i32 = minutes.parse().map_err(|_| invalid())?;
    if !(0..60).contains(&minutes) {
        return Err(invalid());
    }
    let seconds = (hours * 60 + minutes) * 60;
    FixedOffset::east_opt(if negative { -seconds } else { seconds }).ok_or_else(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Value {
        Value::Timestamp(DateTime::parse_from_rfc3339(s).unwrap_or_default())
    }

    #[test]
    fn timestamps_are_read_in_utc_by_default() {
        let t = ts("2024-03-05T01:20:30.250+02:00");
        assert_eq!(call(Getter::Hours, &t, None), Ok(Value::Int(23)));
        assert_eq!(call(Getter::Date, &t, None), Ok(Value::Int(4)));
        assert_eq!(call(Getter::Milliseconds, &t, None), Ok(Value::Int(250)));
    }

    #[test]
    fn fixed_offsets_shift_the_reading() {
        let t = ts("2024-03-05T10:20:30Z");
        let zone = |z: &str| Some(Value::String(z.to_owned().into()));
        assert_eq!(call(Getter::Hours, &t, zone("+05:30")), Ok(Value::Int(15)));
        assert_eq!(call(Getter::Minutes, &t, zone("+05:30")), Ok(Value::Int(50)));
        assert_eq!(call(Getter::Hours, &t, zone("-11:00")), Ok(Value::Int(23)));
        assert_eq!(call(Getter::DayOfMonth, &t, zone("-11:00")), Ok(Value::Int(3)));
        assert!(matches!(
            call(Getter::Hours, &t, zone("Mars/Olympus")),
            Err(EvalError::Function { .. })
        ));
    }
}
