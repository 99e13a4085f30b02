//! Suture's estimate of a scenario's request: the AdmissionReview written to a file and judged
//! by `kubectl suture impact -A -o json` against the live cluster (the model the gateway would
//! hold, read through the same projection), then each figure's objects named by uid from the
//! objects seen before the request.

use std::path::Path;
use std::process::Command;

use anyhow::Context;
use serde_json::Value;

use crate::reality::figure::{Figure, Figures, Objects, label};
use crate::reality::moment::Store;

/// The `impact` document for `review`, computed by the plugin against the cluster of
/// `kubeconfig`.
pub fn impact(plugin: &Path, kubeconfig: &Path, review: &Value, dir: &Path) -> anyhow::Result<Value> {
    let file = tempfile::Builder::new()
        .prefix("review-")
        .suffix(".json")
        .tempfile_in(dir)?;
    std::fs::write(file.path(), serde_json::to_vec(review)?)?;
    let out = Command::new(plugin)
        .arg("impact")
        .arg("-f")
        .arg(file.path())
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .args(["-A", "-o", "json"])
        .output()
        .with_context(|| format!("cannot run {}", plugin.display()))?;
    anyhow::ensure!(
        out.status.success(),
        "kubectl suture impact: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).context("kubectl suture impact printed no JSON")
}

/// The uid of the object `kind namespace/name` among those before the request; an object the
/// scenario did not see is named by its label (it then counts as the estimate's alone).
fn uid(before: &Store, kind: &str, namespace: &str, name: &str) -> String {
    before
        .iter()
        .find(|(_, o)| o.kind.kind == kind && o.namespace() == namespace && o.name() == name)
        .map_or_else(|| label(kind, namespace, name), |(uid, _)| uid.clone())
}

fn entry(before: &Store, kind: &str, namespace: &str, name: &str) -> (String, String) {
    (uid(before, kind, namespace, name), label(kind, namespace, name))
}

fn str_of<'a>(item: &'a Value, key: &str) -> &'a str {
    item[key].as_str().unwrap_or_default()
}

fn list(impact: &Value, key: &str) -> Vec<Value> {
    impact[key].as_array().cloned().unwrap_or_default()
}

/// The volume a lost-volume entry names: its PV by name, else its claim's bound volume, else
/// the claim itself.
fn volume(before: &Store, item: &Value) -> (String, String) {
    let namespace = str_of(item, "namespace");
    let claim = str_of(item, "claim");
    let by_name = |name: &str| {
        before
            .iter()
            .find(|(_, o)| o.kind.kind == "PersistentVolume" && o.name() == name)
            .map(|(uid, o)| (uid.clone(), o.label()))
    };
    if let Some(found) = item["volume"].as_str().and_then(by_name) {
        return found;
    }
    let bound = before
        .values()
        .find(|o| o.kind.kind == "PersistentVolumeClaim" && o.namespace() == namespace && o.name() == claim)
        .and_then(|c| c.value["spec"]["volumeName"].as_str());
    bound
        .and_then(by_name)
        .unwrap_or_else(|| entry(before, "PersistentVolumeClaim", namespace, claim))
}

/// Each figure's objects in the estimate, by uid.
pub fn figures(impact: &Value, before: &Store) -> Figures {
    let mut figures = Figures::new();
    let deleted: Objects = list(impact, "deleted")
        .iter()
        .map(|d| {
            entry(
                before,
                str_of(d, "kind"),
                str_of(d, "namespace"),
                str_of(d, "name"),
            )
        })
        .collect();
    figures.insert(Figure::Deleted, deleted);
    let pods: Objects = list(impact, "pods")
        .iter()
        .map(|p| entry(before, "Pod", str_of(p, "namespace"), str_of(p, "name")))
        .collect();
    figures.insert(Figure::PodsDisrupted, pods);
    let volumes: Objects = list(impact, "volumes")
        .iter()
        .map(|v| volume(before, v))
        .collect();
    figures.insert(Figure::DataLoss, volumes);
    let services: Objects = list(impact, "services")
        .iter()
        .filter(|s| s["readyBefore"].as_u64().unwrap_or(0) > 0 && s["readyAfter"].as_u64() == Some(0))
        .map(|s| entry(before, "Service", str_of(s, "namespace"), str_of(s, "name")))
        .collect();
    figures.insert(Figure::ServicesWithoutEndpoints, services);
    let budgets: Objects = list(impact, "pdbs")
        .iter()
        .filter(|p| p["violated"].as_bool() == Some(true))
        .map(|p| {
            entry(
                before,
                "PodDisruptionBudget",
                str_of(p, "namespace"),
                str_of(p, "name"),
            )
        })
        .collect();
    figures.insert(Figure::PdbViolations, budgets);
    let down: Objects = list(impact, "workloads")
        .iter()
        .filter(|w| w["readyBefore"].as_u64().unwrap_or(0) > 0 && w["readyWorst"].as_u64() == Some(0))
        .map(|w| {
            entry(
                before,
                str_of(w, "kind"),
                str_of(w, "namespace"),
                str_of(w, "name"),
            )
        })
        .collect();
    figures.insert(Figure::WorkloadsDown, down);
    let quorum: Objects = list(impact, "quorum")
        .iter()
        .filter(|q| q["lost"].as_bool() == Some(true))
        .map(|q| entry(before, "StatefulSet", str_of(q, "namespace"), str_of(q, "name")))
        .collect();
    figures.insert(Figure::QuorumLost, quorum);
    figures
}

/// The estimate's notes (what it assumed or could not model).
pub fn notes(impact: &Value) -> Vec<String> {
    list(impact, "notes")
        .iter()
        .filter_map(|n| n.as_str().map(str::to_owned))
        .collect()
}
