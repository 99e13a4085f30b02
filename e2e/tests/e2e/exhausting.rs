//! SafetyPolicies created in the cluster whose expressions exhaust the evaluation budget (nested
//! comprehensions for time, lists of strings built from lists for memory; the same policies as
//! `testdata/attack/exhausting-policies.yaml`, narrowed to the e2e operators): while an operator
//! floods kube-apiserver with requests they judge, another request of that operator, judged by a
//! cheap policy, keeps being answered by evaluation within the gateway's budget, every flooding
//! request gets an answer from the gateway (never kube-apiserver's webhook timeout), and the
//! gateway's memory stays bounded.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use serde_json::json;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Answer};
use suture_e2e::{Cluster, gateway, scenes};

pub const TESTS: [Test; 1] = [Test {
    name: "exhausting::budget_exhausting_policies_from_the_cluster_leave_other_requests_answered",
    run: budget_exhausting_policies_from_the_cluster_leave_other_requests_answered,
}];

const NS: &str = "e2e-exhausting";

/// The attack bench's exhausting policies, as written for any service account.
const EXHAUSTING: &str = include_str!("../../../testdata/attack/exhausting-policies.yaml");

/// A cheap policy judging the probe (an operator's ConfigMap delete): its own shape, so it is
/// judged on the main threads while the exhausting shape is on the heavy lane.
const CHEAP: &str = r#"apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: e2e-cheap-probe}
spec:
  subjects: {serviceAccounts: ["e2e-operators/*"]}
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["DELETE"], resources: ["configmaps"]}
  validations:
  - expression: "oldObject.metadata.name != 'never-deleted'"
"#;

/// How long the flood lasts, and how many requests it keeps in flight.
const FLOOD: Duration = Duration::from_secs(20);
const FLOODERS: usize = 8;

/// Probes timed before the flood.
const BASELINE_PROBES: usize = 20;

/// A probe slower than this fails the test (the gateway's `--eval-timeout` is 2 s: a probe
/// answered by the failure policy would take that long).
const PROBE_BOUND: Duration = Duration::from_millis(1000);

fn budget_exhausting_policies_from_the_cluster_leave_other_requests_answered(
    cluster: &mut Cluster,
) -> TestFuture<'_> {
    Box::pin(async move {
        let outcome = flood_and_probe(cluster).await;
        // Whatever happened, the exhausting policies must not outlive the test: they judge the
        // e2e operators, whom later tests use.
        let cleaned = clean_up(cluster);
        outcome.and(cleaned)
    })
}

async fn flood_and_probe(cluster: &mut Cluster) -> anyhow::Result<()> {
    let op = scene::operator(cluster, "e2e-operators", "db-operator").await?;
    gateway::ensure(cluster).await?;
    scene::apply(cluster, &scenes::namespace_yaml(NS))?;
    let admin: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), NS);
    let probe_map: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "probe"}}))?;
    admin.create(&PostParams::default(), &probe_map).await?;

    // Only the e2e operators are judged by them: the gateway's own ledger writes and the
    // other tests' identities are left alone.
    let narrowed = EXHAUSTING.replace(
        r#"serviceAccounts: ["*/*"]"#,
        r#"serviceAccounts: ["e2e-operators/*"]"#,
    );
    anyhow::ensure!(
        narrowed != EXHAUSTING,
        "the exhausting policies' subjects changed"
    );
    scene::apply(cluster, &format!("{narrowed}\n---\n{CHEAP}"))?;

    let as_operator: Api<ConfigMap> = Api::namespaced(op.client.clone(), NS);
    let dry_create = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let dry_delete = DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    };
    let first = flood_map(0)?;
    scene::until_answered(
        "the exhausting SafetyPolicies in the gateway's set",
        Answer::RefusedWith("SafetyPolicy 'exhausting-"),
        || {
            let (maps, params, map) = (as_operator.clone(), dry_create.clone(), first.clone());
            async move { maps.create(&params, &map).await }
        },
    )
    .await?;
    println!("  the exhausting SafetyPolicies applied in the cluster judge the operator's ConfigMap creates");

    let gateway = cluster
        .gateway
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("no gateway"))?;
    let rss_before = gateway.rss_kib().unwrap_or_default();
    // The probe's own time first, without the flood.
    let mut baseline = Vec::new();
    for _ in 0..BASELINE_PROBES {
        let began = Instant::now();
        as_operator.delete("probe", &dry_delete).await?;
        baseline.push(began.elapsed());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    baseline.sort();
    let until = Instant::now() + FLOOD;
    let flooders: Vec<_> = (0..FLOODERS)
        .map(|n| {
            let (maps, params) = (as_operator.clone(), dry_create.clone());
            tokio::spawn(async move { flood(maps, params, n, until).await })
        })
        .collect();

    let mut probes = Vec::new();
    let mut rss_max = rss_before;
    while Instant::now() < until {
        let began = Instant::now();
        let answer = as_operator.delete("probe", &dry_delete).await;
        let took = began.elapsed();
        if let Err(error) = answer {
            anyhow::bail!("a probe during the flood was not admitted after {took:?}: {error}");
        }
        probes.push(took);
        rss_max = rss_max.max(gateway.rss_kib().unwrap_or_default());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut answered = Flooded::default();
    for flooder in flooders {
        answered.add(flooder.await??);
    }

    probes.sort();
    let median = probes[probes.len() / 2];
    let p99 = probes[(probes.len() * 99 / 100).min(probes.len() - 1)];
    let max = probes[probes.len() - 1];
    println!(
        "  {} probes admitted during a {FLOOD:?} flood by {FLOODERS} clients: median {median:?}, p99 {p99:?}, max {max:?} (without the flood: median {:?})",
        probes.len(),
        baseline[baseline.len() / 2]
    );
    println!(
        "  the flood: {} requests, {} refused by the exhausting policies, {} otherwise; gateway VmRSS {} MiB before, {} MiB at most",
        answered.total,
        answered.refused,
        answered.other.len(),
        rss_before / 1024,
        rss_max / 1024
    );
    anyhow::ensure!(
        max < PROBE_BOUND,
        "a probe took {max:?} (bound {PROBE_BOUND:?}): the flood held the threads"
    );
    anyhow::ensure!(answered.total > 0, "the flood sent nothing");
    anyhow::ensure!(
        answered.other.is_empty(),
        "flooding requests not answered by the gateway's policies: {:?}",
        answered.other
    );
    anyhow::ensure!(
        rss_max < 1024 * 1024,
        "gateway VmRSS reached {} MiB (the install's limit is 1 GiB)",
        rss_max / 1024
    );
    let (healthz, _) = gateway::http_get(&gateway.metrics, "/healthz").await?;
    anyhow::ensure!(healthz == 200, "/healthz {healthz} after the flood");

    Ok(())
}

fn clean_up(cluster: &Cluster) -> anyhow::Result<()> {
    scene::kubectl(
        cluster,
        &[
            "delete",
            "safetypolicy",
            "exhausting-time",
            "exhausting-memory",
            "e2e-cheap-probe",
            "--ignore-not-found",
        ],
        None,
    )?;
    scene::kubectl(
        cluster,
        &["delete", "namespace", NS, "--wait=false", "--ignore-not-found"],
        None,
    )?;
    Ok(())
}

fn flood_map(n: usize) -> anyhow::Result<ConfigMap> {
    Ok(serde_json::from_value(
        json!({"metadata": {"name": format!("flood-{n}")}, "data": {"k": "v"}}),
    )?)
}

/// What the flooding requests were answered.
#[derive(Debug, Default)]
struct Flooded {
    total: usize,
    /// Refused with an exhausting policy's name: by its budget error or its failure policy.
    refused: usize,
    /// Anything else (admitted, kube-apiserver's own webhook failure...), the first few.
    other: Vec<String>,
}

impl Flooded {
    fn add(&mut self, other: Flooded) {
        self.total += other.total;
        self.refused += other.refused;
        self.other.extend(other.other.into_iter().take(5));
    }
}

/// Posts dry-run creates the exhausting policies judge, one after another, until `until`.
async fn flood(
    maps: Api<ConfigMap>,
    params: PostParams,
    n: usize,
    until: Instant,
) -> anyhow::Result<Flooded> {
    let mut flooded = Flooded::default();
    let map = flood_map(n)?;
    while Instant::now() < until {
        flooded.total += 1;
        match maps.create(&params, &map).await {
            Err(kube::Error::Api(status)) if status.message.contains("SafetyPolicy 'exhausting-") => {
                flooded.refused += 1;
            }
            Ok(_) => flooded.other.push("admitted".to_owned()),
            Err(error) => flooded.other.push(error.to_string()),
        }
    }
    Ok(flooded)
}
