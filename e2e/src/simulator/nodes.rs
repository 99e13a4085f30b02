//! Simulated Nodes: created Ready with capacity and an address, tainted so that only pods which
//! tolerate the simulation land on them, and kept alive by renewing their Leases in
//! `kube-node-lease` as a kubelet does (else the node lifecycle controller marks them NotReady
//! after its grace period and taints them).

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

use crate::simulator::{Registry, names};

/// The taint every simulated node carries, and test pods tolerate.
pub const TAINT_KEY: &str = "e2e.suture.dev/simulated";

/// The taint of a node dedicated to one scenario (its value names the scenario).
pub const DEDICATED_KEY: &str = "e2e.suture.dev/dedicated";

/// How often Leases are renewed (a kubelet's default is 10 s of a 40 s lease).
const RENEW_EVERY: Duration = Duration::from_secs(10);

fn now() -> String {
    k8s_openapi::jiff::Timestamp::now().to_string()
}

/// The host IP of the `index`th simulated node.
fn address(index: usize) -> String {
    format!("10.99.{}.{}", index / 250, index % 250 + 1)
}

/// The Node object of a simulated node.
fn node(name: &str, index: usize, dedicated_to: Option<&str>) -> anyhow::Result<Node> {
    let mut taints = vec![json!({"key": TAINT_KEY, "value": "true", "effect": "NoSchedule"})];
    if let Some(owner) = dedicated_to {
        taints.push(json!({"key": DEDICATED_KEY, "value": owner, "effect": "NoSchedule"}));
    }
    Ok(serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/zone": format!("zone-{}", index % 3),
                TAINT_KEY: "true",
            },
        },
        "spec": {
            "taints": taints,
        },
    }))?)
}

fn status(index: usize) -> serde_json::Value {
    let now = now();
    json!({"status": {
        "capacity": {"cpu": "32", "memory": "128Gi", "pods": "250"},
        "allocatable": {"cpu": "32", "memory": "128Gi", "pods": "250"},
        "addresses": [{"type": "InternalIP", "address": address(index)}],
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "KubeletReady",
             "message": "simulated by the suture e2e node simulator",
             "lastHeartbeatTime": now, "lastTransitionTime": now},
            {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
             "lastHeartbeatTime": now, "lastTransitionTime": now},
            {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure",
             "lastHeartbeatTime": now, "lastTransitionTime": now},
            {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID",
             "lastHeartbeatTime": now, "lastTransitionTime": now},
        ],
        "nodeInfo": {
            "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "simulated",
            "osImage": "simulated", "containerRuntimeVersion": "simulated://0",
            "kubeletVersion": "v1.36.2", "kubeProxyVersion": "", "operatingSystem": "linux",
            "architecture": "amd64",
        },
    }})
}

/// Creates (or adopts) the `index`th node, `name`, and reports it Ready: its host IP.
pub async fn register(
    client: &kube::Client,
    name: &str,
    index: usize,
    dedicated_to: Option<&str>,
) -> anyhow::Result<String> {
    let nodes: Api<Node> = Api::all(client.clone());
    if nodes.get_opt(name).await?.is_none() {
        nodes
            .create(&PostParams::default(), &node(name, index, dedicated_to)?)
            .await?;
    }
    nodes
        .patch_status(name, &PatchParams::default(), &Patch::Merge(status(index)))
        .await?;
    Ok(address(index))
}

/// Renews `name`'s Lease (creating it, owned by its Node, as a kubelet does).
async fn renew(client: &kube::Client, name: &str) -> anyhow::Result<()> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-node-lease");
    let renew_time = MicroTime(k8s_openapi::jiff::Timestamp::now());
    if leases.get_opt(name).await?.is_none() {
        let uid = Api::<Node>::all(client.clone())
            .get(name)
            .await?
            .metadata
            .uid
            .unwrap_or_default();
        let lease: Lease = serde_json::from_value(json!({
            "metadata": {
                "name": name,
                "namespace": "kube-node-lease",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid}],
            },
            "spec": {"holderIdentity": name, "leaseDurationSeconds": 40},
        }))?;
        leases.create(&PostParams::default(), &lease).await?;
    }
    leases
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"renewTime": renew_time, "holderIdentity": name}})),
        )
        .await?;
    Ok(())
}

/// Renews every registered node's Lease forever (errors are retried on the next round: the API
/// server may be restarting; a node deleted by a test just fails to renew).
pub async fn keep_alive(client: kube::Client, registry: Registry) {
    loop {
        for name in &names(&registry) {
            let _ = renew(&client, name).await;
        }
        tokio::time::sleep(RENEW_EVERY).await;
    }
}
