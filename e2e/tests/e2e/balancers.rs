//! The load balancer class: an operator changing a `type: LoadBalancer` Service to ClusterIP, or
//! deleting it, is refused by `suture-availability` through the real kube-apiserver, and the
//! Service keeps its type and address. The control plane runs no cloud provider, so the address a
//! load balancer controller would publish is written into the Service's status by the admin, as
//! such a controller does; tearing the load balancer down is that controller's part (the cloud
//! provider's service controller cleans up on a deletionTimestamp or a type other than
//! LoadBalancer: `needsCleanup` in `k8s.io/cloud-provider/controllers/service`), not shown here.
//! What kube-apiserver does when the admin makes the same change is: it drops the published
//! address from the Service at once.

use k8s_openapi::api::core::v1::Service;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Answer, TOLERATION};
use suture_e2e::{Cluster, gateway, scenes};

pub const TESTS: [Test; 1] = [Test {
    name: "balancers::tearing_down_a_load_balancer_is_refused",
    run: tearing_down_a_load_balancer_is_refused,
}];

const NS: &str = "e2e-balancer";
const ADDRESS: &str = "203.0.113.10";
const SPARE: &str = "203.0.113.11";

/// A Deployment behind a `type: LoadBalancer` Service, and a spare load balancer with no pods
/// behind it (its deletion harms nothing but its address).
fn scene() -> String {
    format!(
        r#"{}---
apiVersion: v1
kind: Service
metadata: {{name: edge, namespace: {NS}}}
spec:
  type: LoadBalancer
  selector: {{app: edge}}
  ports: [{{port: 443}}]
---
apiVersion: v1
kind: Service
metadata: {{name: edge-spare, namespace: {NS}}}
spec:
  type: LoadBalancer
  selector: {{app: edge-spare}}
  ports: [{{port: 443}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: edge, namespace: {NS}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: edge}}}}
  template:
    metadata: {{labels: {{app: edge}}}}
    spec:
      tolerations: [{TOLERATION}]
      containers: [{{name: proxy, image: registry.example/edge:1.0}}]
"#,
        scenes::namespace_yaml(NS)
    )
}

fn type_of(service: &Service) -> String {
    service
        .spec
        .as_ref()
        .and_then(|s| s.type_.clone())
        .unwrap_or_default()
}

fn addresses_of(service: &Service) -> Vec<String> {
    service
        .status
        .as_ref()
        .and_then(|s| s.load_balancer.as_ref())
        .and_then(|b| b.ingress.as_ref())
        .map(|ingress| ingress.iter().filter_map(|i| i.ip.clone()).collect())
        .unwrap_or_default()
}

fn tearing_down_a_load_balancer_is_refused(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "web-operator").await?;
        gateway::ensure(cluster).await?;
        scene::apply(cluster, &scene())?;
        scene::deployment_ready(cluster, NS, "edge").await?;
        let admin: Api<Service> = Api::namespaced(cluster.client.clone(), NS);
        // What a load balancer controller publishes once it has provisioned one.
        let status = serde_json::json!({"status": {"loadBalancer": {"ingress": [{"ip": ADDRESS}]}}});
        admin
            .patch_status("edge", &PatchParams::default(), &Patch::Merge(&status))
            .await?;
        let spare = serde_json::json!({"status": {"loadBalancer": {"ingress": [{"ip": SPARE}]}}});
        admin
            .patch_status("edge-spare", &PatchParams::default(), &Patch::Merge(&spare))
            .await?;

        // The operator's change to ClusterIP is refused once the gateway's model has the address.
        let services: Api<Service> = Api::namespaced(op.client.clone(), NS);
        let mut retyped = admin.get("edge").await?;
        retyped.metadata.managed_fields = None;
        if let Some(spec) = retyped.spec.as_mut() {
            spec.type_ = Some("ClusterIP".to_owned());
            spec.external_traffic_policy = None;
            spec.allocate_load_balancer_node_ports = None;
            for port in spec.ports.iter_mut().flatten() {
                port.node_port = None;
            }
        }
        let dry_run = PostParams {
            dry_run: true,
            ..PostParams::default()
        };
        let expected = format!("tears down the load balancer of Service {NS}/edge ({ADDRESS})");
        scene::until_answered(
            "the gateway to refuse the dry-run change to ClusterIP",
            Answer::RefusedWith(&expected),
            || {
                let (services, retyped, dry_run) = (services.clone(), retyped.clone(), dry_run.clone());
                async move { services.replace("edge", &dry_run, &retyped).await }
            },
        )
        .await?;
        let message = scene::refusal(
            "the change of Service edge to ClusterIP",
            services.replace("edge", &PostParams::default(), &retyped).await,
        )?;
        anyhow::ensure!(
            message.contains("SafetyPolicy 'suture-availability'"),
            "refused otherwise: {message}"
        );
        println!("  operator's change of the load balancer to ClusterIP refused: {message}");
        let message = scene::refusal(
            "the deletion of Service edge",
            services.delete("edge", &DeleteParams::default()).await,
        )?;
        // The Service also goes dark: the first of the policy's denials is the one kube-apiserver
        // shows.
        anyhow::ensure!(
            message.contains("SafetyPolicy 'suture-availability'"),
            "refused otherwise: {message}"
        );
        println!("  operator's deletion of the load balancer refused: {message}");
        // The spare one has no endpoints to lose: only its address refuses its deletion.
        let message = scene::refusal(
            "the deletion of Service edge-spare",
            services.delete("edge-spare", &DeleteParams::default()).await,
        )?;
        anyhow::ensure!(
            message.contains(&format!(
                "tears down the load balancer of Service {NS}/edge-spare ({SPARE})"
            )),
            "refused otherwise: {message}"
        );
        println!("  operator's deletion of the spare load balancer refused: {message}");
        let service = admin.get("edge").await?;
        anyhow::ensure!(
            type_of(&service) == "LoadBalancer" && addresses_of(&service) == [ADDRESS],
            "the refused requests changed the Service: {} {:?}",
            type_of(&service),
            addresses_of(&service)
        );

        // The same change by the admin (not judged): kube-apiserver drops the published address
        // from the Service at once; the load balancer itself is the controller's to tear down.
        let stored = admin.replace("edge", &PostParams::default(), &retyped).await?;
        anyhow::ensure!(
            type_of(&stored) == "ClusterIP" && addresses_of(&stored).is_empty(),
            "kube-apiserver kept {:?} on a {} Service",
            addresses_of(&stored),
            type_of(&stored)
        );
        println!("  the admin's change: kube-apiserver drops the published address from the Service at once");
        scene::kubectl(cluster, &["delete", "namespace", NS, "--wait=false"], None)?;
        Ok(())
    })
}
