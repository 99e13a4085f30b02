//! `kubectl suture explain [TOPIC]`: the CEL variables, the `impact` fields, the `cluster`
//! library and the built-in pack's policies, at the terminal.

use anyhow::anyhow;
use clap::Args;

use crate::exit::{Exit, Failure};
use crate::explain::{TOPICS, explain};

/// Arguments of `kubectl suture explain`.
#[derive(Debug, Args)]
#[command(after_help = HELP)]
pub struct ExplainArgs {
    /// What to explain: variables, impact, impact.<field>, cluster, pack
    #[arg(value_name = "TOPIC")]
    pub topic: Option<String>,

    /// With `pack`: the policy to print (e.g. suture-data-loss)
    #[arg(value_name = "POLICY")]
    pub name: Option<String>,
}

const HELP: &str = "\
Examples:
  # The variables an expression can read (object, oldObject, request, params, impact, cluster...)
  kubectl suture explain variables

  # Every field of the impact estimate, or one of them
  kubectl suture explain impact
  kubectl suture explain impact.volumes

  # The built-in pack's policies, or one of them
  kubectl suture explain pack
  kubectl suture explain pack suture-data-loss

Exit status:
  0  printed
  2  an unknown topic or policy";

/// Prints the explanation.
pub fn run(args: &ExplainArgs) -> Result<Exit, Failure> {
    let text = explain(args.topic.as_deref(), args.name.as_deref()).ok_or_else(|| {
        Failure::usage(anyhow!(
            "nothing to explain for {:?}{}: topics are {TOPICS}",
            args.topic.as_deref().unwrap_or_default(),
            args.name.as_deref().map(|n| format!(" {n}")).unwrap_or_default()
        ))
    })?;
    print!("{text}");
    Ok(Exit::Success)
}
