//! Reloading from disk by polling: policy files (`-f`, `--params`) and offline snapshots
//! (`--cluster`). Each poll fingerprints the files under the given paths (path, size, mtime); a
//! change triggers one rebuild on the blocking pool. A broken rebuild keeps what was serving and
//! is reported (log, metric, `/readyz` detail).

mod fingerprint;
mod policies;
mod snapshots;

pub use fingerprint::Fingerprint;
pub use policies::watch_policies;
pub use snapshots::{SnapshotWatcher, load_model};
