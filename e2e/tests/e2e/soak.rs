//! The soak: the suite's gateway in live mode while the cluster churns — pods created, relabelled
//! and deleted continuously, a Deployment rolled out again and again, namespaces created and
//! deleted — and wrk posts a judged review (an operator's dry-run pod DELETE, which reads
//! `impact` and `history`) for the whole run. It asserts zero transport errors and non-200
//! answers, zero answers by failure policy (nothing unjudged), a resident memory that stays
//! flat after warm-up (the series is printed, one sample every 10 s), and at the end a model
//! whose object counts equal the cluster's, kind by kind.
//!
//! Long by nature: it runs only when `SUTURE_SOAK` gives its length in seconds (the run
//! is `SUTURE_SOAK=600`), and needs `wrk` on the PATH.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use suture_e2e::Cluster;
use suture_e2e::gateway::{self, http_get};
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, TOLERATION};
use suture_e2e::{scenes, wait};

pub const TESTS: [Test; 1] = [Test {
    name: "soak::a_churning_cluster_under_load_for_the_soak_length",
    run: a_churning_cluster_under_load_for_the_soak_length,
}];

const NS: &str = "e2e-soak";

/// The soak's length, when asked for.
fn length() -> Option<Duration> {
    let seconds: u64 = std::env::var("SUTURE_SOAK").ok()?.parse().ok()?;
    Some(Duration::from_secs(seconds.max(30)))
}

fn wrk_available() -> bool {
    std::process::Command::new("wrk")
        .arg("--version")
        .output()
        .is_ok()
}

/// A bare pod of the churn, tolerating the simulated nodes.
fn churn_pod(name: &str) -> anyhow::Result<Pod> {
    let toleration: serde_json::Value = serde_yaml_ng::from_str(TOLERATION)?;
    Ok(serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"app": "churn", "round": "0"}},
        "spec": {"tolerations": [toleration], "containers": [{"name": "c", "image": "busybox:1.36"}]}
    }))?)
}

/// What the churn did, for the report.
#[derive(Debug, Default)]
struct Churned {
    created: u64,
    relabelled: u64,
    deleted: u64,
    rollouts: u64,
    namespaces: u64,
}

/// Churns the cluster as the admin (not judged: the churn is there to move the model) until
/// `until`.
async fn churn(client: kube::Client, until: Instant) -> anyhow::Result<Churned> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> = Api::namespaced(client.clone(), NS);
    let mut done = Churned::default();
    let mut round: u64 = 0;
    while Instant::now() < until {
        round += 1;
        let name = format!("churn-{round}");
        pods.create(&PostParams::default(), &churn_pod(&name)?).await?;
        done.created += 1;
        if round > 1 {
            let previous = format!("churn-{}", round - 1);
            let relabel = json!({"metadata": {"labels": {"round": round.to_string()}}});
            if pods
                .patch(&previous, &PatchParams::default(), &Patch::Merge(&relabel))
                .await
                .is_ok()
            {
                done.relabelled += 1;
            }
        }
        if round > 3 {
            let old = format!("churn-{}", round - 3);
            if pods.delete(&old, &DeleteParams::default()).await.is_ok() {
                done.deleted += 1;
            }
        }
        if round.is_multiple_of(15) {
            let restart = json!({"spec": {"template": {"metadata": {"annotations": {"e2e.suture.dev/round": round.to_string()}}}}});
            deployments
                .patch("web", &PatchParams::default(), &Patch::Merge(&restart))
                .await?;
            done.rollouts += 1;
        }
        if round.is_multiple_of(30) {
            let name = format!("e2e-soak-tmp-{round}");
            let namespace: Namespace = serde_json::from_value(json!({"metadata": {"name": name}}))?;
            namespaces.create(&PostParams::default(), &namespace).await?;
            let config: ConfigMap =
                serde_json::from_value(json!({"metadata": {"name": "settings"}, "data": {"k": "v"}}))?;
            Api::<ConfigMap>::namespaced(client.clone(), &name)
                .create(&PostParams::default(), &config)
                .await?;
            namespaces.delete(&name, &DeleteParams::default()).await?;
            done.namespaces += 1;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Ok(done)
}

/// How many objects of `kind` the cluster holds (terminating ones included, as the model keeps
/// them until they are gone).
async fn count_objects(client: &kube::Client, kind: &str) -> anyhow::Result<u64> {
    use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
    use k8s_openapi::api::core::v1::Service;
    let params = ListParams::default();
    let count = match kind {
        "Pod" => Api::<Pod>::all(client.clone())
            .list_metadata(&params)
            .await?
            .items
            .len(),
        "Namespace" => Api::<Namespace>::all(client.clone())
            .list_metadata(&params)
            .await?
            .items
            .len(),
        "Deployment.apps" => Api::<Deployment>::all(client.clone())
            .list_metadata(&params)
            .await?
            .items
            .len(),
        "ReplicaSet.apps" => Api::<ReplicaSet>::all(client.clone())
            .list_metadata(&params)
            .await?
            .items
            .len(),
        "Service" => Api::<Service>::all(client.clone())
            .list_metadata(&params)
            .await?
            .items
            .len(),
        "ConfigMap" => Api::<ConfigMap>::all(client.clone())
            .list_metadata(&params)
            .await?
            .items
            .len(),
        other => anyhow::bail!("no listing for {other}"),
    };
    Ok(u64::try_from(count)?)
}

/// The gateway's model counts by kind, from its /metrics.
async fn model_counts(metrics: &str) -> anyhow::Result<BTreeMap<String, u64>> {
    let (_, text) = http_get(metrics, "/metrics").await?;
    Ok(text
        .lines()
        .filter_map(|l| l.strip_prefix("suture_gateway_model_objects{kind=\""))
        .filter_map(|l| {
            let (kind, rest) = l.split_once("\"}")?;
            Some((kind.to_owned(), rest.trim().parse().ok()?))
        })
        .collect())
}

/// The counter `name`'s total over its series, from /metrics.
async fn counter_total(metrics: &str, name: &str) -> anyhow::Result<f64> {
    let (_, text) = http_get(metrics, "/metrics").await?;
    Ok(text
        .lines()
        .filter(|l| l.starts_with(name))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum())
}

fn a_churning_cluster_under_load_for_the_soak_length(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let Some(length) = length() else {
            println!("  skipped: set SUTURE_SOAK=600 to soak the gateway for 10 minutes (needs wrk)");
            return Ok(());
        };
        if !wrk_available() {
            println!("  skipped: wrk is not on the PATH (apt-get install wrk)");
            return Ok(());
        }
        let op = scene::operator(cluster, "e2e-operators", "web-operator").await?;
        gateway::ensure(cluster).await?;
        scene::apply(cluster, &scenes::web(NS, "web", 3, "RollingUpdate", 1))?;
        scene::deployment_ready(cluster, NS, "web").await?;
        scene::gateway_sees(&op, NS).await?;
        let Some(gateway) = cluster.gateway.as_ref() else {
            anyhow::bail!("no gateway");
        };
        let pid = gateway
            .pid()
            .ok_or_else(|| anyhow::anyhow!("the gateway is not running"))?;
        let failures_before =
            counter_total(&gateway.metrics, "suture_gateway_evaluation_errors_total").await?;

        // The judged review: an operator's dry-run DELETE of a pod of the Deployment.
        let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), NS);
        let target = pods
            .list(&ListParams::default().labels("app=web"))
            .await?
            .items
            .into_iter()
            .find_map(|p| p.metadata.name)
            .ok_or_else(|| anyhow::anyhow!("no web pod"))?;
        let review = json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "4c1e9a2b-7d3f-4e8a-b6c5-0f2d9e8a7b61",
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "resource": {"group": "", "version": "v1", "resource": "pods"},
                "name": target, "namespace": NS, "operation": "DELETE",
                "userInfo": {"username": "system:serviceaccount:e2e-operators:web-operator", "groups": ["system:serviceaccounts", "system:authenticated"]},
                "object": null,
                "oldObject": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": target, "namespace": NS, "labels": {"app": "web"}}},
                "dryRun": true,
                "options": {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions"}
            }
        });
        let dir = tempfile::tempdir()?;
        let review_file = dir.path().join("review.json");
        std::fs::write(&review_file, serde_json::to_vec(&review)?)?;
        let lua = dir.path().join("post.lua");
        std::fs::write(
            &lua,
            "local f = assert(io.open(os.getenv('REVIEW'), 'rb'))\nwrk.method = 'POST'\nwrk.body = f:read('*a')\n\
             wrk.headers['Content-Type'] = 'application/json'\nf:close()\n",
        )?;
        let load = tokio::process::Command::new("wrk")
            .env("REVIEW", &review_file)
            .args([
                "-t1",
                "-c4",
                &format!("-d{}s", length.as_secs()),
                "--latency",
                "-s",
            ])
            .arg(&lua)
            .arg(format!("{}/validate", gateway.url))
            .output();
        let until = Instant::now() + length;
        let churn = tokio::spawn(churn(cluster.client.clone(), until));

        // Resident memory every 10 s while the load and the churn run.
        let mut series = Vec::new();
        let sampler = async {
            while Instant::now() < until {
                if let Some(rss) = gateway::rss_kib(pid) {
                    series.push(rss);
                }
                tokio::time::sleep(Duration::from_secs(10)).await;
            }
        };
        let (load, ()) = tokio::join!(load, sampler);
        let load = load?;
        let churned = churn.await??;
        let report = String::from_utf8_lossy(&load.stdout).into_owned();
        println!("  churn: {churned:?}");
        println!(
            "  wrk: {}",
            report
                .lines()
                .filter(|l| l.contains("Requests/sec")
                    || l.contains("50%")
                    || l.contains("99%")
                    || l.contains("requests in"))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        println!("  VmRSS every 10 s (KiB): {series:?}");

        anyhow::ensure!(
            load.status.success(),
            "wrk: {}",
            String::from_utf8_lossy(&load.stderr)
        );
        anyhow::ensure!(!report.contains("Socket errors"), "transport errors: {report}");
        anyhow::ensure!(!report.contains("Non-2xx"), "answers other than 200: {report}");
        let failures = counter_total(&gateway.metrics, "suture_gateway_evaluation_errors_total").await?
            - failures_before;
        anyhow::ensure!(failures == 0.0, "{failures} answers by failure policy (unjudged)");
        // Flat after warm-up: the last samples within a fifth of the level reached after a minute.
        let warm = series.get(6).copied().unwrap_or_default();
        let peak_after = series.iter().skip(6).max().copied().unwrap_or_default();
        anyhow::ensure!(
            warm == 0 || peak_after <= warm + warm / 5,
            "resident memory grew from {warm} KiB after warm-up to {peak_after} KiB"
        );

        // The model equals the cluster, kind by kind (named `Kind` or `Kind.group`), once the
        // last events are in.
        let kinds = [
            "Pod",
            "Namespace",
            "Deployment.apps",
            "ReplicaSet.apps",
            "Service",
            "ConfigMap",
        ];
        wait::until(
            "the gateway's model to equal the cluster",
            Duration::from_secs(30),
            || {
                let (client, metrics) = (cluster.client.clone(), gateway.metrics.clone());
                async move {
                    let model = model_counts(&metrics).await?;
                    for kind in kinds {
                        let listed = count_objects(&client, kind).await?;
                        let held = model.get(kind).copied().unwrap_or(0);
                        if held != listed {
                            return Ok(Some(format!("{kind}: model {held}, cluster {listed}")));
                        }
                    }
                    Ok(None)
                }
            },
        )
        .await?;
        println!("  model counts equal the cluster's for {kinds:?}");
        Ok(())
    })
}
