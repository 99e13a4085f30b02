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

    /// How long to wait for each request to the API server (e.g. 30s, 2m, 1h; 0 waits forever)
    #[arg(long = "request-timeout", value_name = "DURATION", default_value = "0", value_parser = parse_timeout)]
    pub request_timeout: Timeout,
}

/// `--request-timeout`: `None` waits forever.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timeout(pub Option<Duration>);

/// kubectl's `--request-timeout` syntax: a number with a unit (`s`, `m`, `h`; `ms`), a bare
/// number of seconds, or 0 for no timeout.
pub fn parse_timeout(text: &str) -> Result<Timeout, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (e.g. 30s, 2m, 0 for no timeout)"))?;
    let duration = match unit {
        "" | "s" => Duration::from_secs(number),
        "ms" => Duration::from_millis(number),
        "m" => Duration::from_secs(number * 60),
        "h" => Duration::from_secs(number * 3600),
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (use ms, s, m or h)")),
    };
    Ok(Timeout((!duration.is_zero()).then_some(duration)))
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
        assert_eq!(parse_timeout("0").unwrap(), Timeout(None));
        assert_eq!(
            parse_timeout("15").unwrap(),
            Timeout(Some(Duration::from_secs(15)))
        );
        assert_eq!(
            parse_timeout("30s").unwrap(),
            Timeout(Some(Duration::from_secs(30)))
        );
        assert_eq!(
            parse_timeout("2m").unwrap(),
            Timeout(Some(Duration::from_secs(120)))
        );
        assert_eq!(
            parse_timeout("1h").unwrap(),
            Timeout(Some(Duration::from_secs(3600)))
        );
        assert_eq!(
            parse_timeout("250ms").unwrap(),
            Timeout(Some(Duration::from_millis(250)))
        );
        assert!(parse_timeout("5d").unwrap_err().contains("unknown unit"));
        assert!(parse_timeout("soon").unwrap_err().contains("not a duration"));
    }
}
