//! `suture-gateway`: the validating admission webhook. Everything lives in the `suture-gateway`
//! library (`suture_gateway::cli::main`); this file only chooses the allocator.

/// mimalloc: glibc malloc fragments after a large cluster model is built, which doubles the time
/// of allocation-heavy impact estimates (see policies-cel/benches/impact.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    suture_gateway::cli::main()
}
