//! `kubectl suture replay`: judge the mutating requests of a Kubernetes audit log with a policy
//! set and report what would have been denied or warned, per policy and per user.

use std::io::BufReader;
use std::path::PathBuf;

use clap::Args;

use crate::commands::check::parse_policy_source;
use crate::exit::{Exit, Failure, OrExit};
use crate::output::{self, Output};
use crate::policies::{PolicySource, TargetVersion};
use crate::replay::tally::Tally;
use crate::replay::{self, replay, replay_with_reports};
use crate::style::Style;
use crate::{cluster, input, policies, report};
use policies_cel::PolicySet;
use policies_cel::cluster::ClusterModel;
use policies_cel::reports::ReportBook;

/// Arguments of `kubectl suture replay`.
#[derive(Debug, Args)]
#[command(after_help = HELP)]
pub struct ReplayArgs {
    /// The audit log: audit.k8s.io/v1 events, one JSON object per line (`-` reads stdin)
    #[arg(long = "audit-log", value_name = "FILE")]
    pub audit_log: PathBuf,

    /// Policy file or directory (repeatable); `builtin` names the embedded pack [default: builtin]
    #[arg(long = "policies", value_name = "PATH", value_parser = parse_policy_source)]
    pub policies: Vec<PolicySource>,

    /// Parameter objects for policies with paramKind (repeatable)
    #[arg(long = "params", value_name = "FILE")]
    pub params: Vec<PathBuf>,

    #[command(flatten)]
    pub target: TargetVersion,

    /// Cluster snapshot the requests are estimated against (repeatable; the objects before
    /// updates and deletes come from it too)
    #[arg(long = "cluster", value_name = "PATH")]
    pub cluster: Vec<PathBuf>,

    /// How many findings the text report lists (all with -v)
    #[arg(long = "show", value_name = "N", default_value_t = 20)]
    pub show: usize,

    /// List every finding
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,

    /// Output format: text, json, yaml, jsonpath=TEMPLATE (e.g. jsonpath='{.byPolicy}'), or
    /// policyreport (the wgpolicyk8s.io/v1alpha2 PolicyReports the gateway would have written,
    /// as a YAML stream)
    #[arg(short = 'o', long = "output", default_value = "text", value_parser = parse_output)]
    pub output: ReplayOutput,
}

/// `replay -o`: a report format, or the PolicyReports.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplayOutput {
    Report(Output),
    PolicyReport,
}

fn parse_output(value: &str) -> Result<ReplayOutput, String> {
    const FORMATS: [&str; 4] = ["text", "json", "yaml", "jsonpath"];
    if value == "policyreport" {
        return Ok(ReplayOutput::PolicyReport);
    }
    output::parser(&FORMATS)(value)
        .map(ReplayOutput::Report)
        .map_err(|_| {
            format!(
                "unknown output format {value:?} (choose from {}, policyreport)",
                FORMATS.join(", ")
            )
        })
}

const HELP: &str = "\
Examples:
  # Which of last month's operator requests would the built-in pack have refused?
  kubectl suture replay --audit-log audit.log --cluster snapshot.json

  # Your own policies, every finding, as JSON for a dashboard
  kubectl suture replay --audit-log audit.log --policies policies/ --cluster snapshot/ -o json

  # What the gateway would have reported: PolicyReports (named suture-replay) for Policy Reporter
  kubectl suture replay --audit-log audit.log --cluster snapshot/ -o policyreport \
    | kubectl apply --server-side -f -

The log needs the Request or RequestResponse level for the resources you judge (objects come
from the request and response bodies); the objects before updates and deletes come from the
--cluster snapshot, which should be taken close to the log's time (just before its first event).
The log is judged in its own timeline: each request the policies admit changes the model for
the requests after it (creates add, updates replace, deletes remove), and what it disrupted is
recorded at its audit time into the history that budget policies (`history`) read.

Exit status:
  0  no request would have been denied
  1  some request would have been denied
  2  usage error or unreadable input (missing file, not an audit log, a snapshot that does not load)
  3  a policy failed to load or compile";

/// Runs `replay`: 0 when nothing would have been denied, 1 otherwise.
pub fn run(args: &ReplayArgs, style: Style) -> Result<Exit, Failure> {
    let name = if input::is_stdin(&args.audit_log) {
        "<stdin>".to_owned()
    } else {
        args.audit_log.display().to_string()
    };
    let set = policies::load(&args.policies, &args.params, args.target.kubernetes_version)?;
    let model = cluster::load_model(&args.cluster, &set.profiles)?;
    let reporting = args.output == ReplayOutput::PolicyReport;
    let (tally, book) = if input::is_stdin(&args.audit_log) {
        judge(&name, std::io::stdin().lock(), &set, model, reporting)
    } else {
        let file = std::fs::File::open(&args.audit_log)
            .map_err(|e| Failure::usage(anyhow::anyhow!("cannot read {name}: {e}")))?;
        judge(&name, BufReader::new(file), &set, model, reporting)
    }
    .or_exit(Exit::Usage)?;
    for bad in tally.bad_lines.iter().take(5) {
        eprintln!(
            "warning: {name}:{}: skipped, not an audit event: {}",
            bad.line, bad.message
        );
    }
    if tally.bad_lines.len() > 5 {
        eprintln!(
            "warning: {name}: {} more lines skipped",
            tally.bad_lines.len() - 5
        );
    }
    let text = match (&args.output, book) {
        (ReplayOutput::PolicyReport, Some(book)) => replay::reports::yaml(&book)
            .map_err(anyhow::Error::from)
            .or_exit(Exit::Failure)?,
        (ReplayOutput::Report(format), _) => match output::render(format, &tally)
            .map_err(anyhow::Error::msg)
            .or_exit(Exit::Failure)?
        {
            Some(text) => text,
            None => {
                let show = if args.verbose { usize::MAX } else { args.show };
                report::replay::text(&tally, &name, show, style)
            }
        },
        (ReplayOutput::PolicyReport, None) => String::new(),
    };
    print!("{text}");
    Ok(if tally.denied == 0 {
        Exit::Success
    } else {
        Exit::Failure
    })
}

/// Replays `log`, gathering PolicyReports when `reporting`.
fn judge(
    name: &str,
    log: impl std::io::BufRead,
    set: &PolicySet,
    model: ClusterModel,
    reporting: bool,
) -> Result<(Tally, Option<ReportBook>), replay::ReplayError> {
    if reporting {
        replay_with_reports(name, log, set, model).map(|(tally, book)| (tally, Some(book)))
    } else {
        replay(name, log, set, model).map(|tally| (tally, None))
    }
}
