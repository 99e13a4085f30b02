//! Reports where platform teams look, through the real API server: an Audit policy's failure
//! becomes a result of the gateway's PolicyReport in the object's namespace (`kubectl get
//! policyreports -A`), a denial an Event on the object (`kubectl events --for`), and a burst of
//! 1,000 audited requests, sent through kube-apiserver as an operator's real updates, costs a
//! handful of report writes (counted twice: by a watch on the report and by the gateway's
//! metrics) and one Event, with the requests' latency measured beside the same policy's passing
//! requests. The wg-policy CRDs come from `kubectl suture install --policy-report-crds`; the
//! gateway writes with the install's RBAC (its ServiceAccount's token).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use kube::Api;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use serde_json::{Value, json};
use suture_e2e::gateway::Gateway;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Answer, Operator};
use suture_e2e::wait::{self, SETTLE};
use suture_e2e::{Cluster, binaries, gateway, scenes};

pub const TESTS: [Test; 1] = [Test {
    name: "policy_reports::an_audit_is_a_report_result_a_denial_an_event_and_a_burst_writes_little",
    run: an_audit_is_a_report_result_a_denial_an_event_and_a_burst_writes_little,
}];

const NS: &str = "e2e-reports";
const OPERATOR: &str = "system:serviceaccount:e2e-operators:db-operator";
/// The gateway's report flush (`--report-flush`, the install's default).
const FLUSH: Duration = Duration::from_secs(10);
/// Audited requests in the burst.
const BURST: usize = 1000;

/// Audits the judged operators' updates of ConfigMap `audited` (severity high); the same
/// policy passes their updates of any other.
const AUDIT: &str = r#"apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata:
  name: e2e-audit-updates
  annotations: {suture.dev/severity: high}
spec:
  actions: [Audit]
  subjects: {serviceAccounts: ["e2e-operators/*"]}
  matchConstraints:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: e2e-reports}}
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["configmaps"]}
  validations:
  - expression: "object.metadata.name != 'audited'"
    message: "ConfigMap audited was changed (e2e-audit-updates)"
"#;

/// Refuses the judged operators' deletes of ConfigMap `guarded`.
const DENY: &str = r#"apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: e2e-deny-guarded}
spec:
  action: Deny
  subjects: {serviceAccounts: ["e2e-operators/*"]}
  matchConstraints:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: e2e-reports}}
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["DELETE"], resources: ["configmaps"]}
  validations:
  - expression: "oldObject.metadata.name != 'guarded'"
    message: "guarded ConfigMaps are kept (e2e-deny-guarded)"
"#;

fn reports(cluster: &Cluster) -> Api<DynamicObject> {
    let resource = ApiResource {
        group: "wgpolicyk8s.io".into(),
        version: "v1alpha2".into(),
        api_version: "wgpolicyk8s.io/v1alpha2".into(),
        kind: "PolicyReport".into(),
        plural: "policyreports".into(),
    };
    Api::namespaced_with(cluster.client.clone(), NS, &resource)
}

/// Renders the install with `--policy-report-crds` and applies the two wg-policy CRDs alone.
async fn install_report_crds(cluster: &Cluster) -> anyhow::Result<()> {
    let dir = cluster.dir().join("policy-report-crds");
    let out = std::process::Command::new(binaries::path("kubectl-suture")?)
        .args(["install", "--self-signed", "--policy-report-crds", "-o"])
        .arg(&dir)
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "install: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for plural in ["policyreports", "clusterpolicyreports"] {
        let file = dir.join(format!("01-crd-{plural}.yaml"));
        let file = file.display().to_string();
        scene::kubectl(
            cluster,
            &[
                "apply",
                "--server-side",
                "--field-manager=suture-e2e",
                "-f",
                &file,
            ],
            None,
        )?;
        scene::until_established(cluster, &format!("{plural}.wgpolicyk8s.io")).await?;
    }
    Ok(())
}

/// The result of the gateway's report in [`NS`] for `policy` on ConfigMap `name`, once there.
async fn result_for(cluster: &Cluster, policy: &str, name: &str) -> anyhow::Result<Option<Value>> {
    let Some(report) = reports(cluster).get_opt("suture").await? else {
        return Ok(None);
    };
    let report = serde_json::to_value(report)?;
    Ok(report["results"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["policy"] == policy && r["resources"][0]["name"] == name)
        .cloned())
}

/// Patches ConfigMap `name` as the operator (a real update, sent to the gateway by
/// kube-apiserver); the client-side time of the request.
async fn touch(maps: &Api<ConfigMap>, name: &str, n: usize) -> anyhow::Result<Duration> {
    let patch = json!({"data": {"n": n.to_string()}});
    let started = Instant::now();
    maps.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(started.elapsed())
}

/// A labelled series of the gateway's `/metrics` (0 when absent).
async fn series(gateway: &Gateway, name: &str, labels: &str) -> anyhow::Result<f64> {
    gateway.metric(&format!("{name}{{{labels}}}")).await
}

/// The A/B replica with reports and Events off.
const OFF: &str = "e2e-reports-off";
/// Reviews posted to each of the two in the A/B.
const AB: usize = 300;

/// An UPDATE of ConfigMap `audited` by the operator, as kube-apiserver sends it (uid `uid`).
fn audited_update(uid: &str) -> Value {
    let map = |n: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "audited", "namespace": NS}, "data": {"n": n}});
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "requestKind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "requestResource": {"group": "", "version": "v1", "resource": "configmaps"},
            "name": "audited",
            "namespace": NS,
            "operation": "UPDATE",
            "userInfo": {"username": OPERATOR, "groups": ["system:serviceaccounts", "system:serviceaccounts:e2e-operators", "system:authenticated"]},
            "object": map("1"),
            "oldObject": map("0"),
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "UpdateOptions"}
        }
    })
}

/// The `latencyUs` of the decisions in the decision log at `path` on ConfigMap `name` in [`NS`]
/// whose uid starts with `uid_prefix`, in order.
fn decision_times(path: &std::path::Path, name: &str, uid_prefix: &str) -> anyhow::Result<Vec<Duration>> {
    Ok(std::fs::read_to_string(path)?
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|d| d["namespace"] == NS && d["operation"] == "UPDATE" && d["name"] == name)
        .filter(|d| d["uid"].as_str().is_some_and(|u| u.starts_with(uid_prefix)))
        .filter_map(|d| d["latencyUs"].as_u64().map(Duration::from_micros))
        .collect())
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn an_audit_is_a_report_result_a_denial_an_event_and_a_burst_writes_little(
    cluster: &mut Cluster,
) -> TestFuture<'_> {
    Box::pin(async move {
        let op: Operator = scene::operator(cluster, "e2e-operators", "db-operator").await?;
        gateway::ensure(cluster).await?;
        install_report_crds(cluster).await?;
        scene::apply(cluster, &scenes::namespace_yaml(NS))?;
        let admin: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), NS);
        for name in ["audited", "plain", "guarded"] {
            let map: ConfigMap =
                serde_json::from_value(json!({"metadata": {"name": name}, "data": {"n": "0"}}))?;
            if admin.get_opt(name).await?.is_none() {
                admin.create(&PostParams::default(), &map).await?;
            }
        }
        scene::apply(cluster, AUDIT)?;
        scene::apply(cluster, DENY)?;
        let maps: Api<ConfigMap> = Api::namespaced(op.client.clone(), NS);
        let dry = DeleteParams {
            dry_run: true,
            ..DeleteParams::default()
        };
        scene::until_answered(
            "the deny policy to take effect",
            Answer::RefusedWith("guarded ConfigMaps are kept"),
            || {
                let (maps, dry) = (maps.clone(), dry.clone());
                async move { maps.delete("guarded", &dry).await }
            },
        )
        .await?;
        let Some(gw) = cluster.gateway.as_ref() else {
            anyhow::bail!("no gateway");
        };
        // Both policies came in one reload: the audit one judges too once an update of
        // `audited` is counted under it.
        let audited_series = r#"policy="e2e-audit-updates",verdict="audit""#;
        let mut audited = 0usize;
        let decisions = "suture_gateway_decisions_total";
        wait::until("the audit policy to judge", SETTLE, || {
            audited += 1;
            let n = audited;
            let maps = maps.clone();
            async move {
                touch(&maps, "audited", n).await?;
                let seen = series(gw, decisions, audited_series).await?;
                Ok((seen < 1.0).then(|| format!("{seen} audits")))
            }
        })
        .await?;

        // 1. The Audit failure is a result of the namespace's PolicyReport.
        wait::until(
            "the audit in the PolicyReport",
            Duration::from_secs(60),
            || async {
                Ok(match result_for(cluster, "e2e-audit-updates", "audited").await? {
                    Some(_) => None,
                    None => Some("no result yet".to_owned()),
                })
            },
        )
        .await?;
        let result = result_for(cluster, "e2e-audit-updates", "audited")
            .await?
            .ok_or_else(|| anyhow::anyhow!("the result went"))?;
        anyhow::ensure!(
            result["result"] == "fail" && result["severity"] == "high",
            "{result}"
        );
        anyhow::ensure!(
            result["source"] == "suture" && result["rule"] == "validations[0]",
            "{result}"
        );
        anyhow::ensure!(
            result["message"] == "ConfigMap audited was changed (e2e-audit-updates)",
            "{result}"
        );
        anyhow::ensure!(result["properties"]["requester"] == OPERATOR, "{result}");
        anyhow::ensure!(result["properties"]["operation"] == "UPDATE", "{result}");
        anyhow::ensure!(result["resources"][0]["kind"] == "ConfigMap", "{result}");
        let listed = scene::kubectl(cluster, &["get", "policyreports", "-A"], None)?;
        let row = listed
            .lines()
            .find(|l| l.starts_with(NS) && l.contains("suture"))
            .ok_or_else(|| anyhow::anyhow!("kubectl get policyreports -A:\n{listed}"))?;
        println!(
            "  kubectl get policyreports -A: {}",
            row.split_whitespace().collect::<Vec<_>>().join(" ")
        );

        // 2. A denial is an Event on the object.
        let message = scene::refusal(
            "the operator's delete of guarded",
            maps.delete("guarded", &DeleteParams::default()).await,
        )?;
        anyhow::ensure!(message.contains("guarded ConfigMaps are kept"), "{message}");
        let mut shown = String::new();
        wait::until("the SutureDenied Event", Duration::from_secs(30), || {
            let out = scene::kubectl(cluster, &["events", "-n", NS, "--for", "configmap/guarded"], None);
            let state = match out {
                Ok(out) => {
                    let seen = out.contains("SutureDenied") && out.contains(OPERATOR);
                    shown = out;
                    (!seen).then(|| "no event yet".to_owned())
                }
                Err(error) => Some(format!("kubectl events: {error:#}")),
            };
            async move { Ok(state) }
        })
        .await?;
        println!(
            "  kubectl events --for configmap/guarded: {}",
            shown
                .lines()
                .last()
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        );

        // 3. A burst: 1,000 audited updates, interleaved with as many updates the same policy
        // passes (the baseline of the latency), and 200 denied deletes; the report's writes are
        // counted by a watch and by the gateway.
        // Watched from the report's current version: every later change is a write.
        let version = reports(cluster)
            .get("suture")
            .await?
            .metadata
            .resource_version
            .unwrap_or_default();
        let mut watch = reports(cluster)
            .watch(&WatchParams::default().fields("metadata.name=suture"), &version)
            .await?
            .boxed();
        let changes = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&changes);
        let writes_seen = tokio::spawn(async move {
            while let Some(event) = watch.next().await {
                if matches!(event, Ok(WatchEvent::Modified(_) | WatchEvent::Added(_))) {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
            }
        });

        let applied = r#"result="applied""#;
        let applied_before = series(gw, "suture_gateway_policy_report_writes_total", applied).await?;
        let events_before = [
            series(gw, "suture_gateway_events_total", r#"result="created""#).await?,
            series(gw, "suture_gateway_events_total", r#"result="updated""#).await?,
        ];
        let started = Instant::now();
        let (mut audited_times, mut passed_times) = (Vec::with_capacity(BURST), Vec::with_capacity(BURST));
        for i in 0..BURST {
            audited += 1;
            // Alternating which goes first, so that neither gains from the other's warm-up.
            if i % 2 == 0 {
                audited_times.push(touch(&maps, "audited", audited).await?);
                passed_times.push(touch(&maps, "plain", i).await?);
            } else {
                passed_times.push(touch(&maps, "plain", i).await?);
                audited_times.push(touch(&maps, "audited", audited).await?);
            }
        }
        for _ in 0..200 {
            scene::refusal(
                "a denied delete",
                maps.delete("guarded", &DeleteParams::default()).await,
            )?;
        }
        let burst = started.elapsed();
        // The last batch is written one flush interval after its first observation. The
        // result counts the reviews the gateway judged, which is at least the updates sent:
        // kube-apiserver calls the webhook again when an update retries after a conflict with
        // its cache.
        let sent = audited;
        let judged = series(gw, decisions, audited_series).await? as usize;
        anyhow::ensure!(judged >= sent, "{judged} audits judged for {sent} updates");
        wait::until("the burst counted in the report", FLUSH * 3, || async {
            let count = result_for(cluster, "e2e-audit-updates", "audited")
                .await?
                .and_then(|r| {
                    r["properties"]["count"]
                        .as_str()
                        .and_then(|c| c.parse::<usize>().ok())
                })
                .unwrap_or(0);
            Ok((count != judged).then(|| format!("count {count} of {judged} judged")))
        })
        .await?;
        println!(
            "  the result counts {judged} audits: {sent} updates sent, {} judged again by kube-apiserver's retries",
            judged - sent
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
        writes_seen.abort();
        let watched = changes.load(Ordering::Relaxed);
        let applied_after = series(gw, "suture_gateway_policy_report_writes_total", applied).await?;
        let gateway_writes = applied_after - applied_before;
        let bound = (burst.as_secs_f64() / FLUSH.as_secs_f64()).ceil() + 2.0;
        println!(
            "  burst: {BURST} audited + {BURST} passed updates and 200 denied deletes in {:.1}s; report writes: {gateway_writes} (gateway), {watched} changes seen by the watch (bound {bound})",
            burst.as_secs_f64()
        );
        anyhow::ensure!(
            gateway_writes >= 1.0 && gateway_writes <= bound,
            "{gateway_writes} writes for the burst"
        );
        anyhow::ensure!(
            watched >= 1 && watched as f64 <= bound,
            "the watch saw {watched} changes of the report"
        );
        let events = [
            series(gw, "suture_gateway_events_total", r#"result="created""#).await? - events_before[0],
            series(gw, "suture_gateway_events_total", r#"result="updated""#).await? - events_before[1],
        ];
        let event_api: Api<Event> = Api::namespaced(cluster.client.clone(), NS);
        let guarded: Vec<Event> = event_api
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter(|e| {
                e.reason.as_deref() == Some("SutureDenied")
                    && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("guarded")
            })
            .collect();
        println!(
            "  200 more denials of guarded: {} Event created, {} count updates; {} SutureDenied Event object(s) on it",
            events[0],
            events[1],
            guarded.len()
        );
        anyhow::ensure!(events[0] == 0.0, "a repeat created {} Events", events[0]);
        anyhow::ensure!(guarded.len() == 1, "{} Events for guarded", guarded.len());
        // The repeats' count reaches the Event within one refresh interval (`--event-refresh`,
        // 1m by default) of the last write.
        let name = guarded[0].metadata.name.clone().unwrap_or_default();
        wait::until(
            "the denials counted in the Event's series",
            Duration::from_secs(150),
            || {
                let (event_api, name) = (event_api.clone(), name.clone());
                async move {
                    let count = event_api.get(&name).await?.series.map_or(1, |s| s.count);
                    Ok((count != 201).then(|| format!("series count {count}")))
                }
            },
        )
        .await?;
        let updated =
            series(gw, "suture_gateway_events_total", r#"result="updated""#).await? - events_before[1];
        println!("  the Event's series counts the 201 denials after {updated} count update(s)");
        // Latency: measured, not asserted. Through kube-apiserver from the client, with the
        // passed updates' two halves as the noise; and in the gateway (its decision log's
        // latency_us), where the reporting work is.
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let halves = (
            median(passed_times[..BURST / 2].to_vec()),
            median(passed_times[BURST / 2..].to_vec()),
        );
        let (audited_median, passed_median) = (median(audited_times), median(passed_times));
        println!(
            "  update latency through kube-apiserver (client side, medians of {BURST}): audited {:.2} ms, passed {:.2} ms, ratio {:.3}; passed first half / second half {:.3}",
            ms(audited_median),
            ms(passed_median),
            ms(audited_median) / ms(passed_median).max(1e-9),
            ms(halves.0) / ms(halves.1).max(1e-9)
        );
        let gateway_dir = cluster.dir().join("gateway");
        let (in_audited, in_passed) = (
            decision_times(&gateway_dir.join("suture-gateway.log"), "audited", "")?,
            decision_times(&gateway_dir.join("suture-gateway.log"), "plain", "")?,
        );
        println!(
            "  in the gateway (decision log, medians of {} and {}): audited {:.1} µs, passed {:.1} µs",
            in_audited.len(),
            in_passed.len(),
            ms(median(in_audited)) * 1e3,
            ms(median(in_passed)) * 1e3
        );

        // The reports' own cost: the same audited review judged by this gateway and by a
        // replica with reports and Events off, alternately, timed in each (decision log).
        let mut off = gw
            .replica_with(OFF, &["--no-policy-reports", "--no-events"])
            .await?;
        for i in 0..AB {
            let (first, second) = if i % 2 == 0 { (gw, &off) } else { (&off, gw) };
            for (j, gateway) in [first, second].into_iter().enumerate() {
                let response = gateway.post_review(&audited_update(&format!("ab-{i}-{j}")))?;
                anyhow::ensure!(response["allowed"] == true, "{response}");
            }
        }
        // The decision logs are flushed periodically: wait until both hold every decision.
        let on_log = gateway_dir.join("suture-gateway.log");
        let off_log = gateway_dir.join(OFF).join("suture-gateway.log");
        wait::until("both decision logs written", Duration::from_secs(20), || {
            let counts = decision_times(&on_log, "audited", "ab-")
                .and_then(|on| Ok((on.len(), decision_times(&off_log, "audited", "ab-")?.len())));
            async move {
                let (on, off) = counts?;
                Ok((on < AB || off < AB).then(|| format!("{on} and {off} of {AB}")))
            }
        })
        .await?;
        off.kill();
        let on_times = decision_times(&on_log, "audited", "ab-")?;
        let off_times = decision_times(&off_log, "audited", "ab-")?;
        let halves = (
            median(on_times[..AB / 2].to_vec()),
            median(on_times[AB / 2..].to_vec()),
        );
        let (on, off) = (median(on_times), median(off_times));
        println!(
            "  the same audited review, {AB} each, alternated (gateway's own time, debug build): reports on {:.1} µs, off {:.1} µs, ratio {:.3}; on's halves {:.3}",
            ms(on) * 1e3,
            ms(off) * 1e3,
            ms(on) / ms(off).max(1e-9),
            ms(halves.0) / ms(halves.1).max(1e-9)
        );
        Ok(())
    })
}
