//! `kubectl suture version` (also `--version`).

use clap::{Args, ValueEnum};
use serde_json::json;

use crate::exit::Exit;

/// The plugin's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Output formats of `version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum VersionOutput {
    #[default]
    Text,
    Json,
}

/// Arguments of `kubectl suture version`.
#[derive(Debug, Args)]
#[command(after_help = HELP)]
pub struct VersionArgs {
    /// Output format
    #[arg(short = 'o', long = "output", value_enum, default_value_t)]
    pub output: VersionOutput,
}

const HELP: &str = "\
Examples:
  # The version
  kubectl suture version

  # As JSON, for scripts
  kubectl suture version -o json

Exit status:
  0  printed";

/// Prints the version.
pub fn run(args: &VersionArgs) -> Exit {
    match args.output {
        VersionOutput::Text => println!("kubectl-suture {VERSION}"),
        VersionOutput::Json => println!("{}", json!({"name": "kubectl-suture", "version": VERSION})),
    }
    Exit::Success
}
