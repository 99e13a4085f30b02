//! The fuzz targets' kept inputs of the readers that live in the plugin and the gateway
//! (`testdata/fuzz/{gateway_body,replay,suite}/`: every crash or hang found, and a few minimised
//! seeds), replayed through the very harnesses the AFL targets run (`fuzz/harness/*.rs`,
//! included below): each returns without a panic. The policies-cel readers' inputs are replayed
//! by policies-cel's own `fuzz_regressions` tests.

#[path = "../../../fuzz/harness/corpus.rs"]
mod corpus;
#[path = "../../../fuzz/harness/fixtures.rs"]
#[allow(dead_code)] // `warm` is for the AFL targets
mod fixtures;
#[path = "../../../fuzz/harness/gateway_body.rs"]
mod gateway_body;
#[path = "../../../fuzz/harness/replay.rs"]
mod replay;
#[path = "../../../fuzz/harness/suite.rs"]
mod suite;

#[test]
fn kept_bodies_get_an_answer_from_the_gateway() {
    assert!(corpus::replay("gateway_body", gateway_body::run) >= 3);
}

#[test]
fn kept_audit_logs_replay_or_say_why() {
    assert!(corpus::replay("replay", replay::run) >= 3);
}

#[test]
fn kept_suites_load_or_say_why() {
    assert!(corpus::replay("suite", suite::run) >= 3);
}
