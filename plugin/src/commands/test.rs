//! `kubectl suture test`: run policy unit-test suites and report (text, JSON or JUnit XML).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::anyhow;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use regex::Regex;

use crate::exit::{Exit, Failure, OrExit};
use crate::live::KubeArgs;
use crate::policies::TargetVersion;
use crate::report;
use crate::style::Style;
use crate::suite;

/// Output formats of `test`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum TestOutput {
    #[default]
    Text,
    Json,
    Junit,
}

/// Arguments of `kubectl suture test`.
#[derive(Debug, Args)]
#[command(after_help = HELP)]
pub struct TestArgs {
    /// Suite files, or directories searched recursively for *.yaml suites [default: .]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Report format
    #[arg(short = 'o', long = "output", value_enum, default_value_t)]
    pub output: TestOutput,

    /// Judge the suites that name no `cluster:` against the live cluster of the kubeconfig
    /// (read once, whole, and only when a selected case needs it) instead of an empty cluster;
    /// --kubeconfig or --context imply it. Without any of the three, suites stay hermetic.
    #[arg(long = "live")]
    pub live: bool,

    #[command(flatten)]
    pub kube: KubeArgs,

    /// Run only the cases whose name (or `<suite>/<case>`) matches this regular expression
    #[arg(long = "run", value_name = "REGEX")]
    pub run: Option<String>,

    #[command(flatten)]
    pub target: TargetVersion,
}

const HELP: &str = "\
Suites are YAML files with `apiVersion: suture.dev/v1alpha1` and `kind: SutureTest` (see
docs/test-suites.md). Directories are searched recursively; other YAML files are skipped.

Examples:
  # Run every suite under policies/
  kubectl suture test policies/

  # Run the scale-down cases of one suite
  kubectl suture test policies/statefulsets.test.yaml --run 'scale.?down'

  # Judge the suites that name no cluster against the live cluster of a context
  kubectl suture test policies/ --live --context staging

  # JUnit XML for CI
  kubectl suture test policies/ -o junit > suture-junit.xml

Exit status:
  0  every case passed
  1  some case failed
  2  usage error or unreadable suite (missing file, bad YAML, malformed case)
  3  a policy failed to load or compile";

/// Shows a progress bar only for long runs on a terminal.
const PROGRESS_THRESHOLD: usize = 50;

/// Runs `test`.
pub fn run(args: &TestArgs, style: Style) -> Result<Exit, Failure> {
    let filter = args
        .run
        .as_deref()
        .map(|re| {
            Regex::new(re).map_err(|e| Failure::usage(anyhow!("--run: invalid regular expression: {e}")))
        })
        .transpose()?;
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let suites = suite::load(&paths)?;
    let mut selected = 0;
    let mut need_cluster = false;
    for s in &suites {
        let cases = s
            .cases
            .iter()
            .filter(|c| suite::runner::selected(filter.as_ref(), s, &c.name))
            .count();
        selected += cases;
        // Only the suites that name no `cluster:` are judged against the live one.
        need_cluster |= cases > 0 && s.cluster.is_empty();
    }
    let live = if (args.live || args.kube.explicit()) && need_cluster {
        Some(crate::cluster::live_model(
            &args.kube,
            policies_cel::operators::catalog(),
        )?)
    } else {
        None
    };
    let progress = progress_bar(selected);
    let result = suite::run(
        &suites,
        filter.as_ref(),
        live.as_deref(),
        args.target.kubernetes_version,
        &progress,
    );
    progress.finish_and_clear();
    let result = result?;
    let text = match args.output {
        TestOutput::Text => report::text::render(&result, style),
        TestOutput::Json => report::json::render(&result).or_exit(Exit::Failure)?,
        TestOutput::Junit => report::junit::render(&result).or_exit(Exit::Failure)?,
    };
    print!("{text}");
    Ok(if result.failed() == 0 {
        Exit::Success
    } else {
        Exit::Failure
    })
}

fn progress_bar(cases: usize) -> ProgressBar {
    if cases <= PROGRESS_THRESHOLD || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(cases as u64), ProgressDrawTarget::stderr());
    if let Ok(template) = ProgressStyle::with_template("{bar:30} {pos}/{len} cases {wide_msg}") {
        bar.set_style(template);
    }
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}
