//! The plugin through the real kubectl: kubectl finds `kubectl-suture` on PATH; `check` (of a
//! named object and of a collection) and `impact` against the live cluster agree with `check
//! --cluster` on a `snapshot` of it; and `test --live` judges a suite that names no cluster
//! against the live one.

use std::process::Command;

use suture_e2e::Cluster;
use suture_e2e::binaries;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene;

use suture_e2e::scenes;

pub const TESTS: [Test; 1] = [Test {
    name: "plugin::kubectl_suture_live_and_on_a_snapshot_agree",
    run: kubectl_suture_live_and_on_a_snapshot_agree,
}];

/// Runs the real kubectl with a PATH holding only `kubectl-suture` before the usual one (cargo's
/// target directory also holds `kubectl-suture.d`, which `kubectl plugin list` would flag).
fn kubectl(cluster: &Cluster, args: &[&str]) -> anyhow::Result<(i32, String, String)> {
    let bin = cluster.dir().join("plugin-path");
    let link = bin.join("kubectl-suture");
    if !link.exists() {
        std::fs::create_dir_all(&bin)?;
        std::os::unix::fs::symlink(binaries::path("kubectl-suture")?, &link)?;
    }
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(&cluster.kubectl)
        .env("PATH", path)
        .env("KUBECONFIG", &cluster.kubeconfig)
        .args(args)
        .output()?;
    Ok((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// A suite naming no `cluster:`: its verdicts depend on the cluster it is judged against.
fn live_suite(namespace: &str) -> String {
    format!(
        r#"apiVersion: suture.dev/v1alpha1
kind: SutureTest
metadata: {{name: live}}
policies: [builtin]
cases:
- name: deleting the live database is denied
  operation: DELETE
  userInfo: {{username: "system:serviceaccount:e2e-operators:db-operator"}}
  oldObject: {{apiVersion: apps/v1, kind: StatefulSet, metadata: {{name: db, namespace: {namespace}}}}}
  expect: {{allowed: false}}
- name: deleting an unused ConfigMap is allowed
  operation: DELETE
  userInfo: {{username: "system:serviceaccount:e2e-operators:db-operator"}}
  oldObject: {{apiVersion: v1, kind: ConfigMap, metadata: {{name: spare, namespace: {namespace}}}}}
  expect: {{allowed: true}}
"#
    )
}

/// Whether a request was allowed, and the policies that denied it.
type Verdict = (bool, Vec<String>);

fn verdict(json: &str) -> anyhow::Result<Verdict> {
    let value: serde_json::Value = serde_json::from_str(json)?;
    let allowed = value["allowed"].as_bool().unwrap_or(true);
    let mut policies: Vec<String> = value["denials"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["policy"].as_str().map(str::to_owned))
        .collect();
    policies.sort();
    Ok((allowed, policies))
}

/// Each item's name and verdict in a collection's `check -o json` document.
fn collection_verdicts(json: &str) -> anyhow::Result<Vec<(String, Verdict)>> {
    let value: serde_json::Value = serde_json::from_str(json)?;
    value["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            let name = item["name"].as_str().unwrap_or_default().to_owned();
            Ok((name, verdict(&item.to_string())?))
        })
        .collect()
}

fn kubectl_suture_live_and_on_a_snapshot_agree(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let ns = "e2e-plugin";
        scene::apply(cluster, &scenes::database(ns, 3, 2))?;
        let spare = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: spare, namespace: {ns}}}\ndata: {{k: v}}\n"
        );
        scene::apply(cluster, &spare)?;
        scene::statefulset_ready(cluster, ns, "db").await?;
        let (code, out, err) = kubectl(cluster, &["plugin", "list"])?;
        anyhow::ensure!(
            code == 0 && out.contains("kubectl-suture"),
            "plugin list: {out}{err}"
        );
        let check = [
            "suture",
            "check",
            "delete",
            "statefulset/db",
            "-n",
            ns,
            "-o",
            "json",
        ];
        let (code, live, err) = kubectl(cluster, &check)?;
        anyhow::ensure!(code == 1, "live check exited {code}: {err}");
        let live_verdict = verdict(&live)?;
        anyhow::ensure!(!live_verdict.0 && !live_verdict.1.is_empty(), "live: {live}");
        let mut impact_args = check;
        impact_args[1] = "impact";
        let (code, impact, err) = kubectl(cluster, &impact_args)?;
        anyhow::ensure!(code == 0, "impact exited {code}: {err}");
        let impact: serde_json::Value = serde_json::from_str(&impact)?;
        anyhow::ensure!(impact["summary"]["podsDisrupted"] == 3, "impact: {impact}");
        let (code, snapshot, err) = kubectl(cluster, &["suture", "snapshot", "-A", "-o", "yaml"])?;
        anyhow::ensure!(code == 0, "snapshot exited {code}: {err}");
        let file = cluster.dir().join("snapshot.yaml");
        std::fs::write(&file, snapshot)?;
        let file = file.display().to_string();
        let mut offline = check.to_vec();
        offline.extend(["--cluster", &file]);
        let (code, snap, err) = kubectl(cluster, &offline)?;
        anyhow::ensure!(code == 1, "snapshot check exited {code}: {err}");
        anyhow::ensure!(verdict(&snap)? == live_verdict, "live {live} vs snapshot {snap}");
        println!(
            "  live and snapshot verdicts agree: denied by {}",
            live_verdict.1.join(", ")
        );

        // A deletecollection what-if: every live claim, one DELETE each.
        let collection = [
            "suture", "check", "delete", "pvc", "--all", "-n", ns, "-o", "json",
        ];
        let (code, live, err) = kubectl(cluster, &collection)?;
        anyhow::ensure!(code == 1, "live collection check exited {code}: {err}");
        let live_items = collection_verdicts(&live)?;
        anyhow::ensure!(
            !live_items.is_empty()
                && live_items
                    .iter()
                    .all(|(_, (allowed, policies))| !allowed
                        && policies.contains(&"suture-data-loss".to_owned())),
            "live collection: {live}"
        );
        let mut offline = collection.to_vec();
        offline.extend(["--cluster", &file]);
        let (code, snap, err) = kubectl(cluster, &offline)?;
        anyhow::ensure!(code == 1, "snapshot collection check exited {code}: {err}");
        anyhow::ensure!(
            collection_verdicts(&snap)? == live_items,
            "live {live} vs snapshot {snap}"
        );
        println!(
            "  a deletecollection of the {} claims: each refused by suture-data-loss, live and on the snapshot",
            live_items.len()
        );

        // The scene's own manifests, as written (no API-server defaults), judged as a release:
        // the StatefulSet's template is the one running, so nothing rolls; with a new image it
        // does. Live and on the snapshot alike.
        let scene_text = scenes::database(ns, 3, 2);
        for (label, text, rolls) in [
            ("unchanged", scene_text.clone(), false),
            (
                "new image",
                scene_text.replace("postgres:16", "postgres:17"),
                true,
            ),
        ] {
            let release = cluster
                .dir()
                .join(format!("release-{}.yaml", label.replace(' ', "-")));
            std::fs::write(&release, &text)?;
            let release = release.display().to_string();
            let args = ["suture", "check", "-f", &release, "-o", "json"];
            let (code, live, err) = kubectl(cluster, &args)?;
            anyhow::ensure!(
                code == 0 || code == 1,
                "release check ({label}) exited {code}: {err}"
            );
            let mut offline = args.to_vec();
            offline.extend(["--cluster", &file]);
            let (_, snap, err) = kubectl(cluster, &offline)?;
            let (live, snap): (serde_json::Value, serde_json::Value) = (
                serde_json::from_str(&live)?,
                serde_json::from_str(&snap).map_err(|e| anyhow::anyhow!("{e}: {err}"))?,
            );
            let figures = |doc: &serde_json::Value| -> Vec<(String, bool, serde_json::Value)> {
                doc["items"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|item| {
                        (
                            format!(
                                "{} {}",
                                item["kind"].as_str().unwrap_or_default(),
                                item["name"].as_str().unwrap_or_default()
                            ),
                            item["allowed"].as_bool().unwrap_or(false),
                            item["impact"]["summary"].clone(),
                        )
                    })
                    .collect()
            };
            anyhow::ensure!(
                figures(&live) == figures(&snap),
                "release ({label}): live {live} vs snapshot {snap}"
            );
            let statefulset = live["items"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|item| item["kind"] == "StatefulSet")
                .ok_or_else(|| anyhow::anyhow!("release ({label}): no StatefulSet item in {live}"))?;
            let disrupted = statefulset["impact"]["summary"]["podsDisrupted"]
                .as_u64()
                .unwrap_or(0);
            anyhow::ensure!(
                (disrupted > 0) == rolls,
                "release ({label}): the StatefulSet disrupts {disrupted} pods: {statefulset}"
            );
            println!(
                "  the scene's manifests as a release ({label}): {} requests, the StatefulSet disrupts {disrupted} pods, live and on the snapshot",
                figures(&live).len()
            );
        }

        let suite = cluster.dir().join("live.test.yaml");
        std::fs::write(&suite, live_suite(ns))?;
        let suite = suite.display().to_string();
        let (code, out, err) = kubectl(cluster, &["suture", "test", &suite, "--live", "--no-color"])?;
        anyhow::ensure!(code == 0, "test --live exited {code}: {out}{err}");
        // Hermetic (an empty cluster), the database is not there to protect: the case fails.
        let (code, out, _) = kubectl(cluster, &["suture", "test", &suite, "--no-color"])?;
        anyhow::ensure!(
            code == 1 && out.contains("deleting the live database is denied"),
            "hermetic test exited {code}: {out}"
        );
        println!("  test --live passes against the cluster; the same suite fails hermetically");
        Ok(())
    })
}
