//! AFL++ target: the lint (policy files, YAML and JSON). The harness (what is run and which
//! properties are checked) is `fuzz/harness/lint.rs`, which the `fuzz_regressions` tests include
//! too.

#[path = "../harness/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;
#[path = "../harness/lint.rs"]
mod lint;
#[path = "../harness/policy_loader.rs"]
#[allow(dead_code)]
mod policy_loader;

/// The allocator of the `suture-gateway` and `kubectl-suture` binaries: what is fuzzed allocates
/// as it does there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // The built-in kinds' schemas are generated on first use: once, before the fork server.
    for (_, text) in policies_cel::pack::files() {
        lint::run(text.as_bytes());
    }
    afl::fuzz!(|data: &[u8]| {
        lint::run(data);
    });
}
