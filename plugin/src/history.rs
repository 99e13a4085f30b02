//! History fixtures for the offline commands — `check --history FILE` and a suite's or case's
//! `history:` (a file, or the fixture inline): the ledger of admitted disruption the `history`
//! CEL library reads, and the time the request is judged at (format: `docs/test-suites.md`).

use std::path::Path;

use chrono::{DateTime, Utc};
use policies_cel::EvalContext;
use policies_cel::history::{FixtureError, HistoryFixture, Ledger};
use serde::Deserialize;
use serde_json::Value as Json;

use crate::input::{self, InputError, Source};

/// A loaded fixture: the ledger and the time to judge at.
#[derive(Debug, Clone)]
pub struct History {
    pub ledger: Ledger,
    pub now: DateTime<Utc>,
}

impl History {
    /// The evaluation context that judges with this history.
    pub fn context(&self) -> EvalContext<'_> {
        EvalContext::with_history(&self.ledger, self.now)
    }
}

/// Reads the fixture file at `path` (YAML or JSON). Errors name the file and line.
pub fn load(path: &Path) -> Result<History, InputError> {
    let source = input::read_source(path)?;
    parse(&source)
}

/// Parses a fixture from `source`.
pub fn parse(source: &Source) -> Result<History, InputError> {
    let fixture = HistoryFixture::deserialize(serde_yaml_ng::Deserializer::from_str(&source.text))
        .map_err(|e| input::yaml_error(source, &e))?;
    resolve(&fixture).map_err(|error| match record_line(&source.text, error.index) {
        Some(line) => InputError::Invalid {
            name: format!("{}:{line}", source.name),
            message: error.to_string(),
        },
        None => InputError::invalid(source, error.to_string()),
    })
}

/// A fixture written inline (a suite's `history:` map); `at` names where, for messages.
pub fn from_value(value: &Json) -> Result<History, String> {
    let fixture: HistoryFixture = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.into_inner().to_string()
        } else {
            format!("{path}: {}", e.into_inner())
        }
    })?;
    resolve(&fixture).map_err(|e| e.to_string())
}

fn resolve(fixture: &HistoryFixture) -> Result<History, FixtureError> {
    let (ledger, now) = fixture.resolve(Utc::now())?;
    Ok(History { ledger, now })
}

/// The line where the `index`-th item of the top-level `records:` list starts (block style).
fn record_line(text: &str, index: usize) -> Option<usize> {
    let mut lines = text
        .lines()
        .enumerate()
        .skip_while(|(_, l)| !l.starts_with("records:"));
    lines.next()?;
    let mut items = lines.filter(|(_, l)| l.trim_start().starts_with("- "));
    let indent = |l: &str| l.len() - l.trim_start().len();
    let (first_at, first) = items.next()?;
    if index == 0 {
        return Some(first_at + 1);
    }
    let level = indent(first);
    items
        .filter(|(_, l)| indent(l) == level)
        .nth(index - 1)
        .map(|(at, _)| at + 1)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_fixture_is_read_with_ago_counted_from_its_now() {
        let source = Source::from_text(
            "h.yaml",
            "now: '2027-01-15T08:10:00Z'\nrecords:\n- {ago: 2m, user: a, podsDisrupted: 1}\n",
        );
        let history = parse(&source).unwrap();
        assert_eq!(history.now.to_rfc3339(), "2027-01-15T08:10:00+00:00");
        assert_eq!(history.ledger.len(), 1);
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let typo = Source::from_text("h.yaml", "records:\n- ago: 2m\n  user: a\n  pods: 1\n");
        let error = parse(&typo).unwrap_err().to_string();
        assert!(error.starts_with("h.yaml:4:"), "{error}");
        let untimed = Source::from_text(
            "h.yaml",
            "records:\n- ago: 2m\n  user: a\n- user: b\n  deleted: 1\n",
        );
        assert_eq!(
            parse(&untimed).unwrap_err().to_string(),
            "h.yaml:4: records[1]: give its `time` (RFC 3339) or `ago` (e.g. 3m)"
        );
    }

    #[test]
    fn an_inline_fixture_names_the_field_in_error() {
        let error = from_value(&serde_json::json!({"records": [{"ago": "1m", "user": "a", "deleted": "x"}]}))
            .unwrap_err();
        assert!(error.starts_with("records[0].deleted: "), "{error}");
    }
}
