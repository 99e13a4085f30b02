//! Fuzz harness of `kubectl suture replay`'s audit-log reader: the input is an audit log (JSON
//! lines of `audit.k8s.io/v1` Events) replayed by `suture_plugin::replay::replay` with the
//! built-in pack against a fresh model of the `storage` scene, so each event is rebuilt into a
//! review, judged, recorded and applied to the model. Properties: nothing panics, and a log that
//! is refused says why.

use std::sync::OnceLock;

use policies_cel::cluster::ClusterModel;
use suture_plugin::replay::replay;

use super::fixtures;

/// The `storage` scene: a small model.
const STORAGE: &str = include_str!("../../testdata/clusters/storage/snapshot.yaml");

/// A fresh copy of the `storage` scene's model (the replay changes it): loaded once, copied for
/// each input (a copy costs a fraction of reading the snapshot again).
fn storage() -> ClusterModel {
    static LOADED: OnceLock<ClusterModel> = OnceLock::new();
    LOADED.get_or_init(|| fixtures::fresh_model(STORAGE)).clone()
}

/// Runs one input; panics when the replay panics.
pub fn run(data: &[u8]) {
    let model = storage();
    match replay("fuzz.audit.jsonl", data, fixtures::pack(), model) {
        Ok(tally) => {
            let _ = format!("{tally:?}");
        }
        Err(error) => assert!(!error.to_string().is_empty(), "a replay error without a message"),
    }
}
