//! `kubectl suture snapshot`: write the live cluster (or some namespaces) as a `kind: List` the
//! other commands read with `--cluster`, slim by default (no Secret or ConfigMap values, no
//! managedFields, no last-applied annotations), with a progress bar and a summary of counts.

use std::collections::BTreeMap;
use std::io::Write as _;

use anyhow::{Context as _, anyhow};
use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::exit::{Exit, Failure, OrExit};
use crate::live::{self, KubeArgs, Scope};

/// Output formats of `snapshot`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum SnapshotOutput {
    #[default]
    Yaml,
    Json,
}

/// Arguments of `kubectl suture snapshot`.
#[derive(Debug, Args)]
#[command(after_help = HELP)]
pub struct SnapshotArgs {
    /// Only these namespaces' contents (repeatable or comma-separated; cluster-scoped objects
    /// are always written) [default: every namespace]
    #[arg(
        short = 'n',
        long = "namespace",
        value_name = "NAMESPACE",
        value_delimiter = ','
    )]
    pub namespaces: Vec<String>,

    /// Every namespace (the default; kubectl's spelling)
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,

    #[command(flatten)]
    pub kube: KubeArgs,

    /// Output format of the List
    #[arg(short = 'o', long = "output", value_enum, default_value_t)]
    pub output: SnapshotOutput,

    /// Keep objects as the API returns them: managedFields, last-applied annotations and the
    /// values of ConfigMaps and Secrets (the file then holds secrets: handle it as one)
    #[arg(long = "full")]
    pub full: bool,
}

const HELP: &str = "\
Lists every kind the impact estimate reads (Namespaces, Nodes, Pods, workloads, Services,
EndpointSlices, PVCs and PVs, ConfigMaps, Secrets, PDBs, CRDs) and the identity and owners of
every custom resource. The List goes to stdout; the summary to stderr.

Examples:
  # The whole cluster of the current context
  kubectl suture snapshot > cluster.yaml

  # Two namespaces of the staging cluster, as JSON
  kubectl suture snapshot -n payments,databases --context staging -o json > snapshot.json

  # Then judge what-ifs against it, offline
  kubectl suture check delete statefulset/db -n databases --cluster cluster.yaml

Exit status:
  0  the snapshot was written
  2  usage error, or the cluster cannot be read (no kubeconfig, unreachable, forbidden)";

/// Runs `snapshot`.
pub fn run(args: &SnapshotArgs) -> Result<Exit, Failure> {
    let credentials = live::require_credentials(&args.kube)?;
    if args.all_namespaces && !args.namespaces.is_empty() {
        return Err(Failure::usage(anyhow!("give either -n or -A, not both")));
    }
    let scope = if args.namespaces.is_empty() {
        Scope::everything()
    } else {
        Scope {
            instances: live::Instances::All,
            ..Scope::namespaces(args.namespaces.iter().cloned())
        }
    };
    let mut items = Vec::new();
    live::read(&args.kube, &credentials, args.full, &mut items, |_, _| scope)?;
    let summary = summary(&items);
    let list =
        json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items});
    let text = match args.output {
        SnapshotOutput::Yaml => serde_yaml_ng::to_string(&list).context("cannot write the List as YAML"),
        SnapshotOutput::Json => serde_json::to_string_pretty(&list)
            .map(|text| text + "\n")
            .context("cannot write the List as JSON"),
    }
    .or_exit(Exit::Failure)?;
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .context("cannot write to stdout")
        .or_exit(Exit::Failure)?;
    eprintln!("{summary}");
    Ok(Exit::Success)
}

/// `snapshot: 123 objects from 4 namespaces (Pod 80, ReplicaSet 12, ...), slim`.
fn summary(items: &[Value]) -> String {
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    let mut namespaces = std::collections::BTreeSet::new();
    for item in items {
        *kinds.entry(item["kind"].as_str().unwrap_or("?")).or_default() += 1;
        if let Some(namespace) = item["metadata"]["namespace"].as_str() {
            namespaces.insert(namespace);
        }
    }
    let mut counts: Vec<(&str, usize)> = kinds.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let counts: Vec<String> = counts.iter().map(|(kind, n)| format!("{kind} {n}")).collect();
    format!(
        "snapshot: {} objects from {} namespace{} ({})",
        items.len(),
        namespaces.len(),
        if namespaces.len() == 1 { "" } else { "s" },
        counts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_kinds_busiest_first() {
        let items = vec![
            json!({"kind": "Namespace", "metadata": {"name": "a"}}),
            json!({"kind": "Pod", "metadata": {"name": "p1", "namespace": "a"}}),
            json!({"kind": "Pod", "metadata": {"name": "p2", "namespace": "b"}}),
        ];
        assert_eq!(
            summary(&items),
            "snapshot: 3 objects from 2 namespaces (Pod 2, Namespace 1)"
        );
        // One namespace reads in the singular; equal counts go by kind.
        assert_eq!(
            summary(&items[..2]),
            "snapshot: 2 objects from 1 namespace (Namespace 1, Pod 1)"
        );
    }
}
