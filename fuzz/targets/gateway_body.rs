//! AFL++ target: the gateway's own body path, `suture_gateway::admission::parse::parse`, then the pack's judgement. The harness (what is run and which properties are checked) is
//! `fuzz/harness/gateway_body.rs`, which the `fuzz_regressions` tests include too.

#[path = "../harness/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;
#[path = "../harness/gateway_body.rs"]
mod gateway_body;

/// The allocator of the `suture-gateway` and `kubectl-suture` binaries: what is fuzzed allocates
/// as it does there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    fixtures::warm();
    afl::fuzz!(|data: &[u8]| {
        gateway_body::run(data);
    });
}
