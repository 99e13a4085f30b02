//! AFL++ target: the admission body as policies-cel reads it: `WireReview::read` against `Request::from_review`, differentially. The harness (what is run and which properties are checked) is
//! `fuzz/harness/wire_review.rs`, which the `fuzz_regressions` tests include too.

#[path = "../harness/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;
#[path = "../harness/wire_review.rs"]
mod wire_review;

/// The allocator of the `suture-gateway` and `kubectl-suture` binaries: what is fuzzed allocates
/// as it does there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    fixtures::warm();
    afl::fuzz!(|data: &[u8]| {
        wire_review::run(data);
    });
}
