//! The gateway in kube-apiserver's request path: operators' harmful requests refused with the
//! pack's message and the cluster unchanged afterwards, routine requests admitted, the escape
//! hatch admitting with a warning kubectl prints, dry runs judged, a person's requests not, and
//! operators unable to switch the gateway off (delete or edit its webhook configuration, delete
//! its namespace, delete or edit its Deployment).

use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node, PersistentVolumeClaim, Pod, Service};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, EvictParams, ListParams, Patch, PatchParams, PostParams,
};
use serde_json::json;
use suture_e2e::Cluster;
use suture_e2e::gateway::{self, NAMESPACE};
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Operator, kubectl_with};

use suture_e2e::scenes;

pub const TESTS: [Test; 5] = [
    Test {
        name: "admission::every_harmful_class_is_refused_and_the_cluster_is_unchanged",
        run: every_harmful_class_is_refused_and_the_cluster_is_unchanged,
    },
    Test {
        name: "admission::routine_operations_are_admitted",
        run: routine_operations_are_admitted,
    },
    Test {
        name: "admission::the_escape_hatch_admits_with_a_warning_kubectl_prints",
        run: the_escape_hatch_admits_with_a_warning_kubectl_prints,
    },
    Test {
        name: "admission::dry_runs_are_judged_and_a_persons_requests_are_not",
        run: dry_runs_are_judged_and_a_persons_requests_are_not,
    },
    Test {
        name: "admission::operators_cannot_switch_the_gateway_off",
        run: operators_cannot_switch_the_gateway_off,
    },
];

/// Checks that kube-apiserver refused the request on `object` (of `resource`) with the pack's
/// message, and that `policy` is among the policies that denied it (the gateway's decision log
/// lists them all; the message carries the first).
pub(crate) async fn refused_by<T: std::fmt::Debug>(
    cluster: &Cluster,
    what: &str,
    (resource, object): (&str, &str),
    result: Result<T, kube::Error>,
    policy: &str,
) -> anyhow::Result<()> {
    let message = scene::refusal(what, result)?;
    anyhow::ensure!(
        message.contains("SafetyPolicy 'suture-"),
        "{what}: refused, but not by the pack: {message}"
    );
    // The decision log is written after the answer: give it a moment.
    let mut denied = Vec::new();
    for _ in 0..50 {
        denied = cluster
            .gateway
            .as_ref()
            .map(|g| g.last_denied_by(resource, object))
            .unwrap_or_default();
        if denied.iter().any(|p| p == policy) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    anyhow::ensure!(
        denied.iter().any(|p| p == policy),
        "{what}: refused by {denied:?}, not by {policy}: {message}"
    );
    println!("  {what}: refused by {}", denied.join(", "));
    Ok(())
}

/// The DB operator and the web operator, both judged.
async fn operators(cluster: &mut Cluster) -> anyhow::Result<(Operator, Operator)> {
    let db = scene::operator(cluster, "e2e-operators", "db-operator").await?;
    let web = scene::operator(cluster, "e2e-operators", "web-operator").await?;
    gateway::ensure(cluster).await?;
    Ok((db, web))
}

pub(crate) fn widgets() -> ApiResource {
    ApiResource {
        group: "e2e.suture.dev".to_owned(),
        version: "v1".to_owned(),
        api_version: "e2e.suture.dev/v1".to_owned(),
        kind: "Widget".to_owned(),
        plural: "widgets".to_owned(),
    }
}

fn every_harmful_class_is_refused_and_the_cluster_is_unchanged(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let (op, web_op) = operators(cluster).await?;
        let (db_ns, web_ns, pin_ns) = ("e2e-harm-db", "e2e-harm-web", "e2e-harm-pinned");
        let node = cluster.simulator.nodes().last().cloned().unwrap_or_default();
        scene::apply(cluster, &scenes::database(db_ns, 3, 2))?;
        scene::apply(cluster, &scenes::web(web_ns, "web", 2, "Recreate", 2))?;
        scene::apply(cluster, &scenes::pinned(pin_ns, &node))?;
        scene::apply(cluster, scenes::WIDGET_CRD)?;
        scene::until_established(cluster, "widgets.e2e.suture.dev").await?;
        scene::apply(cluster, &scenes::widget(db_ns, "orders"))?;
        let widget = Api::<DynamicObject>::namespaced_with(cluster.client.clone(), db_ns, &widgets())
            .get("orders")
            .await?;
        let uid = widget.metadata.uid.clone().unwrap_or_default();
        scene::apply(cluster, &scenes::owned_cache(db_ns, "orders", &uid))?;
        scene::statefulset_ready(cluster, db_ns, "db").await?;
        scene::statefulset_ready(cluster, db_ns, "cache").await?;
        scene::deployment_ready(cluster, web_ns, "web").await?;
        scene::deployment_ready(cluster, pin_ns, "pinned").await?;
        scene::pdb_settled(cluster, web_ns, "web", 0).await?;
        // The gateway's model must have seen the scene before it is asked about it.
        scene::gateway_sees(&op, db_ns).await?;
        scene::gateway_sees(&web_op, web_ns).await?;
        // ...and the CRD's instances, listed once kube-apiserver serves the new resource.
        let dry = DeleteParams {
            dry_run: true,
            ..DeleteParams::default()
        };
        let probe: Api<CustomResourceDefinition> = Api::all(op.client.clone());
        suture_e2e::wait::until(
            "the gateway's model to hold the Widgets",
            suture_e2e::wait::SETTLE,
            || {
                let (probe, dry) = (probe.clone(), dry.clone());
                async move {
                    Ok(match probe.delete("widgets.e2e.suture.dev", &dry).await {
                        Err(kube::Error::Api(status)) if status.message.contains("SafetyPolicy 'suture-") => {
                            None
                        }
                        other => Some(format!("{other:?}")),
                    })
                }
            },
        )
        .await?;

        let c = op.client.clone();
        let w = web_op.client.clone();
        let del = DeleteParams::default();
        let pp = PatchParams::default();
        let claims: Api<PersistentVolumeClaim> = Api::namespaced(c.clone(), db_ns);
        refused_by(
            cluster,
            "live claim delete",
            ("persistentvolumeclaims", "data-db-0"),
            claims.delete("data-db-0", &del).await,
            "suture-data-loss",
        )
        .await?;
        // A deletecollection reaches the webhook as one unnamed DELETE per object.
        let one_claim = ListParams::default().fields("metadata.name=data-db-1");
        refused_by(
            cluster,
            "claims deleted by a deletecollection",
            ("persistentvolumeclaims", "data-db-1"),
            claims.delete_collection(&del, &one_claim).await,
            "suture-data-loss",
        )
        .await?;
        // ownerReferences naming an owner that does not exist: the garbage collector would
        // delete the claim (and its data) moments after the write.
        let dangling = json!({"metadata": {"ownerReferences": [{"apiVersion": "apps/v1",
            "kind": "StatefulSet", "name": "db", "uid": "0badc0de-0000-4000-8000-000000000000"}]}});
        refused_by(
            cluster,
            "claim given an owner that does not exist",
            ("persistentvolumeclaims", "data-db-2"),
            claims.patch("data-db-2", &pp, &Patch::Merge(&dangling)).await,
            "suture-data-loss",
        )
        .await?;
        let kept = claims.get("data-db-2").await?;
        anyhow::ensure!(
            kept.metadata.owner_references.unwrap_or_default().is_empty(),
            "the refused patch changed the claim"
        );
        let sets: Api<StatefulSet> = Api::namespaced(c.clone(), db_ns);
        refused_by(
            cluster,
            "statefulset delete",
            ("statefulsets", "db"),
            sets.delete("db", &del).await,
            "suture-disruption-budget",
        )
        .await?;
        let down = json!({"spec": {"replicas": 1}});
        refused_by(
            cluster,
            "scale below quorum",
            ("statefulsets/scale", "db"),
            sets.patch_scale("db", &pp, &Patch::Merge(&down)).await,
            "suture-statefulset-quorum",
        )
        .await?;
        let namespaces: Api<Namespace> = Api::all(c.clone());
        refused_by(
            cluster,
            "namespace with data",
            ("namespaces", db_ns),
            namespaces.delete(db_ns, &del).await,
            "suture-namespace-delete",
        )
        .await?;
        let crds: Api<CustomResourceDefinition> = Api::all(c.clone());
        refused_by(
            cluster,
            "CRD with instances",
            ("customresourcedefinitions", "widgets.e2e.suture.dev"),
            crds.delete("widgets.e2e.suture.dev", &del).await,
            "suture-crd-delete",
        )
        .await?;
        let owners = Api::<DynamicObject>::namespaced_with(c.clone(), db_ns, &widgets());
        refused_by(
            cluster,
            "owner cascade",
            ("widgets", "orders"),
            owners.delete("orders", &del).await,
            "suture-statefulset-quorum",
        )
        .await?;
        let web_pods: Vec<String> = scene::ready_pods(cluster, web_ns).await?;
        let pods: Api<Pod> = Api::namespaced(w.clone(), web_ns);
        let first = web_pods.first().cloned().unwrap_or_default();
        refused_by(
            cluster,
            "eviction breaking a PDB",
            ("pods/eviction", &first),
            pods.evict(&first, &EvictParams::default()).await,
            "suture-disruption-budget",
        )
        .await?;
        let deployments: Api<Deployment> = Api::namespaced(w.clone(), web_ns);
        let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.28"}]}}}});
        refused_by(
            cluster,
            "Recreate rollout",
            ("deployments", "web"),
            deployments.patch("web", &pp, &Patch::Strategic(&image)).await,
            "suture-availability",
        )
        .await?;
        let services: Api<Service> = Api::namespaced(w.clone(), web_ns);
        let typo = json!({"spec": {"selector": {"app": "wbe"}}});
        refused_by(
            cluster,
            "Service selector typo",
            ("services", "web"),
            services.patch("web", &pp, &Patch::Merge(&typo)).await,
            "suture-availability",
        )
        .await?;
        let nodes: Api<Node> = Api::all(c.clone());
        refused_by(
            cluster,
            "Node with the last replicas",
            ("nodes", &node),
            nodes.delete(&node, &del).await,
            "suture-availability",
        )
        .await?;
        let maps: Api<ConfigMap> = Api::namespaced(w.clone(), web_ns);
        let removal = json!({"data": {"mode": null}});
        refused_by(
            cluster,
            "ConfigMap key removal",
            ("configmaps", "web-config"),
            maps.patch("web-config", &pp, &Patch::Merge(&removal)).await,
            "suture-broken-references",
        )
        .await?;

        // Nothing changed.
        let admin = cluster.client.clone();
        let kept = Api::<PersistentVolumeClaim>::namespaced(admin.clone(), db_ns)
            .list(&ListParams::default())
            .await?
            .items;
        anyhow::ensure!(
            kept.iter()
                .filter(|c| c.metadata.deletion_timestamp.is_none())
                .count()
                >= 3,
            "claims went: {:?}",
            kept.iter().map(|c| c.metadata.name.clone()).collect::<Vec<_>>()
        );
        let db = Api::<StatefulSet>::namespaced(admin.clone(), db_ns)
            .get("db")
            .await?;
        anyhow::ensure!(db.spec.and_then(|s| s.replicas) == Some(3), "db was scaled");
        anyhow::ensure!(
            Api::<Namespace>::all(admin.clone())
                .get(db_ns)
                .await?
                .metadata
                .deletion_timestamp
                .is_none()
        );
        anyhow::ensure!(
            Api::<CustomResourceDefinition>::all(admin.clone())
                .get_opt("widgets.e2e.suture.dev")
                .await?
                .is_some()
        );
        anyhow::ensure!(
            Api::<DynamicObject>::namespaced_with(admin.clone(), db_ns, &widgets())
                .get_opt("orders")
                .await?
                .is_some()
        );
        anyhow::ensure!(
            scene::ready_pods(cluster, web_ns).await? == web_pods,
            "web pods changed"
        );
        let web = Api::<Deployment>::namespaced(admin.clone(), web_ns)
            .get("web")
            .await?;
        let image = web
            .spec
            .and_then(|s| s.template.spec)
            .and_then(|s| s.containers.first().and_then(|c| c.image.clone()));
        anyhow::ensure!(image.as_deref() == Some("nginx:1.27"), "web rolled to {image:?}");
        let svc = Api::<Service>::namespaced(admin.clone(), web_ns)
            .get("web")
            .await?;
        anyhow::ensure!(
            svc.spec
                .and_then(|s| s.selector)
                .and_then(|s| s.get("app").cloned())
                .as_deref()
                == Some("web")
        );
        anyhow::ensure!(Api::<Node>::all(admin.clone()).get_opt(&node).await?.is_some());
        let map = Api::<ConfigMap>::namespaced(admin.clone(), web_ns)
            .get("web-config")
            .await?;
        anyhow::ensure!(map.data.unwrap_or_default().contains_key("mode"));
        Ok(())
    })
}

fn routine_operations_are_admitted(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let (op, web_op) = operators(cluster).await?;
        let (db_ns, web_ns) = ("e2e-routine-db", "e2e-routine-web");
        scene::apply(cluster, &scenes::database(db_ns, 3, 2))?;
        scene::apply(cluster, &scenes::web(web_ns, "web", 3, "RollingUpdate", 2))?;
        scene::statefulset_ready(cluster, db_ns, "db").await?;
        scene::deployment_ready(cluster, web_ns, "web").await?;
        scene::pdb_settled(cluster, web_ns, "web", 1).await?;
        scene::gateway_sees(&op, web_ns).await?;
        let pp = PatchParams::default();
        let sets: Api<StatefulSet> = Api::namespaced(op.client.clone(), db_ns);
        sets.patch_scale("db", &pp, &Patch::Merge(json!({"spec": {"replicas": 4}})))
            .await?;
        scene::statefulset_ready(cluster, db_ns, "db").await?;
        let maps: Api<ConfigMap> = Api::namespaced(web_op.client.clone(), web_ns);
        maps.patch("web-config", &pp, &Patch::Merge(json!({"data": {"extra": "1"}})))
            .await?;
        let map: ConfigMap =
            serde_json::from_value(json!({"metadata": {"name": "new-settings"}, "data": {"a": "b"}}))?;
        maps.create(&PostParams::default(), &map).await?;
        let deployments: Api<Deployment> = Api::namespaced(web_op.client.clone(), web_ns);
        let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.28"}]}}}});
        deployments.patch("web", &pp, &Patch::Strategic(&image)).await?;
        scene::deployment_ready(cluster, web_ns, "web").await?;
        let pods: Api<Pod> = Api::namespaced(web_op.client.clone(), web_ns);
        let one = scene::ready_pods(cluster, web_ns)
            .await?
            .first()
            .cloned()
            .unwrap_or_default();
        pods.delete(&one, &DeleteParams::default()).await?;
        // A deletecollection of scratch objects nothing reads (each judged unnamed, by its
        // oldObject): admitted, and gone.
        for name in ["scratch-a", "scratch-b"] {
            let map: ConfigMap = serde_json::from_value(
                json!({"metadata": {"name": name, "labels": {"e2e-scratch": "yes"}}, "data": {"k": "v"}}),
            )?;
            maps.create(&PostParams::default(), &map).await?;
        }
        let scratch = ListParams::default().labels("e2e-scratch=yes");
        maps.delete_collection(&DeleteParams::default(), &scratch).await?;
        anyhow::ensure!(
            maps.list(&scratch).await?.items.is_empty(),
            "the scratch ConfigMaps are still there"
        );
        println!(
            "  scale up, ConfigMap edit and create, rolling update, one pod deleted, a deletecollection of scratch ConfigMaps: admitted"
        );
        Ok(())
    })
}

fn the_escape_hatch_admits_with_a_warning_kubectl_prints(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let (op, _) = operators(cluster).await?;
        let ns = "e2e-hatch";
        scene::apply(cluster, &scenes::database(ns, 3, 2))?;
        scene::statefulset_ready(cluster, ns, "db").await?;
        scene::gateway_sees(&op, ns).await?;
        let args = ["-n", ns, "scale", "statefulset/db", "--replicas=1"];
        let out = kubectl_with(cluster, Some(&op.kubeconfig), &args, None)?;
        anyhow::ensure!(!out.status.success(), "admitted without the annotation");
        let annotate = [
            "-n",
            ns,
            "annotate",
            "statefulset/db",
            "suture.dev/allow-disruption=shrinking for the migration (TICKET-42)",
        ];
        let out = kubectl_with(cluster, None, &annotate, None)?;
        anyhow::ensure!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // The gateway admits once its model has the annotation (a dry run asks it).
        let sets = Api::<StatefulSet>::namespaced(op.client.clone(), ns);
        let dry = PatchParams::default().dry_run();
        suture_e2e::wait::until(
            "the annotation in the gateway's model",
            suture_e2e::wait::SETTLE,
            || {
                let (sets, dry) = (sets.clone(), dry.clone());
                async move {
                    let down = json!({"spec": {"replicas": 1}});
                    Ok(sets
                        .patch_scale("db", &dry, &Patch::Merge(&down))
                        .await
                        .err()
                        .map(|e| e.to_string()))
                }
            },
        )
        .await?;
        let out = kubectl_with(cluster, Some(&op.kubeconfig), &args, None)?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        anyhow::ensure!(out.status.success(), "refused with the annotation: {stderr}");
        anyhow::ensure!(
            stderr.contains("Warning:") && stderr.contains("TICKET-42"),
            "no warning: {stderr}"
        );
        println!("  kubectl printed: {}", stderr.lines().next().unwrap_or_default());
        Ok(())
    })
}

fn dry_runs_are_judged_and_a_persons_requests_are_not(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let (op, _) = operators(cluster).await?;
        let ns = "e2e-dryrun";
        scene::apply(cluster, &scenes::database(ns, 3, 2))?;
        scene::statefulset_ready(cluster, ns, "db").await?;
        scene::gateway_sees(&op, ns).await?;
        let args = ["-n", ns, "delete", "statefulset/db", "--dry-run=server"];
        let out = kubectl_with(cluster, Some(&op.kubeconfig), &args, None)?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        anyhow::ensure!(
            !out.status.success() && stderr.contains("suture-"),
            "dry run not judged: {stderr}"
        );
        // A third-party operator installed in kube-system is judged like any other (only the
        // control plane's own controllers are exempt, by name).
        let system_operator = scene::operator(cluster, "kube-system", "e2e-storage-operator").await?;
        let out = kubectl_with(cluster, Some(&system_operator.kubeconfig), &args, None)?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        anyhow::ensure!(
            !out.status.success() && stderr.contains("suture-"),
            "a kube-system operator's dry run was not judged: {stderr}"
        );
        let out = kubectl_with(cluster, None, &args, None)?;
        anyhow::ensure!(
            out.status.success(),
            "the admin's dry run was refused: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let admin: Api<PersistentVolumeClaim> = Api::namespaced(cluster.client.clone(), ns);
        admin.delete("data-db-2", &DeleteParams::default()).await?;
        println!(
            "  operators' dry runs refused (one in kube-system); the admin's dry run and claim delete admitted"
        );
        Ok(())
    })
}

/// A Deployment named as an in-cluster install names the gateway's, without replicas.
fn gateway_deployment() -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: suture-gateway, namespace: {NAMESPACE}}}
spec:
  replicas: 0
  selector: {{matchLabels: {{app: suture-gateway}}}}
  template:
    metadata: {{labels: {{app: suture-gateway}}}}
    spec:
      containers: [{{name: gateway, image: "example.invalid/suture-gateway:0"}}]
"#
    )
}

fn operators_cannot_switch_the_gateway_off(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let (op, _) = operators(cluster).await?;
        let del = DeleteParams::default();
        let webhooks: Api<ValidatingWebhookConfiguration> = Api::all(op.client.clone());
        let names: Vec<String> = Api::<ValidatingWebhookConfiguration>::all(cluster.client.clone())
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .filter_map(|w| w.metadata.name)
            .collect();
        let name = names
            .iter()
            .find(|n| n.contains("suture"))
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no suture webhook configuration in {names:?}"))?;
        let message = scene::refusal(
            "the operator's delete of the webhook configuration",
            webhooks.delete(&name, &del).await,
        )?;
        println!("  webhook configuration delete refused: {message}");
        let namespaces: Api<Namespace> = Api::all(op.client.clone());
        let message = scene::refusal(
            "the operator's delete of the gateway's namespace",
            namespaces.delete(NAMESPACE, &del).await,
        )?;
        println!("  gateway namespace delete refused: {message}");
        // A deletecollection's objects come unnamed (their name in oldObject): the guard reads it.
        let ours = ListParams::default().fields(&format!("metadata.name={name}"));
        let message = scene::refusal(
            "the operator's deletecollection of the webhook configuration",
            webhooks.delete_collection(&del, &ours).await,
        )?;
        println!("  webhook configuration deletecollection refused: {message}");
        let ignore = json!({"webhooks": [{"name": "validate.suture.dev", "failurePolicy": "Ignore"}]});
        let message = scene::refusal(
            "the operator's edit of the webhook configuration (failurePolicy: Ignore)",
            webhooks
                .patch(&name, &PatchParams::default(), &Patch::Strategic(&ignore))
                .await,
        )?;
        println!("  webhook configuration edit refused: {message}");
        let admin: Api<ValidatingWebhookConfiguration> = Api::all(cluster.client.clone());
        let kept = admin.get(&name).await?;
        let policies: Vec<Option<String>> = kept
            .webhooks
            .unwrap_or_default()
            .into_iter()
            .map(|w| w.failure_policy)
            .collect();
        anyhow::ensure!(
            policies.iter().all(|p| p.as_deref() == Some("Fail")),
            "failurePolicy is now {policies:?}"
        );
        // The gateway runs on this host (`--webhook-url`), so the install renders no Deployment;
        // the admin creates the one an in-cluster install has (no replicas) to show it guarded.
        scene::apply(cluster, &gateway_deployment())?;
        let deployments: Api<Deployment> = Api::namespaced(op.client.clone(), NAMESPACE);
        let message = scene::refusal(
            "the operator's delete of the gateway's Deployment",
            deployments.delete("suture-gateway", &del).await,
        )?;
        println!("  gateway Deployment delete refused: {message}");
        let gateway_only = ListParams::default().fields("metadata.name=suture-gateway");
        let message = scene::refusal(
            "the operator's deletecollection of the gateway's Deployment",
            deployments.delete_collection(&del, &gateway_only).await,
        )?;
        println!("  gateway Deployment deletecollection refused: {message}");
        anyhow::ensure!(
            Api::<Deployment>::namespaced(cluster.client.clone(), NAMESPACE)
                .get_opt("suture-gateway")
                .await?
                .is_some_and(|d| d.metadata.deletion_timestamp.is_none()),
            "the gateway's Deployment went"
        );
        let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "gateway", "image": "example.invalid/other:1"}]}}}});
        scene::refusal(
            "the operator's edit of the gateway's Deployment",
            deployments
                .patch(
                    "suture-gateway",
                    &PatchParams::default(),
                    &Patch::Strategic(&image),
                )
                .await,
        )?;
        Ok(())
    })
}
