//! `kubectl suture completion SHELL`: the shell completion script for the `kubectl-suture`
//! command (subcommands, flags and their values).

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use crate::cli::Cli;
use crate::exit::Exit;

/// Arguments of `kubectl suture completion`.
#[derive(Debug, Args)]
#[command(after_help = HELP)]
pub struct CompletionArgs {
    /// The shell to complete for
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

const HELP: &str = "\
Examples:
  # bash, for this session; add the line to ~/.bashrc to keep it
  source <(kubectl-suture completion bash)

  # zsh
  kubectl-suture completion zsh > \"${fpath[1]}/_kubectl-suture\"

  # fish
  kubectl-suture completion fish > ~/.config/fish/completions/kubectl-suture.fish

The scripts complete the kubectl-suture command; completing `kubectl suture ...` through
kubectl's plugin completion (a kubectl_complete-suture executable) is not provided yet.

Exit status:
  0  the script was printed
  2  usage error (an unknown shell)";

/// Prints the completion script for `args.shell`.
pub fn run(args: &CompletionArgs) -> Exit {
    let mut command = Cli::command();
    clap_complete::generate(args.shell, &mut command, "kubectl-suture", &mut std::io::stdout());
    Exit::Success
}
