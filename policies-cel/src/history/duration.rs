//! Windows as policy authors write them: Go's duration syntax, as Kubernetes and CEL's
//! `duration()` read it (`10m`, `1h30m`, `90s`, `1.5h`, `500ms`).

/// Parses a Go duration (`10m`, `1h30m`, `1.5h`; a sign is allowed, as Go allows it).
pub fn parse(text: &str) -> Result<chrono::Duration, String> {
    let invalid = || format!("{text:?} is not a duration (write e.g. 30s, 10m, 1h30m)");
    let (negative, mut rest) = match text.trim() {
        t if t.starts_with('-') => (true, &t[1..]),
        t => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if rest == "0" {
        return Ok(chrono::Duration::zero());
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut nanos: f64 = 0.0;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(invalid)?;
        let (number, after) = rest.split_at(number_end);
        let value: f64 = number.parse().map_err(|_| invalid())?;
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_end);
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(invalid()),
        };
        nanos += value * scale;
        rest = after;
    }
    if !nanos.is_finite() || nanos > i64::MAX as f64 {
        return Err(invalid());
    }
    let duration = chrono::Duration::nanoseconds(nanos.round() as i64);
    Ok(if negative { -duration } else { duration })
}

/// A duration as Go prints it, to the second (`1h0m0s` → `1h`, `90s` → `1m30s`).
pub fn format(duration: &chrono::Duration) -> String {
    let seconds = duration.num_seconds();
    if seconds == 0 {
        return "0s".into();
    }
    let sign = if seconds < 0 { "-" } else { "" };
    let seconds = seconds.unsigned_abs();
    let (h, m, s) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    let mut text = sign.to_owned();
    if h > 0 {
        text.push_str(&format!("{h}h"));
    }
    if m > 0 {
        text.push_str(&format!("{m}m"));
    }
    if s > 0 {
        text.push_str(&format!("{s}s"));
    }
    text
}

/// Serialises a duration as Go duration text.
pub(crate) fn serialize<S: serde::Serializer>(duration: &chrono::Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format(duration))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn go_durations_are_read() {
        let s = chrono::Duration::seconds;
        assert_eq!(parse("10m").unwrap(), s(600));
        assert_eq!(parse("1h30m").unwrap(), s(5400));
        assert_eq!(parse("1.5h").unwrap(), s(5400));
        assert_eq!(parse("90s").unwrap(), s(90));
        assert_eq!(parse("500ms").unwrap(), chrono::Duration::milliseconds(500));
        assert_eq!(parse("0").unwrap(), s(0));
        assert_eq!(parse("-5m").unwrap(), s(-300));
        for bad in ["", "10", "m", "10 minutes", "1d", "1h-5m"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn durations_print_as_go_does() {
        let s = chrono::Duration::seconds;
        assert_eq!(format(&s(3600)), "1h");
        assert_eq!(format(&s(90)), "1m30s");
        assert_eq!(format(&s(5400)), "1h30m");
        assert_eq!(format(&s(0)), "0s");
        assert_eq!(parse(&format(&s(3723))).unwrap(), s(3723));
    }
}
