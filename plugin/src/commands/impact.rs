//! `kubectl suture impact`: what an AdmissionReview would do to the cluster, as a tree or as
//! the `impact` document policies read; for a what-if deletecollection, each object's deletion
//! in turn, and for a file of several manifests or an action naming several objects, each
//! object's request in turn.

use clap::Args;
use policies_cel::impact::estimate;

use crate::exit::{Exit, Failure, OrExit};
use crate::output::{self, Output};
use crate::report;
use crate::style::Style;
use crate::whatif::{RequestArgs, Subject, actions, collection, manifests};

/// Arguments of `kubectl suture impact`.
#[derive(Debug, Args)]
#[command(after_help = HELP)]
pub struct ImpactArgs {
    #[command(flatten)]
    pub request: RequestArgs,

    /// Output format: a tree for people (text), the `impact` document as json or yaml, or
    /// jsonpath=TEMPLATE (e.g. jsonpath='{.summary.podsDisrupted}')
    #[arg(short = 'o', long = "output", default_value = "text", value_parser = output::parser(&["text", "json", "yaml", "jsonpath"]))]
    pub output: Output,
}

const HELP: &str = "\
Examples:
  # What would deleting this StatefulSet do to the cluster in the snapshot?
  kubectl suture impact -f delete-statefulset.json --cluster snapshot/

  # What would draining (deleting) this node or scaling this StatefulSet do? (TYPE/NAME or
  # kubectl's TYPE NAME)
  kubectl suture impact delete node/pool-3 --cluster snapshot/
  kubectl suture impact scale sts zk --replicas 2 -n coordination --cluster snapshot/

  # What would deleting these two pods do, one after the other?
  kubectl suture impact delete pod zk-0 zk-1 -n coordination --cluster snapshot/

  # Against the live cluster of the kubeconfig (reads what the request reaches)
  kubectl suture impact delete namespace/payments --context prod

  # The same estimate as policies see it (the CEL variable `impact`)
  kubectl suture impact -f review.yaml --cluster cluster.yaml -o json

  # What would deleting every claim labelled app=pg do, one deletion after the other?
  kubectl suture impact delete pvc -l app=pg -n prod --cluster snapshot/

Exit status:
  0  the estimate was printed
  2  usage error or unreadable input (missing file, bad YAML/JSON, not an AdmissionReview,
     a snapshot that does not load, a cluster that cannot be read)";

/// Runs `impact`: prints the estimate.
pub fn run(args: &ImpactArgs, style: Style) -> Result<Exit, Failure> {
    let subject = args.request.subject()?;
    match subject {
        Subject::Collection => return run_collection(args, style),
        Subject::Manifests { name, documents } => return run_manifests(args, &name, &documents, style),
        Subject::Actions => return run_actions(args, style),
        _ => {}
    }
    let (cluster, request) = args
        .request
        .resolve(&subject, policies_cel::operators::catalog())?;
    let impact = estimate(&request, cluster.as_ref());
    let text = match output::render(&args.output, &impact)
        .map_err(anyhow::Error::msg)
        .or_exit(Exit::Failure)?
    {
        Some(text) => text,
        None => report::impact::tree(&impact, style),
    };
    print!("{text}");
    Ok(Exit::Success)
}

/// Runs `impact` on a what-if collection: each selected object's deletion estimated in turn,
/// the ones before it carried into the model.
fn run_collection(args: &ImpactArgs, style: Style) -> Result<Exit, Failure> {
    let (mut model, selected, specs) = args
        .request
        .resolve_collection(policies_cel::operators::catalog())?;
    let estimates = collection::estimate_each(&specs, &mut model).map_err(Failure::usage)?;
    let document = report::collection::impacts(&selected, &estimates);
    let text = match output::render(&args.output, &document)
        .map_err(anyhow::Error::msg)
        .or_exit(Exit::Failure)?
    {
        Some(text) => text,
        None => report::collection::impact_trees(&selected, &estimates, style),
    };
    print!("{text}");
    Ok(Exit::Success)
}

/// Runs `impact` on a file of several manifests: each object's request estimated in turn, the
/// ones before it carried into the model.
fn run_manifests(
    args: &ImpactArgs,
    file: &str,
    documents: &[manifests::Document],
    style: Style,
) -> Result<Exit, Failure> {
    let (mut model, default_namespace) = args
        .request
        .resolve_manifests(documents, policies_cel::operators::catalog())?;
    let estimates = manifests::estimate_each(
        &args.request.what_if,
        default_namespace.as_deref(),
        documents,
        &mut model,
    )
    .map_err(|e| Failure::usage(e.context(file.to_owned())))?;
    let document = report::manifests::impacts(file, &estimates);
    let text = match output::render(&args.output, &document)
        .map_err(anyhow::Error::msg)
        .or_exit(Exit::Failure)?
    {
        Some(text) => text,
        None => report::manifests::impact_trees(file, &estimates, style),
    };
    print!("{text}");
    Ok(Exit::Success)
}

/// Runs `impact` on an action naming several objects (`delete pod a b`): each object's request
/// estimated in turn, in the order given, the ones before it carried into the model.
fn run_actions(args: &ImpactArgs, style: Style) -> Result<Exit, Failure> {
    let (mut model, default_namespace) = args.request.resolve_actions(policies_cel::operators::catalog())?;
    let what_if = &args.request.what_if;
    let estimates =
        actions::estimate_each(what_if, default_namespace.as_deref(), &mut model).map_err(Failure::usage)?;
    let action = actions::description(what_if);
    let document = report::actions::impacts(&action, &estimates);
    let text = match output::render(&args.output, &document)
        .map_err(anyhow::Error::msg)
        .or_exit(Exit::Failure)?
    {
        Some(text) => text,
        None => report::actions::impact_trees(&action, &estimates, style),
    };
    print!("{text}");
    Ok(Exit::Success)
}
