//! Hand-made endpoints: the leader address a Service without a selector publishes through its
//! Endpoints, as Patroni writes it. The real EndpointSlice mirroring controller mirrors them into
//! a slice; the operator's update that empties them is refused by `suture-availability` through
//! kube-apiserver and changes nothing, while moving the address to a new leader (a failover) is
//! admitted. (What the emptying does — the mirrored slice deleted, nothing restoring it — is
//! measured against the real controllers by the reality scenario `endpoints/selectorless-emptied`.)

use k8s_openapi::api::core::v1::Endpoints;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams};
use serde_json::json;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Answer};
use suture_e2e::wait;
use suture_e2e::{Cluster, gateway, scenes};

pub const TESTS: [Test; 1] = [Test {
    name: "endpoints::emptying_a_selectorless_services_endpoints_is_refused",
    run: emptying_a_selectorless_services_endpoints_is_refused,
}];

const NS: &str = "e2e-endpoints";

/// A Service `leader` without a selector and its Endpoints, with the leader's address.
fn scene() -> String {
    format!(
        r#"{}---
apiVersion: v1
kind: Service
metadata: {{name: leader, namespace: {NS}}}
spec:
  ports: [{{name: pg, port: 5432}}]
---
apiVersion: v1
kind: Endpoints
metadata: {{name: leader, namespace: {NS}}}
subsets:
- addresses: [{{ip: 192.0.2.30}}]
  ports: [{{name: pg, port: 5432, protocol: TCP}}]
"#,
        scenes::namespace_yaml(NS)
    )
}

fn subsets(ips: &[&str]) -> serde_json::Value {
    let addresses: Vec<_> = ips.iter().map(|ip| json!({"ip": ip})).collect();
    json!({"subsets": [{"addresses": addresses, "ports": [{"name": "pg", "port": 5432, "protocol": "TCP"}]}]})
}

fn emptying_a_selectorless_services_endpoints_is_refused(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "db-operator").await?;
        gateway::ensure(cluster).await?;
        scene::apply(cluster, &scene())?;
        let slices: Api<EndpointSlice> = Api::namespaced(cluster.client.clone(), NS);
        wait::until(
            "the mirroring controller to mirror the leader's Endpoints",
            wait::SETTLE,
            || {
                let slices = slices.clone();
                async move {
                    let mirrored = slices
                        .list(&ListParams::default().labels("kubernetes.io/service-name=leader"))
                        .await?
                        .items;
                    Ok(mirrored.is_empty().then(|| "no slice yet".to_owned()))
                }
            },
        )
        .await?;

        let endpoints: Api<Endpoints> = Api::namespaced(op.client.clone(), NS);
        let dry_run = PatchParams {
            dry_run: true,
            ..PatchParams::default()
        };
        let empty = json!({"subsets": null});
        scene::until_answered(
            "the gateway to refuse the dry-run emptying of Endpoints leader",
            Answer::RefusedWith("leaves Service e2e-endpoints/leader with no ready endpoints"),
            || {
                let (endpoints, dry_run, empty) = (endpoints.clone(), dry_run.clone(), empty.clone());
                async move { endpoints.patch("leader", &dry_run, &Patch::Merge(&empty)).await }
            },
        )
        .await?;
        let message = scene::refusal(
            "emptying Endpoints leader",
            endpoints
                .patch("leader", &PatchParams::default(), &Patch::Merge(&empty))
                .await,
        )?;
        anyhow::ensure!(
            message.contains("SafetyPolicy 'suture-availability'"),
            "refused otherwise: {message}"
        );
        let admin: Api<Endpoints> = Api::namespaced(cluster.client.clone(), NS);
        let kept = admin.get("leader").await?.subsets.unwrap_or_default();
        anyhow::ensure!(
            kept.iter()
                .flat_map(|s| s.addresses.iter().flatten())
                .any(|a| a.ip == "192.0.2.30"),
            "the refused update changed the Endpoints: {kept:?}"
        );
        println!("  operator's emptying of the leader Endpoints refused: {message}");

        // A failover: the address moves to the new leader, the Service keeps an endpoint.
        endpoints
            .patch(
                "leader",
                &PatchParams::default(),
                &Patch::Merge(&subsets(&["192.0.2.31"])),
            )
            .await?;
        println!("  moving the leader address to the new primary is admitted");

        scene::kubectl(cluster, &["delete", "namespace", NS, "--wait=false"], None)?;
        Ok(())
    })
}
