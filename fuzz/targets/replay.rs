//! AFL++ target: `kubectl suture replay`'s audit-log reader, replayed against a small model. The harness (what is run and which properties are checked) is
//! `fuzz/harness/replay.rs`, which the `fuzz_regressions` tests include too.

#[path = "../harness/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;
#[path = "../harness/replay.rs"]
mod replay;

/// The allocator of the `suture-gateway` and `kubectl-suture` binaries: what is fuzzed allocates
/// as it does there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    fixtures::warm();
    afl::fuzz!(|data: &[u8]| {
        replay::run(data);
    });
}
