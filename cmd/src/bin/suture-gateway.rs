//! `suture-gateway`: prints its version; the webhook server is built in its own issue.

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
