//! `kubectl suture check`: judge one AdmissionReview against policies and print the verdict;
//! or judge a what-if deletecollection, one DELETE per object, a file of several manifests, or
//! an action naming several objects, one request per object.

use std::path::PathBuf;

use clap::Args;
use policies_cel::history::Ledger;
use policies_cel::{evaluate, evaluate_in};

use crate::exit::{Exit, Failure, OrExit};
use crate::output::{self, Output};
use crate::policies;
use crate::policies::{PolicySource, TargetVersion};
use crate::report::check as report;
use crate::style::Style;
use crate::whatif::args::DEFAULT_AS;
use crate::whatif::{RequestArgs, Subject, actions, collection, manifests};

/// Arguments of `kubectl suture check`.
#[derive(Debug, Args)]
#[command(after_help = HELP)]
pub struct CheckArgs {
    #[command(flatten)]
    pub request: RequestArgs,

    /// Policy file or directory (repeatable); `builtin` names the embedded pack [default: builtin]
    #[arg(long = "policies", value_name = "PATH", value_parser = parse_policy_source)]
    pub policies: Vec<PolicySource>,

    /// Parameter objects for policies with paramKind (repeatable)
    #[arg(long = "params", value_name = "FILE")]
    pub params: Vec<PathBuf>,

    #[command(flatten)]
    pub target: TargetVersion,

    /// History of admitted disruption for policies that read `history` (a fixture: YAML or
    /// JSON records with `time` or `ago`, and an optional `now`; docs/test-suites.md)
    #[arg(long = "history", value_name = "FILE")]
    pub history: Option<PathBuf>,

    /// Output format: text, json, yaml, or jsonpath=TEMPLATE (e.g. jsonpath='{.denials[*].policy}')
    #[arg(short = 'o', long = "output", default_value = "text", value_parser = output::parser(&["text", "json", "yaml", "jsonpath"]))]
    pub output: Output,

    /// Also print every policy's outcome (text output)
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
}

const HELP: &str = "\
Examples:
  # Judge a recorded request with the built-in policy pack against a cluster snapshot
  kubectl suture check -f review.json --cluster snapshot.json

  # What if the operator deleted this StatefulSet? Or scaled this Deployment to zero? (TYPE/NAME
  # or kubectl's TYPE NAME)
  kubectl suture check delete statefulset/db -n prod --cluster snapshot.json --as system:serviceaccount:prod:db-operator
  kubectl suture check delete statefulset db -n prod --cluster snapshot.json --as system:serviceaccount:prod:db-operator
  kubectl suture check scale deployment/web --replicas 0 -n shop --cluster snapshot.json

  # What if it deleted these pods, one after the other (one request per name, in order)?
  kubectl suture check delete pod db-0 db-1 -n prod --cluster snapshot.json --as system:serviceaccount:prod:db-operator

  # What if it deleted every claim labelled app=pg at once (a deletecollection, judged one
  # DELETE per object as kube-apiserver sends them; -l, --field-selector or --all)?
  kubectl suture check delete pvc -l app=pg -n prod --cluster snapshot.json --as system:serviceaccount:prod:db-operator

  # Against the live cluster of the current kubeconfig context (reads what the request reaches)
  kubectl suture check delete statefulset/db -n prod --as system:serviceaccount:prod:db-operator
  kubectl suture check delete node/pool-3 --context staging --request-timeout 30s

  # What if this manifest were applied (UPDATE when it exists in the snapshot, else CREATE)?
  kubectl suture check -f deployment.yaml --cluster snapshot.json

  # What if a whole release were applied, or uninstalled (one request per object, in order)?
  helm template db ./chart | kubectl suture check -f - --cluster snapshot.json
  kubectl suture check -f release.yaml --operation DELETE --cluster snapshot.json

  # Judge it with your own policies (files or directories) and a params object
  kubectl suture check -f review.yaml --policies policies/ --params replica-limits.yaml

  # Would this eviction break the disruption budget, given what was admitted before it?
  kubectl suture check evict pod/pg-2 -n db --cluster snapshot.json --as system:serviceaccount:db:pg-operator --history history.yaml

  # Read the review from stdin and print the verdict as JSON
  cat review.json | kubectl suture check -f - -o json

Exit status:
  0  allowed (a collection, several manifests or several names: every request)
  1  denied (a collection, several manifests or several names: any request)
  2  usage error or unreadable input (missing file, bad YAML/JSON, not an AdmissionReview,
     a cluster or history fixture that cannot be read)
  3  a policy failed to load or compile";

/// `--policies` values: `builtin` or a path.
pub fn parse_policy_source(value: &str) -> Result<PolicySource, String> {
    if value.is_empty() {
        return Err("a policy path cannot be empty".into());
    }
    Ok(if value == "builtin" {
        PolicySource::Builtin
    } else {
        PolicySource::Path(PathBuf::from(value))
    })
}

/// Runs `check`: 0 allowed, 1 denied.
pub fn run(args: &CheckArgs, style: Style) -> Result<Exit, Failure> {
    let subject = args.request.subject()?;
    match subject {
        Subject::Collection => return run_collection(args, style),
        Subject::Manifests { name, documents } => return run_manifests(args, &name, &documents, style),
        Subject::Actions => return run_actions(args, style),
        _ => {}
    }
    let set = policies::load(&args.policies, &args.params, args.target.kubernetes_version)?;
    let history = history(args)?;
    let (cluster, request) = args.request.resolve(&subject, &set.profiles)?;
    let mut decision = match &history {
        Some(history) => evaluate_in(&set, &request, cluster.as_ref(), &history.context()),
        None => evaluate(&set, &request, cluster.as_ref()),
    };
    if decision.impact.is_none() && cluster.object_count() > 0 {
        decision.impact = Some(policies_cel::impact::estimate_with(
            &request,
            cluster.as_ref(),
            &set.profiles,
        ));
    }
    let text = match output::render(&args.output, &report::document(&decision))
        .map_err(anyhow::Error::msg)
        .or_exit(Exit::Failure)?
    {
        Some(text) => text,
        None => report::text(&decision, &request, args.verbose, style),
    };
    print!("{text}");
    Ok(if decision.allowed {
        Exit::Success
    } else {
        Exit::Failure
    })
}

/// Runs `check` on a what-if collection: each selected object's DELETE judged in turn against
/// the model with the admitted ones carried into it; 0 when every deletion is admitted, 1 when
/// any is denied.
fn run_collection(args: &CheckArgs, style: Style) -> Result<Exit, Failure> {
    let request = &args.request;
    request.one_cluster()?;
    let set = policies::load(&args.policies, &args.params, args.target.kubernetes_version)?;
    let history = history(args)?;
    let (mut model, selected, specs) = request.resolve_collection(&set.profiles)?;
    let (mut ledger, now) = ledger_and_now(history);
    let judged = collection::judge(&set, &specs, &mut model, &mut ledger, now).map_err(Failure::usage)?;
    let document = crate::report::collection::document(&selected, &judged);
    print_sequence(args, &document, document.allowed, |user| {
        crate::report::collection::text(&selected, &judged, user, args.verbose, style)
    })
}

/// Runs `check` on a file of several manifests: each object's request (as `kubectl apply -f`
/// sends them, or `--operation`'s) judged in turn, the admitted ones carried into the model; 0
/// when every request is admitted, 1 when any is denied.
fn run_manifests(
    args: &CheckArgs,
    file: &str,
    documents: &[manifests::Document],
    style: Style,
) -> Result<Exit, Failure> {
    let request = &args.request;
    request.one_cluster()?;
    let set = policies::load(&args.policies, &args.params, args.target.kubernetes_version)?;
    let history = history(args)?;
    let (mut model, default_namespace) = request.resolve_manifests(documents, &set.profiles)?;
    let (mut ledger, now) = ledger_and_now(history);
    let judged = manifests::judge(
        &set,
        &request.what_if,
        default_namespace.as_deref(),
        documents,
        &mut model,
        &mut ledger,
        now,
    )
    .map_err(|e| Failure::usage(e.context(file.to_owned())))?;
    let document = crate::report::manifests::document(file, &judged);
    print_sequence(args, &document, document.allowed, |user| {
        crate::report::manifests::text(file, &judged, user, args.verbose, style)
    })
}

/// Runs `check` on an action naming several objects (`delete pod a b`): each object's request
/// judged in turn, in the order given, the admitted ones carried into the model; 0 when every
/// request is admitted, 1 when any is denied.
fn run_actions(args: &CheckArgs, style: Style) -> Result<Exit, Failure> {
    let request = &args.request;
    let set = policies::load(&args.policies, &args.params, args.target.kubernetes_version)?;
    let history = history(args)?;
    let (mut model, default_namespace) = request.resolve_actions(&set.profiles)?;
    let (mut ledger, now) = ledger_and_now(history);
    let judged = actions::judge(
        &set,
        &request.what_if,
        default_namespace.as_deref(),
        &mut model,
        &mut ledger,
        now,
    )
    .map_err(Failure::usage)?;
    let action = actions::description(&request.what_if);
    let document = crate::report::actions::document(&action, &judged);
    print_sequence(args, &document, document.allowed, |user| {
        crate::report::actions::text(&action, &judged, user, args.verbose, style)
    })
}

/// The history a what-if sequence starts from: the `--history` fixture's ledger and time, else
/// none at the current time.
fn ledger_and_now(history: Option<crate::history::History>) -> (Ledger, chrono::DateTime<chrono::Utc>) {
    match history {
        Some(history) => (history.ledger, history.now),
        None => (Ledger::default(), chrono::Utc::now()),
    }
}

/// Prints a sequence's `document` in the `-o` format, or its `text` (given the user the requests
/// are judged as); 0 when every request was admitted (`allowed`), else 1.
fn print_sequence(
    args: &CheckArgs,
    document: &impl serde::Serialize,
    allowed: bool,
    text: impl FnOnce(&str) -> String,
) -> Result<Exit, Failure> {
    let rendered = output::render(&args.output, document)
        .map_err(anyhow::Error::msg)
        .or_exit(Exit::Failure)?;
    let user = args.request.what_if.as_user.as_deref().unwrap_or(DEFAULT_AS);
    print!("{}", rendered.unwrap_or_else(|| text(user)));
    Ok(if allowed { Exit::Success } else { Exit::Failure })
}

/// The `--history` fixture, when given.
fn history(args: &CheckArgs) -> Result<Option<crate::history::History>, Failure> {
    args.history
        .as_deref()
        .map(crate::history::load)
        .transpose()
        .map_err(Failure::usage)
}
