//! Latency inside kube-apiserver: dry-run requests sent by a judged operator and timed at the
//! client, under each admission setup ([`setups::Setup`]) in turn — several rounds, every setup
//! visited in each (in a rotating order), so slow drift of the machine is shared — with medians
//! and p99s per request kind and setup ([`report`]). Run by `bench/apiserver/run.sh`; never by
//! the tests.

pub mod report;
pub mod requests;
pub mod setups;
pub mod stats;

use std::collections::BTreeMap;
use std::time::Duration;

use crate::cluster::Cluster;
use crate::gateway;
use crate::scene;
use crate::scenes;
use requests::{RequestKind, Targets};
use setups::{Setup, Switcher};

/// How much to measure.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Timed requests per setup and request kind (over all rounds).
    pub samples: usize,
    /// Rounds over the setups.
    pub rounds: usize,
    /// Untimed requests per kind after each switch.
    pub warmup: usize,
}

/// Every timed sample, by setup and request kind.
pub type Samples = BTreeMap<(Setup, RequestKind), Vec<Duration>>;

/// What a run measured.
#[derive(Debug, Default)]
pub struct Measured {
    /// At the client, by setup and request kind.
    pub samples: Samples,
    /// Inside the judging gateway (its decision log's `latencyUs`: body read to answer), by
    /// request kind.
    pub gateway: BTreeMap<RequestKind, Vec<Duration>>,
    /// Where the judging gateway evaluated them (its decision log's `lane`: inline, pool,
    /// heavy), counted by request kind.
    pub lanes: BTreeMap<RequestKind, BTreeMap<String, usize>>,
}

const NAMESPACE: &str = "bench";

/// Builds the scene, installs the gateway and its no-op twin, and times every setup.
pub async fn run(cluster: &mut Cluster, options: Options) -> anyhow::Result<Measured> {
    let operator = scene::operator(cluster, "e2e-operators", "db-operator").await?;
    gateway::ensure(cluster).await?;
    let (judging_url, noop) = match &cluster.gateway {
        Some(judging) => (
            judging.url.clone(),
            judging.noop_twin(&cluster.gateway_host).await?,
        ),
        None => anyhow::bail!("the gateway was not installed"),
    };
    scene::apply(cluster, &scenes::database(NAMESPACE, 3, 2))?;
    scene::apply(cluster, &scenes::web(NAMESPACE, "web", 3, "RollingUpdate", 2))?;
    scene::statefulset_ready(cluster, NAMESPACE, "db").await?;
    scene::deployment_ready(cluster, NAMESPACE, "web").await?;
    scene::pdb_settled(cluster, NAMESPACE, "web", 1).await?;
    scene::gateway_sees(&operator, NAMESPACE).await?;
    let pod = scene::ready_pods(cluster, NAMESPACE)
        .await?
        .into_iter()
        .find(|name| name.starts_with("web-"))
        .ok_or_else(|| anyhow::anyhow!("no Ready web pod"))?;
    let targets = Targets {
        namespace: NAMESPACE.to_owned(),
        pod,
        replicas: 3,
    };
    let switcher = Switcher::new(
        cluster,
        gateway::WEBHOOK,
        (&judging_url, &noop.url),
        &operator.client,
        NAMESPACE,
    )
    .await?;

    let per_round = options.samples.div_ceil(options.rounds.max(1));
    let mut samples = Samples::new();
    for round in 1..=options.rounds.max(1) {
        for setup in Setup::round_order(round - 1) {
            switcher.switch(cluster, setup).await?;
            for _ in 0..options.warmup {
                for kind in RequestKind::ALL {
                    requests::send(&operator.client, &targets, kind).await?;
                }
            }
            for _ in 0..per_round {
                for kind in RequestKind::ALL {
                    let took = requests::send(&operator.client, &targets, kind).await?;
                    samples.entry((setup, kind)).or_default().push(took);
                }
            }
            eprintln!("round {round}: {} done", setup.label());
        }
    }
    // Leave the cluster as installed.
    switcher.switch(cluster, Setup::Judging).await?;
    drop(noop);
    let decisions = cluster
        .gateway
        .as_ref()
        .map(|g| g.all_decisions())
        .unwrap_or_default();
    let (gateway, lanes) = gateway_times(&decisions);
    Ok(Measured {
        samples,
        gateway,
        lanes,
    })
}

/// The gateway's time for each request kind, and where it evaluated them.
type Inside = (
    BTreeMap<RequestKind, Vec<Duration>>,
    BTreeMap<RequestKind, BTreeMap<String, usize>>,
);

/// The judging gateway's own time for the timed requests (admitted dry runs in the bench's
/// namespace; the switches' probes are refused), and where it evaluated them, from its decision
/// log.
fn gateway_times(decisions: &[serde_json::Value]) -> Inside {
    let mut times: BTreeMap<RequestKind, Vec<Duration>> = BTreeMap::new();
    let mut lanes: BTreeMap<RequestKind, BTreeMap<String, usize>> = BTreeMap::new();
    for entry in decisions {
        if entry["namespace"] != NAMESPACE || entry["dryRun"] != true || entry["verdict"] != "allowed" {
            continue;
        }
        let kind = match (
            entry["operation"].as_str(),
            gateway::decision_resource(entry).as_str(),
        ) {
            (Some("CREATE"), "deployments") => RequestKind::CreateDeployment,
            (Some("DELETE"), "pods") => RequestKind::DeletePod,
            (Some("UPDATE"), "statefulsets/scale") => RequestKind::ScaleStatefulSet,
            _ => continue,
        };
        if let Some(us) = entry["latencyUs"].as_u64() {
            times.entry(kind).or_default().push(Duration::from_micros(us));
        }
        let lane = entry["lane"].as_str().unwrap_or("none");
        *lanes.entry(kind).or_default().entry(lane.to_owned()).or_default() += 1;
    }
    (times, lanes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_timed_requests_count_as_the_gateways_time() {
        let line = |op: &str, resource: &str, sub: &str, verdict: &str, us: u64| {
            serde_json::json!({
                "operation": op, "namespace": NAMESPACE, "dryRun": true, "verdict": verdict,
                "resource": {"group": "apps", "version": "v1", "resource": resource, "subresource": sub},
                "latencyUs": us, "lane": "inline",
            })
        };
        let decisions = [
            line("UPDATE", "statefulsets", "scale", "allowed", 150),
            line("UPDATE", "statefulsets", "scale", "denied", 900),
            line("UPDATE", "statefulsets", "", "allowed", 800),
            line("CREATE", "deployments", "", "allowed", 30),
        ];
        let (times, lanes) = gateway_times(&decisions);
        assert_eq!(
            times.get(&RequestKind::ScaleStatefulSet),
            Some(&vec![Duration::from_micros(150)])
        );
        assert_eq!(
            times.get(&RequestKind::CreateDeployment),
            Some(&vec![Duration::from_micros(30)])
        );
        assert_eq!(times.get(&RequestKind::DeletePod), None);
        let inline = |kind| lanes.get(&kind).and_then(|l| l.get("inline")).copied();
        assert_eq!(
            inline(RequestKind::ScaleStatefulSet),
            Some(1),
            "the refused one is not counted"
        );
    }
}
