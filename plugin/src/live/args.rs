//! kubectl's flags for reaching a cluster: `--kubeconfig`, `--context`, `--request-timeout`.
//! (`-n`, `-A` and `--as`/`--as-group` belong to each command: for `check` and `impact` they say
//! where the what-if object is, how far to read and who asks.)

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

/// How to reach the cluster in live mode.
#[derive(Debug, Clone, Default, Args)]
pub struct KubeArgs {
    /// Path to the kubeconfig file [default: $KUBECONFIG, else ~/.kube/config; in a pod, its
    /// service account]
    #[arg(long = "kubeconfig", value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context to use [default: the current context]
    #[arg(long = "context", value_name = "NAME")]
    pub context: Option<String>,

    /// How long to wait for each request to the API server, as kubectl takes it: a number of
    /// seconds or a duration (30s, 2m, 1m30s, 1.5h); 0 waits forever [default: kube's client
    /// defaults]
    #[arg(long = "request-timeout", value_name = "DURATION", value_parser = parse_timeout)]
    pub request_timeout: Option<Duration>,
}

/// kubectl's `--request-timeout` syntax: a bare number of seconds, or Go's duration syntax (a
/// sequence of decimal numbers with a unit each: `ns`, `us`, `ms`, `s`, `m`, `h`). `0` is a zero
/// duration, which the client reads as no timeout.
pub fn parse_timeout(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let invalid = || format!("{text:?} is not a duration (e.g. 30s, 2m, 1m30s, 0 for no timeout)");
    if let Ok(seconds) = text.parse::<u64>() {
        return Ok(Duration::from_secs(seconds));
    }
    let mut rest = text;
    let mut seconds = 0.0_f64;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(invalid)?;
        let (number, after) = rest.split_at(number_end);
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_end);
        let number: f64 = number.parse().map_err(|_| invalid())?;
        let scale = match unit {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(format!("{text:?}: unknown unit {unit:?} (use ms, s, m or h)")),
        };
        seconds += number * scale;
        rest = next;
    }
    if text.is_empty() {
        return Err(invalid());
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("{text:?} is too long a duration"))
}

impl KubeArgs {
    /// True when a flag asked for a cluster explicitly.
    pub fn explicit(&self) -> bool {
        self.kubeconfig.is_some() || self.context.is_some()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn timeouts_read_like_kubectl() {
        let secs = Duration::from_secs;
        assert_eq!(parse_timeout("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_timeout("15").unwrap(), secs(15));
        assert_eq!(parse_timeout("30s").unwrap(), secs(30));
        assert_eq!(parse_timeout("2m").unwrap(), secs(120));
        assert_eq!(parse_timeout("1m30s").unwrap(), secs(90));
        assert_eq!(parse_timeout("1.5h").unwrap(), secs(5400));
        assert_eq!(parse_timeout("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_timeout("5d").unwrap_err().contains("unknown unit"));
        assert!(parse_timeout("soon").unwrap_err().contains("not a duration"));
        assert!(parse_timeout("").unwrap_err().contains("not a duration"));
        assert!(
            parse_timeout("99999999999999999999h")
                .unwrap_err()
                .contains("too long")
        );
    }
}
