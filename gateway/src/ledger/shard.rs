//! A replica's shard of the ledger: one ConfigMap, named after the replica, labelled so every
//! replica can watch the shards alone, holding its records as JSON under one key. Bounded so
//! it stays well under the 1 MiB an object may hold.

use policies_cel::history::{Ledger, Record};
use serde_json::{Value, json};

/// The label every shard carries (value `shard`), and the watch's selector.
pub const LABEL: &str = "suture.dev/ledger";
/// The selector of the shards' watch.
pub const SELECTOR: &str = "suture.dev/ledger=shard";
/// The data key holding the records (a JSON array).
pub const KEY: &str = "records.json";
/// The newest records a shard holds at most: about 230 bytes each as JSON, so under 700 KiB.
pub const MAX_RECORDS: usize = 3_000;
/// The prefix of every shard's name (self-protection guards the shards by it).
pub const PREFIX: &str = "suture-ledger-";

/// Why a shard could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("the object has no metadata.name")]
    NoName,
    #[error("data.{KEY} is not a JSON array of ledger records: {0}")]
    Records(#[source] serde_json::Error),
}

/// The shard name of a replica: `suture-ledger-` and its identity as a DNS label (lowercase
/// letters, digits and `-`; anything else becomes `-`), at most 253 characters.
pub fn name_for(identity: &str) -> String {
    let label: String = identity
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '-' | '.') => c,
            _ => '-',
        })
        .collect();
    let label = label.trim_matches(|c| c == '-' || c == '.');
    let label = if label.is_empty() { "gateway" } else { label };
    let mut name = format!("{PREFIX}{label}");
    name.truncate(253);
    name.trim_end_matches(['-', '.']).to_owned()
}

/// The shard `name` in `namespace` holding the newest [`MAX_RECORDS`] of `ledger`, as the
/// object a server-side apply sends.
pub fn object(name: &str, namespace: &str, ledger: &Ledger) -> Result<Value, serde_json::Error> {
    let skip = ledger.len().saturating_sub(MAX_RECORDS);
    let records: Vec<&Record> = ledger.records().skip(skip).collect();
    Ok(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {LABEL: "shard", "app.kubernetes.io/managed-by": "suture-gateway"},
        },
        "data": {KEY: serde_json::to_string(&records)?},
    }))
}

/// The name and records of a shard as a watch delivers it. No data (an object being created)
/// reads as no records.
pub fn read(object: &Value) -> Result<(String, Vec<Record>), ShardError> {
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .ok_or(ShardError::NoName)?
        .to_owned();
    let records = match object.pointer(&format!("/data/{KEY}")).and_then(Value::as_str) {
        None => Vec::new(),
        Some(text) => serde_json::from_str(text).map_err(ShardError::Records)?,
    };
    Ok((name, records))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use chrono::DateTime;
    use policies_cel::history::Figures;

    fn record(seconds: i64) -> Record {
        let at = DateTime::from_timestamp(1_800_000_000 + seconds, 0).unwrap();
        let figures = Figures {
            pods_disrupted: 1,
            ..Figures::default()
        };
        Record::new(at, "system:serviceaccount:db:pg-operator", "db", figures)
    }

    #[test]
    fn names_are_dns_names_after_the_replica() {
        assert_eq!(
            name_for("suture-gateway-7d9f-x2x"),
            "suture-ledger-suture-gateway-7d9f-x2x"
        );
        assert_eq!(name_for("Host_Name:8443"), "suture-ledger-host-name-8443");
        assert_eq!(name_for("__"), "suture-ledger-gateway");
        assert!(name_for(&"a".repeat(400)).len() <= 253);
    }

    #[test]
    fn a_shard_round_trips_its_records_and_keeps_the_newest() {
        let mut ledger = Ledger::default();
        for s in 0..5 {
            ledger.record(record(s));
        }
        let object = object("suture-ledger-a", "suture-system", &ledger).unwrap();
        assert_eq!(object["metadata"]["labels"][LABEL], "shard");
        let (name, records) = read(&object).unwrap();
        assert_eq!(name, "suture-ledger-a");
        assert_eq!(records, ledger.records().cloned().collect::<Vec<_>>());

        let mut big = Ledger::with_limits(chrono::Duration::hours(1), MAX_RECORDS * 2);
        for s in 0..(MAX_RECORDS as i64 + 10) {
            big.record(record(s));
        }
        let (_, records) = read(&object_of(&big)).unwrap();
        assert_eq!(records.len(), MAX_RECORDS);
        assert_eq!(records[0], record(10), "the oldest go first");
        let bytes = object_of(&big)["data"][KEY].as_str().unwrap().len();
        assert!(bytes < 900 * 1024, "{bytes} bytes");
    }

    fn object_of(ledger: &Ledger) -> Value {
        object("suture-ledger-a", "suture-system", ledger).unwrap()
    }

    #[test]
    fn unreadable_shards_are_errors_not_panics() {
        assert!(matches!(read(&json!({})), Err(ShardError::NoName)));
        let broken = json!({"metadata": {"name": "x"}, "data": {KEY: "{not json"}});
        assert!(matches!(read(&broken), Err(ShardError::Records(_))));
        let empty = json!({"metadata": {"name": "x"}});
        assert_eq!(read(&empty).unwrap().1, vec![]);
    }
}
