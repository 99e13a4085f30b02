//! The storage part of the simulation, as a static or external provisioner does it: a pending
//! claim with no volume gets a PersistentVolume pre-bound to it (the real PV binder completes the
//! binding), annotated as provisioned by the simulation with reclaim policy Delete, as dynamic
//! provisioning sets it; when the binder releases such a volume under Delete, the simulation
//! deletes it (a Retain volume stays Released, its data kept).

use futures::StreamExt;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use kube::runtime::watcher;

use crate::simulator::applied;
use serde_json::json;

/// The provisioner name the simulation's volumes carry (`pv.kubernetes.io/provisioned-by`).
pub const PROVISIONER: &str = "e2e.suture.dev/simulated";

fn volume(claim: &PersistentVolumeClaim) -> anyhow::Result<Option<PersistentVolume>> {
    let (Some(name), Some(namespace), Some(uid)) = (
        claim.metadata.name.as_deref(),
        claim.metadata.namespace.as_deref(),
        claim.metadata.uid.as_deref(),
    ) else {
        return Ok(None);
    };
    let spec = claim.spec.clone().unwrap_or_default();
    let size = spec
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage"))
        .map_or_else(|| "1Gi".to_owned(), |q| q.0.clone());
    let modes = spec
        .access_modes
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| vec!["ReadWriteOnce".to_owned()]);
    Ok(Some(serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": format!("pvc-{uid}"),
            "annotations": {"pv.kubernetes.io/provisioned-by": PROVISIONER},
            "labels": {PROVISIONER: "true"},
        },
        "spec": {
            "capacity": {"storage": size},
            "accessModes": modes,
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": spec.storage_class_name.unwrap_or_default(),
            "volumeMode": spec.volume_mode.unwrap_or_else(|| "Filesystem".to_owned()),
            "hostPath": {"path": format!("/var/lib/suture-e2e/{uid}")},
            "claimRef": {
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "namespace": namespace, "name": name, "uid": uid,
            },
        },
    }))?))
}

/// Provisions a volume for every claim that has none, forever.
pub async fn provision(client: kube::Client) {
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    let mut claims = applied(
        Api::<PersistentVolumeClaim>::all(client),
        watcher::Config::default(),
    )
    .boxed();
    while let Some(claim) = claims.next().await {
        let unbound = claim.spec.as_ref().is_none_or(|s| s.volume_name.is_none());
        let pending = claim
            .status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .is_none_or(|p| p == "Pending");
        if claim.metadata.deletion_timestamp.is_some() || !unbound || !pending {
            continue;
        }
        if let Ok(Some(pv)) = volume(&claim) {
            // AlreadyExists: provisioned on an earlier event.
            let _ = volumes.create(&PostParams::default(), &pv).await;
        }
    }
}

/// Deletes the simulation's Released volumes whose reclaim policy is Delete, forever.
pub async fn reclaim(client: kube::Client) {
    let volumes: Api<PersistentVolume> = Api::all(client);
    let config = watcher::Config::default().labels(&format!("{PROVISIONER}=true"));
    let mut released = applied(volumes.clone(), config).boxed();
    while let Some(pv) = released.next().await {
        let released = pv.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Released");
        let delete = pv
            .spec
            .as_ref()
            .and_then(|s| s.persistent_volume_reclaim_policy.as_deref())
            == Some("Delete");
        if released
            && delete
            && let Some(name) = pv.metadata.name.as_deref()
        {
            let _ = volumes.delete(name, &DeleteParams::default()).await;
        }
    }
}
