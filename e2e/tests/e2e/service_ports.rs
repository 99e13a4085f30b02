//! Service ports left without endpoints while the pods stay ready: a named `targetPort` reaches
//! only pods declaring a container port of that name. The operator's Service update pointing the
//! port at a name the pods do not declare, and its release renaming the container port, are
//! refused by `suture-availability` through kube-apiserver and change nothing; pointing the port
//! at the number is admitted. Then the admin (not judged) rolls the rename out, and the real
//! EndpointSlice controller shows what was prevented: every pod ready and in the Service's
//! slices, and the port in none of them.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::Api;
use kube::api::{ListParams, Patch, PatchParams};
use serde_json::json;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Answer, TOLERATION};
use suture_e2e::wait;
use suture_e2e::{Cluster, gateway, scenes};

pub const TESTS: [Test; 1] = [Test {
    name: "service_ports::a_port_name_the_pods_do_not_declare_is_refused",
    run: a_port_name_the_pods_do_not_declare_is_refused,
}];

const NS: &str = "e2e-service-ports";

/// Deployment `web` (2 pods declaring container port `http`) behind Service `web`, whose port
/// targets `http` by name.
fn scene() -> String {
    format!(
        r#"{}---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: {NS}}}
spec:
  selector: {{app: web}}
  ports: [{{name: http, port: 80, targetPort: http}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {NS}}}
spec:
  replicas: 2
  strategy: {{type: RollingUpdate, rollingUpdate: {{maxSurge: 1, maxUnavailable: 0}}}}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      tolerations: [{TOLERATION}]
      containers: [{{name: web, image: registry.example/web:1.0, ports: [{{name: http, containerPort: 8080}}]}}]
"#,
        scenes::namespace_yaml(NS)
    )
}

/// The Service's slices now: ready endpoints, and the ports of the slices that hold them.
async fn served(cluster: &Cluster) -> anyhow::Result<(usize, Vec<String>)> {
    let slices: Api<EndpointSlice> = Api::namespaced(cluster.client.clone(), NS);
    let list = slices
        .list(&ListParams::default().labels("kubernetes.io/service-name=web"))
        .await?
        .items;
    let (mut ready, mut ports) = (0, Vec::new());
    for slice in list {
        let here = slice
            .endpoints
            .iter()
            .filter(|e| e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true))
            .count();
        if here > 0 {
            ready += here;
            ports.extend(
                slice
                    .ports
                    .unwrap_or_default()
                    .into_iter()
                    .map(|p| p.name.unwrap_or_default()),
            );
        }
    }
    ports.sort();
    ports.dedup();
    Ok((ready, ports))
}

/// Waits until the Service's slices hold 2 ready endpoints serving `ports`.
async fn until_served(cluster: &Cluster, what: &str, ports: &[&str]) -> anyhow::Result<()> {
    wait::until(what, wait::SETTLE, || async move {
        let (ready, now) = served(cluster).await?;
        Ok((ready != 2 || now != ports).then(|| format!("{ready} ready endpoints, ports {now:?}")))
    })
    .await
}

fn a_port_name_the_pods_do_not_declare_is_refused(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "web-operator").await?;
        gateway::ensure(cluster).await?;
        scene::apply(cluster, &scene())?;
        scene::deployment_ready(cluster, NS, "web").await?;
        until_served(
            cluster,
            "the EndpointSlice controller to serve port http",
            &["http"],
        )
        .await?;

        // The Service pointed at a name the pods do not declare.
        let services: Api<Service> = Api::namespaced(op.client.clone(), NS);
        let retarget = |target: serde_json::Value, dry_run: bool| {
            let services = services.clone();
            async move {
                let patch = json!({"spec": {"ports": [{"name": "http", "port": 80, "targetPort": target}]}});
                let params = PatchParams {
                    dry_run,
                    ..PatchParams::default()
                };
                services.patch("web", &params, &Patch::Merge(&patch)).await
            }
        };
        scene::until_answered(
            "the gateway to refuse the dry-run retarget of Service web",
            Answer::RefusedWith("with no ready endpoints for port http (2 now)"),
            || retarget(json!("web-http"), true),
        )
        .await?;
        let message = scene::refusal("the retarget", retarget(json!("web-http"), false).await)?;
        anyhow::ensure!(
            message.contains("SafetyPolicy 'suture-availability'")
                && message.contains(
                    "updating Service e2e-service-ports/web leaves Service e2e-service-ports/web with no ready endpoints for port http (2 now)"
                ),
            "refused otherwise: {message}"
        );
        let admin_services: Api<Service> = Api::namespaced(cluster.client.clone(), NS);
        let target = admin_services
            .get("web")
            .await?
            .spec
            .and_then(|s| s.ports)
            .and_then(|p| p.into_iter().next())
            .and_then(|p| p.target_port);
        anyhow::ensure!(
            target
                == Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(
                    "http".into()
                )),
            "the refused retarget changed the Service: {target:?}"
        );
        println!("  operator's retarget to an undeclared name refused: {message}");
        retarget(json!(8080), true).await?;
        println!("  operator's retarget to the number admitted (dry run)");

        // A release renaming the container port.
        let deployments: Api<Deployment> = Api::namespaced(op.client.clone(), NS);
        let rename = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "web", "image": "registry.example/web:1.1", "ports": [{"name": "web-http", "containerPort": 8080}]}]}}}});
        let roll = |dry_run: bool| {
            let deployments = deployments.clone();
            let rename = rename.clone();
            async move {
                let params = PatchParams {
                    dry_run,
                    ..PatchParams::default()
                };
                deployments.patch("web", &params, &Patch::Merge(&rename)).await
            }
        };
        let admin_deployments: Api<Deployment> = Api::namespaced(cluster.client.clone(), NS);
        let generation = admin_deployments.get("web").await?.metadata.generation;
        let message = scene::refusal("the release renaming the port", roll(false).await)?;
        anyhow::ensure!(
            message.contains(
                "updating Deployment e2e-service-ports/web leaves Service e2e-service-ports/web with no ready endpoints for port http (2 now)"
            ),
            "refused otherwise: {message}"
        );
        anyhow::ensure!(
            admin_deployments.get("web").await?.metadata.generation == generation,
            "the refused release changed the Deployment"
        );
        println!("  operator's release renaming the port refused: {message}");

        // What the refusal prevented, done by the admin: the rollout completes, every pod is
        // ready and behind the Service, and port http is in none of its slices.
        admin_deployments
            .patch("web", &PatchParams::default(), &Patch::Merge(&rename))
            .await?;
        scene::deployment_ready(cluster, NS, "web").await?;
        until_served(
            cluster,
            "the EndpointSlice controller to drop port http from the renamed pods",
            &[],
        )
        .await?;
        println!("  rolled out by the admin: 2 ready endpoints, port http in no slice");

        scene::kubectl(cluster, &["delete", "namespace", NS, "--wait=false"], None)?;
        Ok(())
    })
}
