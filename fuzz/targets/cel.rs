//! AFL++ target: CEL parse, type-check, compile and evaluation under the cost budget. The harness (what is run and which properties are checked) is
//! `fuzz/harness/cel.rs`, which the `fuzz_regressions` tests include too.

#[path = "../harness/cel.rs"]
mod cel;
#[path = "../harness/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;

/// The allocator of the `suture-gateway` and `kubectl-suture` binaries: what is fuzzed allocates
/// as it does there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    fixtures::warm();
    afl::fuzz!(|data: &[u8]| {
        cel::run(data);
    });
}
