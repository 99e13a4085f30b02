//! The command line: `kubectl suture <command>`, with kubectl's conventions (`-f/--filename` with
//! `-` for stdin, `-o/--output`, `--no-color`) and examples in every `--help`.

use clap::{Parser, Subcommand};

use crate::commands::{
    check::CheckArgs,
    completion::{CompleteArgs, CompletionArgs},
    eval::EvalArgs,
    explain::ExplainArgs,
    impact::ImpactArgs,
    install::InstallArgs,
    lint::LintArgs,
    replay::ReplayArgs,
    scaffold::ScaffoldArgs,
    snapshot::SnapshotArgs,
    test::TestArgs,
    version::VersionArgs,
};

/// `kubectl suture`: judge Kubernetes admission requests with CEL safety policies, offline or live.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-suture",
    bin_name = "kubectl suture",
    version,
    about = "Judge Kubernetes admission requests with CEL safety policies, offline or against a live cluster",
    long_about = "Suture judges what an admission request would do to the cluster with CEL safety \
                  policies (ValidatingAdmissionPolicy and SafetyPolicy). These commands run the same \
                  evaluation as the suture-gateway webhook, against a cluster snapshot (--cluster) \
                  or, without one, the cluster of your kubeconfig.",
    after_help = TOP_HELP,
    propagate_version = true,
    disable_help_subcommand = true
)]
pub struct Cli {
    /// Never colour the output (colour is only used when stdout is a terminal; NO_COLOR is honoured)
    #[arg(long, global = true)]
    pub no_color: bool,

    #[command(subcommand)]
    pub command: Command,
}

const TOP_HELP: &str = "\
Examples:
  # Would this AdmissionReview be allowed by the built-in pack?
  kubectl suture check -f review.json

  # Try an expression against an object
  kubectl suture eval -e 'object.spec.replicas > 2' --object deployment.yaml

  # What would this request do to the cluster in a snapshot?
  kubectl suture impact -f review.json --cluster snapshot/

  # Run every policy test suite under ./policies
  kubectl suture test policies/

  # Find what is wrong with the policies under ./policies, with file:line:column
  kubectl suture lint policies/

  # Install the admission gateway, judging one operator's requests
  kubectl suture install --service-account ops/db-operator | kubectl apply --server-side -f -

  # Snapshot the live cluster, then ask what-ifs offline
  kubectl suture snapshot > cluster.yaml

  # Which of last month's requests would the pack have refused?
  kubectl suture replay --audit-log audit.log --cluster snapshot.json

Exit status:
  0  success (allowed / value printed / estimate printed / all cases passed)
  1  denied / evaluation error / some case failed
  2  usage error or unreadable input
  3  a policy or expression failed to load or compile";

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Judge an AdmissionReview against policies and print the verdict
    Check(CheckArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish, or kubectl's)
    Completion(CompletionArgs),
    /// cobra's completion protocol, for kubectl_complete-suture
    #[command(name = "__complete", hide = true)]
    Complete(CompleteArgs),
    /// Evaluate one CEL expression against objects, as a policy would
    Eval(EvalArgs),
    /// The CEL variables, the impact fields, the cluster library and the built-in pack
    Explain(ExplainArgs),
    /// Estimate what an AdmissionReview would do to the cluster
    Impact(ImpactArgs),
    /// Render the suture-gateway admission webhook's manifests
    Install(InstallArgs),
    /// Find what is wrong with policy files: compile errors, unknown fields, unreachable matches, ...
    Lint(LintArgs),
    /// Judge the mutating requests of an audit log and total what would have been denied
    Replay(ReplayArgs),
    /// Write a new policy and its test suite, ready to edit
    Scaffold(ScaffoldArgs),
    /// Write the live cluster as a slim `kind: List` snapshot for --cluster
    Snapshot(SnapshotArgs),
    /// Run policy unit-test suites (kind: SutureTest)
    Test(TestArgs),
    /// Print the version
    Version(VersionArgs),
}

impl Cli {
    /// Parses the process arguments; on a usage error prints it and exits 2 (help/version exit 0).
    pub fn parse_args() -> Self {
        Self::parse()
    }

    /// Parses `args` (the first item is the program name).
    pub fn try_parse_args<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Self::try_parse_from(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::EXIT_CODES_HELP;
    use clap::CommandFactory;

    #[test]
    fn the_cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_kubectl_style_flags() {
        let cli = Cli::try_parse_args([
            "kubectl-suture",
            "--no-color",
            "check",
            "-f",
            "-",
            "--policies",
            "builtin",
        ])
        .unwrap();
        assert!(cli.no_color);
        let Command::Check(args) = cli.command else {
            panic!("not check")
        };
        assert_eq!(args.request.filename, Some(std::path::PathBuf::from("-")));
        assert_eq!(args.policies, [crate::policies::PolicySource::Builtin]);
        let cli = Cli::try_parse_args([
            "kubectl-suture",
            "check",
            "delete",
            "sts/db",
            "-n",
            "prod",
            "--as",
            "bob",
        ])
        .unwrap();
        let Command::Check(args) = cli.command else {
            panic!("not check")
        };
        assert_eq!(args.request.what_if.action, ["delete", "sts/db"]);
        assert_eq!(args.request.what_if.namespace.as_deref(), Some("prod"));
        assert_eq!(args.request.what_if.as_user.as_deref(), Some("bob"));
    }

    #[test]
    fn help_lists_the_exit_codes() {
        assert!(TOP_HELP.ends_with(EXIT_CODES_HELP));
    }
}
