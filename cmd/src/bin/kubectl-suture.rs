//! `kubectl-suture`: a thin main; everything lives in the `suture-plugin` library.

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
