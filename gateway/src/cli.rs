//! The `suture-gateway` binary's body: parse the command line, set up logging to stderr (colour
//! only on a terminal: a container's log is a file), run the gateway on a multi-threaded runtime,
//! map errors to exit codes (2 usage, 1 failure).

use std::io::IsTerminal;
use std::process::ExitCode;

use tracing_subscriber::EnvFilter;

use crate::config::Config;

/// Runs the gateway as the `suture-gateway` process.
pub fn main() -> ExitCode {
    let config = Config::from_args();
    let filter = match EnvFilter::try_new(&config.log_level) {
        Ok(filter) => filter,
        Err(error) => {
            eprintln!(
                "suture-gateway: invalid --log-level `{}`: {error}",
                config.log_level
            );
            return ExitCode::from(2);
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("suture-gateway")
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("suture-gateway: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(crate::run::run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("suture-gateway: {error:#}");
            ExitCode::FAILURE
        }
    }
}
