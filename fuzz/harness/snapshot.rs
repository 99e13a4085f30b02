//! Fuzz harness of the snapshot loader (`kubectl get -o yaml|json` Lists, multi-document,
//! positioned errors: `SnapshotLoader::add_str`): the input is one snapshot file; a model that
//! loads is asked for the impact of recorded requests (a StatefulSet scale-down, a Namespace
//! delete) through the built-in pack, so the indexes and rules run over fuzzed objects.
//! Properties: nothing panics, and every error has a message.

use policies_cel::cluster::snapshot::SnapshotLoader;
use policies_cel::evaluate;

use super::fixtures;

/// Runs one input; panics when the loader or the estimate panics.
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut loader = SnapshotLoader::new();
    loader.add_str("fuzz.yaml", &text);
    match loader.finish() {
        Ok(model) => {
            for request in fixtures::requests() {
                let impact = policies_cel::impact::estimate(request, &model);
                let _ = impact.to_value();
                let decision = evaluate(fixtures::pack(), request, &model);
                assert!(
                    decision.allowed == decision.denials.is_empty(),
                    "denied without a denial, or allowed with one"
                );
            }
        }
        Err(error) => assert!(
            !error.to_string().is_empty(),
            "a snapshot error without a message"
        ),
    }
}
