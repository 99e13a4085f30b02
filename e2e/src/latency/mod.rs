//! Latency inside kube-apiserver: dry-run requests timed at the client under each admission
//! setup ([`setups::Setup`]), all in force at once and told apart by the identity that sends the
//! request, so the setups alternate request by request (in an order drawn afresh for each
//! iteration) and the drift of the machine falls on all of them alike; medians and p99s per
//! request kind and setup, and Suture's cost over the no-op webhook as the median of the paired
//! differences ([`report`]). Given a baseline build of the gateway (say, the previous commit's),
//! it judges beside this one, so a change's effect inside kube-apiserver is read from requests
//! sent side by side rather than from two runs minutes or hours apart. Run by
//! `bench/apiserver/run.sh`; never by the tests.

pub mod report;
pub mod requests;
pub mod setups;
pub mod stats;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::cluster::Cluster;
use crate::gateway;
use crate::scene;
use crate::scenes;
use requests::{RequestKind, Targets};
use setups::{Routes, Setup, Twins};

/// How much to measure, and against what.
#[derive(Debug, Clone)]
pub struct Options {
    /// Timed iterations: each times every request kind once under every setup.
    pub samples: usize,
    /// Untimed iterations first.
    pub warmup: usize,
    /// A second judging setup timed beside this build's.
    pub baseline: Option<Baseline>,
    /// The build of `suture-gateway` judging and serving as the no-op twin (none: the one built
    /// beside the benchmark), e.g. the profile-guided release build (`scripts/pgo-build.sh`).
    pub gateway: Option<PathBuf>,
    /// This build's judging gateway's `--keep-warm` period (`0s`: off); none: as the install
    /// renders it.
    pub keep_warm: Option<String>,
    /// The baseline build's `--keep-warm` period (`0s`: off, the flag left out, for a build older
    /// than it); none: the same as this build's.
    pub baseline_keep_warm: Option<String>,
}

/// What the fifth setup (`bench-baseline`, through its own copy of the webhook) sends to.
#[derive(Debug, Clone)]
pub enum Baseline {
    /// Another build of `suture-gateway`, started beside this one.
    Build(PathBuf),
    /// This build's own judging gateway, the one process serving both setups: an A/A of
    /// everything around the gateway (identity, webhook configuration, kube-apiserver's path), to
    /// calibrate what the setups' asymmetry alone adds at the client.
    SameGateway,
}

/// Every timed sample, by setup and request kind, in iteration order: the `i`-th samples of two
/// setups were taken side by side.
pub type Samples = BTreeMap<(Setup, RequestKind), Vec<Duration>>;

/// What a run measured.
#[derive(Debug, Default)]
pub struct Measured {
    /// At the client, by setup and request kind.
    pub samples: Samples,
    /// Inside each judging gateway ([`Setup::Judging`], and [`Setup::Baseline`] when timed).
    pub inside: BTreeMap<Setup, Inside>,
    /// Each judging setup's `--keep-warm` period (none: off).
    pub kept_warm: BTreeMap<Setup, Option<String>>,
}

/// What a judging gateway's decision log says of the timed requests.
#[derive(Debug, Default)]
pub struct Inside {
    /// Its own time (`latencyUs`: body read to answer), by request kind.
    pub times: BTreeMap<RequestKind, Vec<Duration>>,
    /// Where it evaluated them (`lane`: inline, pool, heavy), counted by request kind.
    pub lanes: BTreeMap<RequestKind, BTreeMap<String, usize>>,
}

const NAMESPACE: &str = "bench";

/// Builds the scene, installs the gateway, its no-op twin and the policies, and times every
/// setup.
pub async fn run(cluster: &mut Cluster, options: Options) -> anyhow::Result<Measured> {
    let operator = scene::operator(cluster, "e2e-operators", "db-operator").await?;
    gateway::ensure(cluster).await?;
    let noop = match cluster.gateway.as_mut() {
        Some(judging) => {
            if let Some(build) = &options.gateway {
                judging.run_build(build)?;
            }
            if let Some(period) = &options.keep_warm {
                judging.set_keep_warm(period);
            }
            // The VAP setup's policies are kube-apiserver's to enforce: the gateway leaves them
            // out, or it would judge the judged operator's requests by them too.
            judging
                .restart_with(&format!("--cluster-policy-selector=!{}", setups::BENCH_LABEL))
                .await?;
            judging.noop_twin(&cluster.gateway_host).await?
        }
        None => anyhow::bail!("the gateway was not installed"),
    };
    let baseline = match (&options.baseline, cluster.gateway.as_ref()) {
        (Some(Baseline::Build(binary)), Some(judging)) => Some(
            judging
                .judging_twin(
                    binary,
                    &cluster.gateway_host,
                    "e2e-bench-baseline",
                    options.baseline_keep_warm.as_deref(),
                )
                .await?,
        ),
        _ => None,
    };
    let mut kept_warm = BTreeMap::new();
    if let Some(judging) = cluster.gateway.as_ref() {
        let period = judging.keep_warm().map(str::to_owned);
        if matches!(options.baseline, Some(Baseline::SameGateway)) {
            kept_warm.insert(Setup::Baseline, period.clone());
        }
        kept_warm.insert(Setup::Judging, period);
    }
    if let Some(baseline) = &baseline {
        kept_warm.insert(Setup::Baseline, baseline.keep_warm().map(str::to_owned));
    }
    let judging_url = cluster.gateway.as_ref().map(|g| g.url.clone());
    let baseline_url = match &options.baseline {
        Some(Baseline::Build(_)) => baseline.as_ref().map(|b| b.url.clone()),
        Some(Baseline::SameGateway) => judging_url,
        None => None,
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
    let twins = Twins {
        noop: &noop.url,
        baseline: baseline_url.as_deref(),
    };
    let routes = Routes::install(cluster, &operator, twins, NAMESPACE).await?;
    let measured = time_every_setup(&routes, &targets, &options).await;
    routes.remove(cluster).await?;
    drop(noop);
    let samples = measured?;
    // Each judging setup's decisions, told apart by who sent them (one process may serve both).
    let mut inside = BTreeMap::new();
    let baseline_user = setups::username(Setup::Baseline);
    if let Some(judging) = cluster.gateway.as_ref() {
        let (ours, theirs) = by_identity(judging.all_decisions(), &baseline_user);
        inside.insert(Setup::Judging, ours);
        if matches!(options.baseline, Some(Baseline::SameGateway)) {
            inside.insert(Setup::Baseline, theirs);
        }
    }
    if let Some(baseline) = baseline {
        inside.insert(Setup::Baseline, gateway_times(&baseline.all_decisions()));
    }
    Ok(Measured {
        samples,
        inside,
        kept_warm,
    })
}

/// Times `options.samples` iterations (after `options.warmup` untimed ones), each sending every
/// request kind under every setup, the setups in [`Setup::order`].
async fn time_every_setup(routes: &Routes, targets: &Targets, options: &Options) -> anyhow::Result<Samples> {
    let mut samples = Samples::new();
    let setups = routes.setups();
    for n in 0..options.warmup + options.samples {
        for kind in RequestKind::ALL {
            for setup in Setup::order(&setups, n) {
                let took = requests::send(routes.client(setup)?, targets, kind).await?;
                if n >= options.warmup {
                    samples.entry((setup, kind)).or_default().push(took);
                }
            }
        }
        if n >= options.warmup && (n - options.warmup + 1).is_multiple_of(100) {
            eprintln!(
                "{} of {} iterations timed",
                n - options.warmup + 1,
                options.samples
            );
        }
    }
    Ok(samples)
}

/// A judging gateway's times for the judged operator's requests and for `baseline_user`'s (the
/// same process serves both when the path is calibrated).
fn by_identity(decisions: Vec<serde_json::Value>, baseline_user: &str) -> (Inside, Inside) {
    let (theirs, ours): (Vec<_>, Vec<_>) = decisions
        .into_iter()
        .partition(|entry| entry["user"] == baseline_user);
    (gateway_times(&ours), gateway_times(&theirs))
}

/// A judging gateway's own time for the timed requests (admitted dry runs in the bench's
/// namespace; the probes are refused), and where it evaluated them, from its decision log.
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
    Inside { times, lanes }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_gateway_serving_both_setups_has_its_times_told_apart_by_identity() {
        let line = |user: &str, us: u64| {
            serde_json::json!({
                "user": user, "operation": "DELETE", "namespace": NAMESPACE, "dryRun": true,
                "verdict": "allowed", "resource": {"group": "", "version": "v1", "resource": "pods"},
                "latencyUs": us, "lane": "inline",
            })
        };
        let baseline = "system:serviceaccount:e2e-operators:bench-baseline";
        let decisions = vec![
            line("system:serviceaccount:e2e-operators:db-operator", 140),
            line(baseline, 150),
            line(baseline, 160),
        ];
        let (ours, theirs) = by_identity(decisions, baseline);
        let pods = |inside: &Inside| inside.times.get(&RequestKind::DeletePod).cloned();
        assert_eq!(pods(&ours), Some(vec![Duration::from_micros(140)]));
        assert_eq!(
            pods(&theirs),
            Some(vec![Duration::from_micros(150), Duration::from_micros(160)])
        );
    }

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
        let Inside { times, lanes } = gateway_times(&decisions);
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
