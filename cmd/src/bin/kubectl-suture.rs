//! `kubectl-suture`: a thin main; everything lives in the `suture-plugin` library.

/// mimalloc: glibc malloc fragments after a large cluster model is built, which doubles the time
/// of allocation-heavy impact estimates (see policies-cel/benches/impact.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

use suture_plugin::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse_args();
    let exit = match suture_plugin::run(&cli) {
        Ok(exit) => exit,
        Err(failure) => {
            eprintln!("{}", failure.report());
            failure.exit()
        }
    };
    ExitCode::from(exit)
}
