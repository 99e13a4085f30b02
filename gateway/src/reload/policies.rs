//! Policy files reloaded when they change, through [`PolicyReloader::reload`] (atomic swap; a
//! broken set keeps the last good one serving).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::policies::PolicyReloader;
use crate::reload::Fingerprint;

/// Polls `paths` every `interval` and reloads the policies on each change, until dropped.
pub async fn watch_policies(reloader: Arc<PolicyReloader>, paths: Vec<PathBuf>, interval: Duration) {
    if paths.is_empty() {
        return std::future::pending().await;
    }
    let mut seen = Fingerprint::of(&paths);
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    loop {
        ticker.tick().await;
        let now = Fingerprint::of(&paths);
        if now == seen {
            continue;
        }
        seen = now;
        let reloader = Arc::clone(&reloader);
        match tokio::task::spawn_blocking(move || {
            let result = reloader.reload();
            (
                result,
                reloader.store().current().len(),
                reloader.store().status().generation,
            )
        })
        .await
        {
            Ok((Ok(()), policies, generation)) => {
                tracing::info!(policies, generation, "policies reloaded");
            }
            Ok((Err(error), _, _)) => tracing::error!(
                error = %crate::error_chain(&error),
                "policy reload failed; the last good set keeps serving"
            ),
            Err(error) => tracing::error!(%error, "policy reload task failed"),
        }
    }
}
