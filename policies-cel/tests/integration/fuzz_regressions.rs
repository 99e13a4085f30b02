//! The fuzz targets' kept inputs (`testdata/fuzz/<target>/`: every crash or hang found, and a few
//! minimised seeds), replayed through the very harnesses the AFL targets run
//! (`fuzz/harness/*.rs`, included below): each returns without a panic, and for the admission
//! body the one-pass and the typed readings agree whenever both accept. A property test of that
//! differential on generated reviews follows (`fuzz_differential.rs`).

#[path = "../../../fuzz/harness/cel.rs"]
mod cel;
#[path = "../../../fuzz/harness/corpus.rs"]
mod corpus;
#[path = "../../../fuzz/harness/fixtures.rs"]
#[allow(dead_code)] // `warm` is for the AFL targets
mod fixtures;
#[path = "../../../fuzz/harness/lint.rs"]
mod lint;
#[path = "../../../fuzz/harness/policy_loader.rs"]
mod policy_loader;
#[path = "../../../fuzz/harness/snapshot.rs"]
mod snapshot;
#[path = "../../../fuzz/harness/wire_review.rs"]
pub(crate) mod wire_review;

#[test]
fn kept_admission_bodies_read_alike_in_both_readings() {
    assert!(corpus::replay("wire_review", wire_review::run) >= 5);
}

#[test]
fn kept_cel_inputs_compile_and_evaluate_within_the_budget() {
    assert!(corpus::replay("cel", cel::run) >= 5);
}

#[test]
fn kept_policy_files_load_or_say_why() {
    assert!(corpus::replay("policy_loader", policy_loader::run) >= 3);
}

#[test]
fn kept_policy_files_lint_with_a_message_for_every_finding() {
    // The policy_loader target also linted until the lint had a target of its own: its inputs
    // stay lint inputs.
    assert!(corpus::replay("policy_loader", lint::run) >= 3);
    assert!(corpus::replay("lint", lint::run) >= 2);
}

#[test]
fn kept_snapshots_load_or_say_why() {
    assert!(corpus::replay("snapshot", snapshot::run) >= 3);
}
