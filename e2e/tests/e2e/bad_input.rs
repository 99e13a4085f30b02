//! Bad input on the real path: a kind the gateway's model has never seen (a CRD created while the
//! gateway runs, its instance judged at once), a `/scale` subresource no policy matches, the
//! largest ConfigMap kube-apiserver accepts, a 3 MiB ConfigMap (refused by kube-apiserver itself,
//! before admission), and a 2.5 MiB custom resource (a dry run: it reaches the webhook, etcd's
//! limit aside). Each is answered, and the gateway stays alive and healthy throughout.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::json;
use suture_e2e::gateway::{self, http_get};
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::{Cluster, scene};

use suture_e2e::scenes;

pub const TESTS: [Test; 1] = [Test {
    name: "bad_input::each_is_answered_and_the_gateway_stays_healthy",
    run: each_is_answered_and_the_gateway_stays_healthy,
}];

const NS: &str = "e2e-bad-input";

/// Created while the gateway runs: a kind it has never seen, with a scale subresource.
const GADGET_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.e2e.suture.dev}
spec:
  group: e2e.suture.dev
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
            properties: {replicas: {type: integer}}
          status:
            type: object
            properties: {replicas: {type: integer}}
"#;

fn gadgets() -> ApiResource {
    ApiResource {
        group: "e2e.suture.dev".to_owned(),
        version: "v1".to_owned(),
        api_version: "e2e.suture.dev/v1".to_owned(),
        kind: "Gadget".to_owned(),
        plural: "gadgets".to_owned(),
    }
}

fn gadget(name: &str, blob_bytes: usize) -> anyhow::Result<DynamicObject> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "e2e.suture.dev/v1",
        "kind": "Gadget",
        "metadata": {"name": name},
        "spec": {"replicas": 2, "blob": "g".repeat(blob_bytes)},
    }))?)
}

fn config_map(name: &str, bytes: usize) -> anyhow::Result<ConfigMap> {
    Ok(serde_json::from_value(json!({
        "metadata": {"name": name},
        "data": {"blob": "c".repeat(bytes)},
    }))?)
}

/// Waits (the log is flushed every 200 ms) for the decision-log operations on `name` of `resource`.
async fn decided(cluster: &Cluster, resource: &str, name: &str, operations: &[&str]) -> anyhow::Result<()> {
    suture_e2e::wait::until(
        &format!("decisions on {resource} {name}"),
        std::time::Duration::from_secs(5),
        || async {
            let seen: Vec<String> = cluster
                .gateway
                .as_ref()
                .map(|g| g.decisions(resource, name))
                .unwrap_or_default()
                .iter()
                .map(|d| d["operation"].as_str().unwrap_or_default().to_owned())
                .collect();
            Ok((!operations.iter().all(|op| seen.iter().any(|s| s == op))).then(|| format!("{seen:?}")))
        },
    )
    .await
}

fn each_is_answered_and_the_gateway_stays_healthy(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "db-operator").await?;
        gateway::ensure(cluster).await?;
        scene::apply(cluster, &scenes::namespace_yaml(NS))?;

        // A kind the model has never seen: judged the moment kube-apiserver serves it.
        scene::apply(cluster, GADGET_CRD)?;
        scene::until_established(cluster, "gadgets.e2e.suture.dev").await?;
        let as_operator = Api::<DynamicObject>::namespaced_with(op.client.clone(), NS, &gadgets());
        as_operator
            .create(&PostParams::default(), &gadget("g1", 16)?)
            .await?;
        let up = json!({"spec": {"replicas": 5}});
        as_operator
            .patch_scale("g1", &PatchParams::default(), &Patch::Merge(&up))
            .await?;
        as_operator.delete("g1", &DeleteParams::default()).await?;
        decided(cluster, "gadgets", "g1", &["CREATE", "DELETE"]).await?;
        decided(cluster, "gadgets/scale", "g1", &["UPDATE"]).await?;
        println!(
            "  a new CRD's instance created, scaled (gadgets/scale) and deleted: each judged and admitted"
        );

        // The largest ConfigMap kube-apiserver accepts reaches the gateway and is admitted.
        let maps: Api<ConfigMap> = Api::namespaced(op.client.clone(), NS);
        maps.create(&PostParams::default(), &config_map("large", 1_000_000)?)
            .await?;
        decided(cluster, "configmaps", "large", &["CREATE"]).await?;
        // 3 MiB: kube-apiserver refuses it before admission; the gateway never sees it.
        let message = scene::refusal(
            "a 3 MiB ConfigMap",
            maps.create(&PostParams::default(), &config_map("huge", 3 << 20)?)
                .await,
        )?;
        anyhow::ensure!(!message.contains("webhook"), "{message}");
        println!(
            "  1 MB ConfigMap judged and admitted; 3 MiB refused by kube-apiserver: {}",
            message.chars().take(100).collect::<String>()
        );
        // A 2.5 MiB object does reach the webhook (a dry run: etcd's 1.5 MiB limit does not apply).
        let dry = PostParams {
            dry_run: true,
            ..PostParams::default()
        };
        as_operator.create(&dry, &gadget("big", 5 << 19)?).await?;
        decided(cluster, "gadgets", "big", &["CREATE"]).await?;
        println!("  a 2.5 MiB custom resource (dry run) judged and admitted");

        let gateway = cluster
            .gateway
            .as_mut()
            .ok_or_else(|| anyhow::anyhow!("no gateway"))?;
        gateway.check_alive()?;
        let (healthz, _) = http_get(&gateway.metrics, "/healthz").await?;
        let (readyz, detail) = gateway.readiness().await?;
        anyhow::ensure!(
            healthz == 200 && readyz == 200,
            "healthz {healthz}, readyz {readyz}: {detail}"
        );
        let log = gateway.log();
        anyhow::ensure!(
            !log.contains("panicked"),
            "the gateway panicked:\n{}",
            gateway.log_tail(40)
        );
        anyhow::ensure!(
            !log.contains(&"c".repeat(64)) && !log.contains(&"g".repeat(64)),
            "the gateway logged an object's body"
        );
        println!("  the gateway is alive, /healthz and /readyz answer 200, no panic and no body in its log");
        Ok(())
    })
}
