//! `kubectl suture completion SHELL`: the shell completion script for the `kubectl-suture`
//! command (subcommands, flags and their values), or `kubectl`: the `kubectl_complete-suture`
//! executable through which kubectl completes `kubectl suture ...`; and the hidden
//! `__complete` command that executable calls.

use clap::{Args, CommandFactory, ValueEnum};
use clap_complete::Shell;

use crate::cli::Cli;
use crate::complete::{KUBECTL_SCRIPT, complete};
use crate::exit::Exit;

/// What to complete for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Target {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
    /// kubectl's plugin completion (`kubectl suture <TAB>`, kubectl 1.26+)
    Kubectl,
}

/// Arguments of `kubectl suture completion`.
#[derive(Debug, Args)]
#[command(after_help = HELP)]
pub struct CompletionArgs {
    /// The shell to complete for, or kubectl
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Target,
}

/// Arguments of the hidden `__complete` (cobra's protocol, called by kubectl_complete-suture).
#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// The words after `kubectl suture`, the last one being completed
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<String>,
}

const HELP: &str = "\
Examples:
  # bash, for this session; add the line to ~/.bashrc to keep it
  source <(kubectl-suture completion bash)

  # zsh
  kubectl-suture completion zsh > \"${fpath[1]}/_kubectl-suture\"

  # fish
  kubectl-suture completion fish > ~/.config/fish/completions/kubectl-suture.fish

  # kubectl suture <TAB> (kubectl 1.26+): an executable kubectl_complete-suture on PATH
  kubectl-suture completion kubectl > ~/.local/bin/kubectl_complete-suture
  chmod +x ~/.local/bin/kubectl_complete-suture

Exit status:
  0  the script was printed
  2  usage error (an unknown shell)";

/// Prints the completion script for `args.shell`.
pub fn run(args: &CompletionArgs) -> Exit {
    let shell = match args.shell {
        Target::Bash => Shell::Bash,
        Target::Zsh => Shell::Zsh,
        Target::Fish => Shell::Fish,
        Target::Powershell => Shell::PowerShell,
        Target::Elvish => Shell::Elvish,
        Target::Kubectl => {
            print!("{KUBECTL_SCRIPT}");
            return Exit::Success;
        }
    };
    let mut command = Cli::command();
    clap_complete::generate(shell, &mut command, "kubectl-suture", &mut std::io::stdout());
    Exit::Success
}

/// Answers kubectl's completion request.
pub fn run_complete(args: &CompleteArgs) -> Exit {
    print!("{}", complete(&Cli::command(), &args.words));
    Exit::Success
}
