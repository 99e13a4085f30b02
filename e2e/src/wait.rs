//! Waiting on the cluster: poll a condition until it holds or a deadline passes, with an error
//! that says what was awaited and what was seen last.

use std::future::Future;
use std::time::{Duration, Instant};

/// How long the suite waits for controllers by default.
pub const SETTLE: Duration = Duration::from_secs(60);

/// Polls `check` every 200 ms until it returns `Ok(None)`; `Ok(Some(state))` describes why it
/// does not hold yet. Fails after `timeout` with `what` and the last state seen.
pub async fn until<F, Fut>(what: &str, timeout: Duration, mut check: F) -> anyhow::Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<Option<String>>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        let last = match check().await {
            Ok(None) => return Ok(()),
            Ok(Some(state)) => state,
            Err(error) => format!("error: {error:#}"),
        };
        if Instant::now() >= deadline {
            anyhow::bail!("timed out after {timeout:?} waiting for {what}; last seen: {last}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
