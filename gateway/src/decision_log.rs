//! The decision log: one JSON line per answered AdmissionReview — who asked for what, the
//! verdict, the policies that denied or warned, the impact summary when one was computed, and
//! the latency. Never object bodies (Secrets flow through the webhook).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use policies_cel::impact::Summary;
use serde::Serialize;

/// The resource a request is about.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    pub group: String,
    pub version: String,
    pub resource: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

/// One line of the log.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
    /// RFC 3339, UTC, microseconds.
    pub time: String,
    pub uid: String,
    pub user: String,
    pub operation: String,
    pub resource: ResourceRef,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The request was a dry run: judged normally, nothing was persisted.
    pub dry_run: bool,
    /// `allowed` or `denied`.
    pub verdict: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub denied_by: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warned_by: Vec<String>,
    /// Why the failurePolicy answered instead of an evaluation (timeout, panic, internal, stale).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impact: Option<Summary>,
    pub latency_us: u64,
}

/// Where decisions go.
#[derive(Debug)]
pub enum DecisionLog {
    Off,
    Stdout,
    File(Mutex<File>),
}

impl DecisionLog {
    /// `stdout`, `off`, or a file path (appended to, created when missing).
    pub fn open(spec: &str) -> std::io::Result<Self> {
        Ok(match spec {
            "off" | "" => Self::Off,
            "stdout" | "-" => Self::Stdout,
            path => Self::File(Mutex::new(
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(Path::new(path))?,
            )),
        })
    }

    /// Whether records are written at all (callers skip building them otherwise).
    pub fn enabled(&self) -> bool {
        !matches!(self, Self::Off)
    }

    /// Writes one record as one line; a failed write is logged, never fatal.
    pub fn write(&self, record: &DecisionRecord) {
        let mut line = match serde_json::to_vec(record) {
            Ok(line) => line,
            Err(error) => {
                tracing::warn!(%error, "cannot serialize a decision record");
                return;
            }
        };
        line.push(b'\n');
        let written = match self {
            Self::Off => Ok(()),
            Self::Stdout => std::io::stdout().lock().write_all(&line),
            Self::File(file) => file.lock().unwrap_or_else(|p| p.into_inner()).write_all(&line),
        };
        if let Err(error) = written {
            tracing::warn!(%error, "cannot write the decision log");
        }
    }
}

/// The current time as the log writes it.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_single_json_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("decisions.log");
        let log = DecisionLog::open(path.to_str().unwrap()).unwrap();
        let record = DecisionRecord {
            uid: "u-1".into(),
            verdict: "denied",
            denied_by: vec!["p".into()],
            dry_run: true,
            ..DecisionRecord::default()
        };
        log.write(&record);
        log.write(&record);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let json: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(json["dryRun"], true);
        assert_eq!(json["deniedBy"], serde_json::json!(["p"]));
        assert!(json.get("impact").is_none());
        assert!(!DecisionLog::open("off").unwrap().enabled());
    }
}
