//! `kubectl-suture` as a library: the command line ([`cli`]), one module per subcommand
//! ([`commands`]), the test-suite runner ([`suite`]) and the reports ([`report`]).
//!
//! The binary is a thin main: [`Cli::parse_args`], [`run`], then [`Failure::report`] to stderr
//! and the [`Exit`] status.

pub mod cli;
pub mod cluster;
pub mod commands;
pub mod complete;
pub mod exit;
pub mod explain;
pub mod history;
pub mod input;
pub mod install;
pub mod kinds;
pub mod known_kinds;
pub mod live;
pub mod output;
pub mod policies;
pub mod replay;
pub mod report;
pub mod review;
pub mod scaffold;
pub mod selector;
pub mod style;
pub mod suite;
pub mod whatif;

pub use cli::{Cli, Command};
pub use exit::{Exit, Failure};

use style::Style;

/// Runs the parsed command line.
pub fn run(cli: &Cli) -> Result<Exit, Failure> {
    let style = Style::for_stdout(cli.no_color);
    match &cli.command {
        Command::Check(args) => commands::check::run(args, style),
        Command::Completion(args) => Ok(commands::completion::run(args)),
        Command::Complete(args) => Ok(commands::completion::run_complete(args)),
        Command::Eval(args) => commands::eval::run(args, cli.no_color),
        Command::Explain(args) => commands::explain::run(args),
        Command::Impact(args) => commands::impact::run(args, style),
        Command::Install(args) => commands::install::run(args),
        Command::Lint(args) => commands::lint::run(args, style),
        Command::Replay(args) => commands::replay::run(args, style),
        Command::Scaffold(args) => commands::scaffold::run(args),
        Command::Snapshot(args) => commands::snapshot::run(args),
        Command::Test(args) => commands::test::run(args, style),
        Command::Version(args) => Ok(commands::version::run(args)),
    }
}
