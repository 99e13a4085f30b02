//! AFL++ target: the snapshot loader, then impact estimates over the loaded model. The harness (what is run and which properties are checked) is
//! `fuzz/harness/snapshot.rs`, which the `fuzz_regressions` tests include too.

#[path = "../harness/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;
#[path = "../harness/snapshot.rs"]
mod snapshot;

/// The allocator of the `suture-gateway` and `kubectl-suture` binaries: what is fuzzed allocates
/// as it does there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    fixtures::warm();
    afl::fuzz!(|data: &[u8]| {
        snapshot::run(data);
    });
}
