//! `suture-gateway`: prints its version; the webhook server is built in its own issue.

/// mimalloc: glibc malloc fragments after a large cluster model is built, which doubles the time
/// of allocation-heavy impact estimates (see policies-cel/benches/impact.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--version" || a == "-V") {
        println!("suture-gateway {}", suture_gateway::VERSION);
        return ExitCode::SUCCESS;
    }
    eprintln!("{}", suture_gateway::NOT_YET_IMPLEMENTED);
    ExitCode::from(2)
}
