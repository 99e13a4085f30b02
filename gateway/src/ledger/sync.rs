//! The shards' watch into the shared ledger: every shard listed or changed is read into it, a
//! deleted one leaves it, and a complete list forgets shards that are gone. A shard that cannot
//! be read is skipped with a warning naming it (never its contents); the others keep counting.

use std::sync::Arc;

use serde_json::Value;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::{ApiResource, DynamicObject};
use kube::runtime::watcher;

use crate::ledger::SharedLedger;
use crate::ledger::shard;
use crate::live::strip::Values;
use crate::live::watch::{Change, Sink, Watch};

/// The name the shards' watch reports its health under.
pub const WATCH_NAME: &str = "ledger shards (ConfigMap v1)";

/// The watch of every replica's shard in `namespace`: ConfigMaps with the shard label, values
/// kept (the records are their data).
pub fn watch(client: kube::Client, namespace: &str) -> Watch<DynamicObject> {
    let resource = ApiResource::erase::<ConfigMap>(&());
    Watch {
        name: WATCH_NAME.to_owned(),
        api: kube::Api::namespaced_with(client, namespace, &resource),
        resource,
        config: watcher::Config::default()
            .labels(shard::SELECTOR)
            .timeout(crate::live::DEFAULT_WATCH_TIMEOUT_SECS),
        values: Values::Keep,
    }
}

/// A [`Sink`] feeding shards into a [`SharedLedger`].
#[derive(Debug)]
pub struct LedgerSync {
    ledger: Arc<SharedLedger>,
    /// Shards seen by the list in progress.
    listed: Option<Vec<String>>,
}

impl LedgerSync {
    pub fn new(ledger: Arc<SharedLedger>) -> Self {
        Self { ledger, listed: None }
    }

    fn read(&mut self, object: &Value) {
        match shard::read(object) {
            Ok((name, records)) => {
                if let Some(listed) = &mut self.listed {
                    listed.push(name.clone());
                }
                self.ledger.shard_read(&name, records);
            }
            Err(error) => {
                let name = object
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("?");
                tracing::warn!(shard = name, %error, "ledger shard skipped: its records do not count");
            }
        }
    }
}

impl Sink for LedgerSync {
    fn change(&mut self, change: Change) {
        match change {
            Change::Listing => self.listed = Some(Vec::new()),
            Change::Listed(object) | Change::Applied(object) => self.read(&object),
            Change::ListDone => {
                if let Some(listed) = self.listed.take() {
                    self.ledger.shards_listed(&listed);
                }
            }
            Change::Deleted { name, .. } => self.ledger.shard_deleted(&name),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use chrono::DateTime;
    use policies_cel::history::{Figures, Ledger, Record};

    fn shard_with(name: &str, pods: u64) -> Value {
        let mut ledger = Ledger::default();
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let figures = Figures {
            pods_disrupted: pods,
            ..Figures::default()
        };
        ledger.record(Record::new(at, "op", "db", figures));
        shard::object(name, "suture-system", &ledger).unwrap()
    }

    fn pods(ledger: &SharedLedger) -> u64 {
        let now = DateTime::from_timestamp(1_800_000_010, 0).unwrap();
        ledger.with_view(|l| {
            l.totals(now, chrono::Duration::minutes(5), |_| true)
                .unwrap()
                .figures
                .pods_disrupted
        })
    }

    #[test]
    fn lists_changes_and_deletions_reach_the_ledger() {
        let ledger = Arc::new(SharedLedger::local("a"));
        let mut sync = LedgerSync::new(Arc::clone(&ledger));
        sync.change(Change::Listing);
        sync.change(Change::Listed(shard_with("suture-ledger-b", 2)));
        sync.change(Change::Listed(shard_with("suture-ledger-c", 3)));
        sync.change(Change::ListDone);
        assert_eq!(pods(&ledger), 5);
        sync.change(Change::Applied(shard_with("suture-ledger-b", 4)));
        assert_eq!(pods(&ledger), 7);
        sync.change(Change::Deleted {
            namespace: "suture-system".into(),
            name: "suture-ledger-c".into(),
        });
        assert_eq!(pods(&ledger), 4);
        // A re-list without b forgets it; a broken shard is skipped.
        sync.change(Change::Listing);
        sync.change(Change::Listed(
            serde_json::json!({"metadata": {"name": "suture-ledger-x"}, "data": {"records.json": "["}}),
        ));
        sync.change(Change::ListDone);
        assert_eq!(pods(&ledger), 0);
    }
}
