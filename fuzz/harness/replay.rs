//! Fuzz harness of `kubectl suture replay`'s audit-log reader: the input is an audit log (JSON
//! lines of `audit.k8s.io/v1` Events) replayed by `suture_plugin::replay::replay` with the
//! built-in pack against a fresh model of the `storage` scene, so each event is rebuilt into a
//! review, judged, recorded and applied to the model. Properties: nothing panics, and a log that
//! is refused says why.

use suture_plugin::replay::replay;

use super::fixtures;

/// The `storage` scene: small, so a fresh model per input is cheap.
const STORAGE: &str = include_str!("../../testdata/clusters/storage/snapshot.yaml");

/// Runs one input; panics when the replay panics.
pub fn run(data: &[u8]) {
    let model = fixtures::fresh_model(STORAGE);
    match replay("fuzz.audit.jsonl", data, fixtures::pack(), model) {
        Ok(tally) => {
            let _ = format!("{tally:?}");
        }
        Err(error) => assert!(!error.to_string().is_empty(), "a replay error without a message"),
    }
}
