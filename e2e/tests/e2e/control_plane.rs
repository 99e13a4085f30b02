//! The cluster itself: the real controllers and the node simulator act a scene out (the
//! StatefulSet controller creates ordinals and claims, the simulator binds and runs them, the
//! EndpointSlice controller publishes ready endpoints, the disruption controller computes budgets).

use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Api;
use kube::api::ListParams;
use suture_e2e::Cluster;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene;
use suture_e2e::wait::{self, SETTLE};

pub const TESTS: [Test; 1] = [Test {
    name: "control_plane::controllers_and_simulator_settle_a_database_scene",
    run: controllers_and_simulator_settle_a_database_scene,
}];

/// A StatefulSet database with claims, a headless Service and a PDB, in `namespace`.
pub fn database(namespace: &str, replicas: u32, min_available: u32) -> String {
    format!(
        r#"apiVersion: v1
kind: Namespace
metadata: {{name: {namespace}}}
---
apiVersion: v1
kind: Service
metadata: {{name: db, namespace: {namespace}}}
spec:
  clusterIP: None
  selector: {{app: db}}
  ports: [{{port: 5432}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db, namespace: {namespace}}}
spec:
  serviceName: db
  replicas: {replicas}
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db}}}}
    spec:
      tolerations: [{toleration}]
      containers:
      - name: postgres
        image: postgres:16
        volumeMounts: [{{name: data, mountPath: /var/lib/postgresql}}]
  volumeClaimTemplates:
  - metadata: {{name: data}}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {{requests: {{storage: 1Gi}}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {{name: db, namespace: {namespace}}}
spec:
  minAvailable: {min_available}
  selector: {{matchLabels: {{app: db}}}}
"#,
        toleration = scene::TOLERATION
    )
}

fn controllers_and_simulator_settle_a_database_scene(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let ns = "e2e-settle";
        scene::apply(cluster, &database(ns, 3, 2))?;
        scene::statefulset_ready(cluster, ns, "db").await?;
        assert_eq!(scene::ready_pods(cluster, ns).await?, ["db-0", "db-1", "db-2"]);
        let slices: Api<EndpointSlice> = Api::namespaced(cluster.client.clone(), ns);
        wait::until("3 ready endpoints for db", SETTLE, || {
            let slices = slices.clone();
            async move {
                let ready = slices
                    .list(&ListParams::default().labels("kubernetes.io/service-name=db"))
                    .await?
                    .items
                    .iter()
                    .flat_map(|s| s.endpoints.iter())
                    .filter(|e| e.conditions.as_ref().and_then(|c| c.ready) == Some(true))
                    .count();
                Ok((ready != 3).then(|| format!("{ready} ready endpoints")))
            }
        })
        .await?;
        let budgets: Api<PodDisruptionBudget> = Api::namespaced(cluster.client.clone(), ns);
        wait::until("the disruption controller's status for db", SETTLE, || {
            let budgets = budgets.clone();
            async move {
                let status = budgets.get("db").await?.status.unwrap_or_default();
                Ok((status.current_healthy != 3 || status.disruptions_allowed != 1).then(|| {
                    format!(
                        "currentHealthy {} disruptionsAllowed {}",
                        status.current_healthy, status.disruptions_allowed
                    )
                }))
            }
        })
        .await?;
        Ok(())
    })
}
