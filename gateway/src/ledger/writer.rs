//! The writer of this replica's shard: woken by admitted records, it waits one flush interval
//! to batch them, then server-side-applies the shard with the replica's records compacted to
//! the retention. A failed write is retried with backoff (the records stay in memory and
//! count for this replica meanwhile); every minute it also deletes the shards of replicas whose
//! records have all aged out. It never holds up an admission.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use tokio::sync::mpsc;

use crate::ledger::{SharedLedger, shard};

/// The field manager of the shards' server-side applies.
const FIELD_MANAGER: &str = "suture-gateway";
/// How often shards of replicas that left are looked for.
const EXPIRY_INTERVAL: Duration = Duration::from_secs(60);
/// The longest wait between retries of a failed write.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Writes one replica's shard.
#[derive(Debug, Clone)]
pub struct Writer {
    pub api: Api<ConfigMap>,
    pub namespace: String,
    pub ledger: Arc<SharedLedger>,
    /// How long records are batched before a write.
    pub flush: Duration,
}

impl Writer {
    /// Runs until `wake` closes (the gateway stops) or the future is dropped.
    pub async fn run(self, mut wake: mpsc::Receiver<()>) {
        let mut expiry = tokio::time::interval(EXPIRY_INTERVAL);
        loop {
            tokio::select! {
                woken = wake.recv() => if woken.is_none() { return },
                _ = expiry.tick() => {
                    self.expire().await;
                    continue;
                }
            }
            tokio::time::sleep(self.flush).await;
            let mut backoff = self.flush.max(Duration::from_millis(500));
            loop {
                while wake.try_recv().is_ok() {}
                match self.write().await {
                    Ok(()) => {
                        self.ledger.wrote(true);
                        break;
                    }
                    Err(error) => {
                        self.ledger.wrote(false);
                        tracing::warn!(shard = self.ledger.shard(), namespace = %self.namespace,
                            error = %error, "ledger shard write failed; other replicas do not see this \
                            replica's latest records until a retry succeeds");
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                    }
                }
            }
        }
    }

    /// One server-side apply of the shard.
    async fn write(&self) -> anyhow::Result<()> {
        let name = self.ledger.shard();
        let object = shard::object(name, &self.namespace, &self.ledger.own_records(Utc::now()))?;
        let params = PatchParams::apply(FIELD_MANAGER).force();
        self.api.patch(name, &params, &Patch::Apply(object)).await?;
        Ok(())
    }

    /// Deletes the shards whose records have all aged out.
    async fn expire(&self) {
        for name in self.ledger.expired_shards(Utc::now()) {
            match self.api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => {
                    tracing::info!(shard = %name, "ledger shard of a replica that left deleted: its records aged out");
                    self.ledger.shard_deleted(&name);
                }
                Err(kube::Error::Api(response)) if response.code == 404 => self.ledger.shard_deleted(&name),
                Err(error) => {
                    tracing::warn!(shard = %name, error = %error, "cannot delete an expired ledger shard")
                }
            }
        }
    }
}
