//! The reality harness: how right is the impact estimate? For each scenario the scene is built
//! in the real control plane, the estimate of a request taken (`kubectl suture impact` against
//! the live cluster), the request made as an identity the pack does not judge, and what the real
//! garbage collector, workload, EndpointSlice, disruption, PV and namespace controllers (and the
//! node simulator's kubelet) then do is watched until the cluster is quiet, and compared figure
//! by figure and object by object (by uid). The report and the baseline of known disagreements
//! keep the estimate honest as it grows.
//!
//! - [`scenarios`]: the catalogue (every rule of the estimate, with seeded random variants);
//! - [`scenario`], [`request`]: what a scenario is and the request it makes;
//! - [`observe`], [`moment`], [`settle`], [`outcome`]: watching the controllers act it out;
//! - [`estimate`]: the estimate's figures; [`report`], [`baseline`]: the comparison.

pub mod baseline;
pub mod estimate;
pub mod figure;
pub mod moment;
pub mod observe;
pub mod outcome;
pub mod report;
pub mod request;
pub mod run;
pub mod scenario;
pub mod scenarios;
pub mod seed;
pub mod settle;

use std::path::Path;

use futures::StreamExt;

use crate::cluster::Cluster;
use run::Outcome;
use scenario::Scenario;

/// Scenarios that share the cluster run this many at a time.
const TOGETHER: usize = 3;

/// A scenario with its place in the catalogue.
type Indexed<'a> = (usize, &'a Scenario);

/// Runs one scenario, printing how it ended.
async fn run_one(
    cluster: &Cluster,
    plugin: &Path,
    index: usize,
    scenario: &Scenario,
) -> (usize, anyhow::Result<Outcome>) {
    let result = run::run(cluster, plugin, scenario).await;
    match &result {
        Ok(outcome) => {
            let disagrees = report::disagreements(outcome);
            let verdict = if disagrees.is_empty() {
                "agrees".to_owned()
            } else {
                let names: Vec<&str> = disagrees.iter().map(|f| f.name()).collect();
                format!("disagrees on {}", names.join(", "))
            };
            println!("reality: {} ({:.1}s): {verdict}", scenario.name, outcome.seconds);
        }
        Err(error) => println!("reality: {}: could not run: {error:#}", scenario.name),
    }
    (index, result)
}

/// Runs `scenarios` (those owning cluster-scoped objects alone, after the others), printing
/// each as it ends: the outcomes in catalogue order, and the scenarios that could not run.
pub async fn run_all<'a>(
    cluster: &'a Cluster,
    plugin: &'a Path,
    scenarios: &'a [Scenario],
) -> (Vec<Outcome>, Vec<String>) {
    let (alone, shared): (Vec<Indexed<'a>>, Vec<Indexed<'a>>) =
        scenarios.iter().enumerate().partition(|(_, s)| s.exclusive());
    let one = |(index, scenario): (usize, &'a Scenario)| run_one(cluster, plugin, index, scenario);
    let mut results: Vec<(usize, anyhow::Result<Outcome>)> = futures::stream::iter(shared)
        .map(one)
        .buffer_unordered(TOGETHER)
        .collect()
        .await;
    for scenario in alone {
        results.push(one(scenario).await);
    }
    results.sort_by_key(|(index, _)| *index);
    let mut outcomes = Vec::new();
    let mut failed = Vec::new();
    for (index, result) in results {
        match result {
            Ok(outcome) => outcomes.push(outcome),
            Err(error) => failed.push(format!("{}: {error:#}", scenarios[index].name)),
        }
    }
    (outcomes, failed)
}
