//! Running one scenario: build the scene, wait until it is settled, take the estimate, make the
//! request as the admin (whom the pack never judges), watch until the cluster is quiet again,
//! and remove the scene.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};

use crate::cluster::Cluster;
use crate::reality::figure::Figures;
use crate::reality::observe::{Recorder, Scope};
use crate::reality::request::{self, MODEL_KINDS, Request};
use crate::reality::scenario::Scenario;
use crate::reality::{estimate, outcome, settle};
use crate::scene;

/// How long the scene may take to settle.
const SETTLE: Duration = Duration::from_secs(90);
/// How long the scenario's objects must stay unchanged to count as quiet.
const QUIET: Duration = Duration::from_secs(3);
/// How long a deleted target may stay (a finalizer holding it) before quiet is enough.
const TARGET_HELD: Duration = Duration::from_secs(10);
/// The longest a scenario is watched after its request.
const LONGEST: Duration = Duration::from_secs(150);

/// One scenario's result.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub name: String,
    pub rule: String,
    pub request: String,
    pub estimate: Figures,
    pub reality: Figures,
    /// The estimate's notes.
    pub notes: Vec<String>,
    pub seconds: f64,
}

/// `yaml` with every `$UID(plural/name)` replaced by that object's uid (an ownerReference to an
/// object of an earlier stage), read from `namespace` or the cluster.
async fn with_uids(client: &kube::Client, namespace: &str, yaml: &str) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut rest = yaml;
    while let Some(start) = rest.find("$UID(") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 5..];
        let end = after.find(')').context("unclosed $UID(")?;
        let (plural, name) = after[..end].split_once('/').context("$UID(plural/name)")?;
        let kind = request::by_plural(plural).with_context(|| format!("unknown resource {plural}"))?;
        let object = kind.api(client, namespace).get(name).await?;
        out.push_str(object.metadata.uid.as_deref().unwrap_or_default());
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Applies `yaml`, retrying while a kind it uses is not served yet (a CRD being established).
async fn apply_stage(cluster: &Cluster, namespace: &str, yaml: &str) -> anyhow::Result<()> {
    let yaml = with_uids(&cluster.client, namespace, yaml).await?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match scene::apply(cluster, &yaml) {
            Ok(()) => return Ok(()),
            Err(error)
                if Instant::now() < deadline && format!("{error:#}").contains("no matches for kind") =>
            {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            Err(error) => return Err(error),
        }
    }
}

async fn wait_settled(recorder: &Recorder, what: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + SETTLE;
    loop {
        let why = if recorder.synced() {
            settle::unsettled(&recorder.store())
        } else {
            Some("watches not synced".to_owned())
        };
        match why {
            None if recorder.quiet_for() >= Duration::from_millis(1500) => return Ok(()),
            None => {}
            Some(why) if Instant::now() >= deadline => {
                anyhow::bail!("{what} did not settle in {SETTLE:?}: {why}")
            }
            Some(_) => {}
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until the cluster is quiet after the request: nothing changed for [`QUIET`], a
/// deleted target gone (or held for [`TARGET_HELD`]), and at least the scenario's least time.
async fn wait_quiet(recorder: &Recorder, scenario: &Scenario, target_uid: Option<&str>) {
    let started = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let quiet = recorder.quiet_for();
        let target_gone = target_uid.is_none_or(|uid| !recorder.holds(uid));
        let done =
            quiet >= QUIET && (target_gone || quiet >= TARGET_HELD) && started.elapsed() >= scenario.at_least;
        if done || started.elapsed() >= LONGEST {
            return;
        }
    }
}

/// Runs `scenario` in `cluster`, judging its request with the plugin at `plugin`.
pub async fn run(cluster: &Cluster, plugin: &Path, scenario: &Scenario) -> anyhow::Result<Outcome> {
    let started = Instant::now();
    let result = act(cluster, plugin, scenario).await;
    clean_up(cluster, scenario).await;
    let (estimate, reality, notes, request) =
        result.with_context(|| format!("scenario {}", scenario.name))?;
    Ok(Outcome {
        name: scenario.name.clone(),
        rule: scenario.rule.clone(),
        request,
        estimate,
        reality,
        notes,
        seconds: started.elapsed().as_secs_f64(),
    })
}

async fn act(
    cluster: &Cluster,
    plugin: &Path,
    scenario: &Scenario,
) -> anyhow::Result<(Figures, Figures, Vec<String>, String)> {
    let client = &cluster.client;
    if let Some(node) = &scenario.node {
        cluster
            .simulator
            .add_node(node, Some(&scenario.namespace))
            .await?;
    }
    let scope = Scope {
        namespace: scenario.namespace.clone(),
        cluster_objects: scenario
            .cluster_objects
            .iter()
            .map(|(_, name)| name.clone())
            .collect(),
    };
    let mut kinds = MODEL_KINDS.to_vec();
    kinds.extend(scenario.custom.iter().copied());
    let recorder = Recorder::start(client, scope, &kinds);
    for stage in &scenario.stages {
        apply_stage(cluster, &scenario.namespace, stage).await?;
    }
    wait_settled(&recorder, "the scene").await?;
    for request in &scenario.prepare {
        request
            .resolve(client, &scenario.namespace)
            .await?
            .perform(client)
            .await?;
    }
    if !scenario.prepare.is_empty() {
        wait_settled(&recorder, "the prepared scene").await?;
    }
    tokio::time::sleep(scenario.warm_up).await;

    let resolved = scenario.request.resolve(client, &scenario.namespace).await?;
    let review = resolved.review(client).await?;
    let impact = estimate::impact(plugin, &cluster.kubeconfig, &review, cluster.dir())?;
    let target_uid = match scenario.request {
        Request::Delete { .. } => review["request"]["oldObject"]["metadata"]["uid"].as_str(),
        _ => None,
    };

    let before = recorder.mark_before();
    resolved.perform(client).await.context("the request failed")?;
    wait_quiet(&recorder, scenario, target_uid).await;
    let reality = outcome::figures(&before, &recorder.store(), &recorder.lowest());
    let estimate = estimate::figures(&impact, &before.store);
    Ok((
        estimate,
        reality,
        estimate::notes(&impact),
        scenario.request.describe(),
    ))
}

/// Removes the scenario's namespace and cluster-scoped objects (not waited for), first lifting
/// the finalizers its ConfigMaps hold (they would keep the namespace terminating).
async fn clean_up(cluster: &Cluster, scenario: &Scenario) {
    let client = &cluster.client;
    let config_maps = request::CONFIG_MAP.api(client, &scenario.namespace);
    if let Ok(list) = config_maps.list(&ListParams::default()).await {
        let lift = Patch::Merge(serde_json::json!({"metadata": {"finalizers": null}}));
        for held in list
            .items
            .iter()
            .filter(|c| c.metadata.finalizers.as_ref().is_some_and(|f| !f.is_empty()))
        {
            if let Some(name) = &held.metadata.name {
                let _ = config_maps.patch(name, &PatchParams::default(), &lift).await;
            }
        }
    }
    let background = DeleteParams::background();
    let _ = crate::reality::request::NAMESPACE
        .api(client, "")
        .delete(&scenario.namespace, &background)
        .await;
    for (kind, name) in &scenario.cluster_objects {
        let _ = kind.api(client, "").delete(name, &background).await;
    }
}
