//! Offline mode: the model comes from `--cluster` snapshots and is rebuilt when they change. A
//! snapshot that fails to load keeps the previous model (logged, counted, shown in `/readyz`).
//! While the files are unchanged and the last load succeeded, each poll marks the model current:
//! offline, the snapshots are the cluster's truth.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use policies_cel::cluster::{ClusterModel, SnapshotError, load_snapshots};

use crate::health::Health;
use crate::metrics::Metrics;
use crate::model::LiveModel;
use crate::reload::Fingerprint;

/// Loads every snapshot under `paths` into one model.
pub fn load_model(paths: &[PathBuf]) -> Result<ClusterModel, SnapshotError> {
    let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    load_snapshots(&paths, &mut |_| {})
}

/// Keeps a [`LiveModel`] in step with snapshot files.
#[derive(Debug)]
pub struct SnapshotWatcher {
    pub model: Arc<LiveModel>,
    pub paths: Vec<PathBuf>,
    pub metrics: Arc<Metrics>,
    pub health: Arc<Health>,
}

impl SnapshotWatcher {
    /// Polls every `interval` until dropped.
    pub async fn run(self, interval: Duration) {
        let mut seen = Fingerprint::of(&self.paths);
        let mut healthy = true;
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticker.tick().await;
        loop {
            ticker.tick().await;
            let now = Fingerprint::of(&self.paths);
            if now == seen {
                if healthy {
                    self.model.touch();
                }
                continue;
            }
            seen = now;
            let paths = self.paths.clone();
            match tokio::task::spawn_blocking(move || load_model(&paths)).await {
                Ok(Ok(model)) => {
                    let objects = model.len();
                    // Swap under the write lock; drop the old model (maybe large) after it.
                    let old = std::mem::replace(&mut *self.model.write(), model);
                    tokio::task::spawn_blocking(move || drop(old));
                    self.health.set_snapshot_error(None);
                    healthy = true;
                    tracing::info!(objects, "cluster snapshots reloaded");
                }
                Ok(Err(error)) => {
                    let message = crate::error_chain(&error);
                    tracing::error!(error = %message, "snapshot reload failed; the previous model keeps serving");
                    self.metrics.snapshot_reload_failed();
                    self.health.set_snapshot_error(Some(message));
                    healthy = false;
                }
                Err(error) => tracing::error!(%error, "snapshot reload task failed"),
            }
        }
    }
}
