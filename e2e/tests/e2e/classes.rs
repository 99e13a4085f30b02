//! The class harm: deleting a PriorityClass or RuntimeClass that running pods name. What Suture
//! estimates (`impact.lostClasses`) is proved against the real kube-apiserver and ReplicaSet
//! controller: the operator's deletions are refused by `suture-broken-references` and change
//! nothing. Once the admin deletes a class, the pods keep running, but the ReplicaSet
//! controller cannot replace a lost pod (the Priority and RuntimeClass admission plugins refuse
//! it) — and can again once the class exists again.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::{DeleteParams, ListParams};
use kube::{Api, Resource};
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Answer, Operator};
use suture_e2e::{Cluster, gateway, scenes};

pub const TESTS: [Test; 1] = [Test {
    name: "classes::deleting_a_class_pods_name_is_refused",
    run: deleting_a_class_pods_name_is_refused,
}];

const NS: &str = "e2e-classes";
const PRIORITY: &str = "e2e-critical";
const RUNTIME: &str = "e2e-sandbox";

/// The two classes and a Deployment of two replicas naming both.
fn scene() -> String {
    format!(
        r#"{}---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: {PRIORITY}}}
value: 100000
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {{name: {RUNTIME}}}
handler: runsc
---
{}"#,
        scenes::namespace_yaml(NS),
        scenes::app_deployment(
            NS,
            &[
                &format!("priorityClassName: {PRIORITY}"),
                &format!("runtimeClassName: {RUNTIME}")
            ]
        )
    )
}

/// The operator's deletion of the class `name` of type `K` is refused with the pack's message
/// (a dry run first, until the gateway's model holds the pods), and the class is unchanged.
async fn refused<K>(cluster: &Cluster, op: &Operator, name: &str) -> anyhow::Result<()>
where
    K: Resource<Scope = k8s_openapi::ClusterResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let kind = K::kind(&());
    let admin: Api<K> = Api::all(cluster.client.clone());
    let uid = admin.get(name).await?.meta().uid.clone();
    let classes: Api<K> = Api::all(op.client.clone());
    let dry_run = DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    };
    scene::until_answered(
        &format!("the gateway to refuse the dry-run deletion of {kind} {name}"),
        Answer::RefusedWith("leaves 2 running pods"),
        || {
            let (classes, dry_run) = (classes.clone(), dry_run.clone());
            async move { classes.delete(name, &dry_run).await }
        },
    )
    .await?;
    let message = scene::refusal(
        &format!("the deletion of {kind} {name}"),
        classes.delete(name, &DeleteParams::default()).await,
    )?;
    anyhow::ensure!(
        message.contains("SafetyPolicy 'suture-broken-references'")
            && message.contains(&format!("naming {kind} {name}"))
            && message.contains("admits no replacement of them until it exists again"),
        "refused otherwise: {message}"
    );
    anyhow::ensure!(
        admin.get(name).await?.meta().uid == uid,
        "the refused deletion changed {kind} {name}"
    );
    println!("  operator's deletion of {kind} {name} refused: {message}");
    Ok(())
}

/// Deletes one pod of the Deployment and waits until the ReplicaSet controller reports that it
/// cannot create the replacement, with `refusal` in its condition.
async fn replacement_refused(cluster: &Cluster, refusal: &str) -> anyhow::Result<()> {
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), NS);
    let running = pods.list(&ListParams::default().labels("app=app")).await?.items;
    let pod = running
        .iter()
        .find(|p| p.metadata.deletion_timestamp.is_none())
        .ok_or_else(|| anyhow::anyhow!("no running pod of app"))?;
    pods.delete(
        pod.metadata.name.as_deref().unwrap_or_default(),
        &DeleteParams::default(),
    )
    .await?;
    scene::replica_failure(cluster, NS, "app=app", refusal).await?;
    println!("  the ReplicaSet cannot replace the lost pod: {refusal}");
    Ok(())
}

fn deleting_a_class_pods_name_is_refused(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "web-operator").await?;
        gateway::ensure(cluster).await?;
        scene::apply(cluster, &scene())?;
        scene::deployment_ready(cluster, NS, "app").await?;

        refused::<PriorityClass>(cluster, &op, PRIORITY).await?;
        refused::<RuntimeClass>(cluster, &op, RUNTIME).await?;

        // What the refusals prevented, done by the admin (a person: not judged).
        let priorities: Api<PriorityClass> = Api::all(cluster.client.clone());
        priorities.delete(PRIORITY, &DeleteParams::default()).await?;
        replacement_refused(
            cluster,
            &format!("no PriorityClass with name {PRIORITY} was found"),
        )
        .await?;
        // It exists again: the controller replaces the lost pod.
        scene::apply(
            cluster,
            &format!(
                "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {PRIORITY}}}\nvalue: 100000\n"
            ),
        )?;
        scene::deployment_ready(cluster, NS, "app").await?;
        println!("  once PriorityClass {PRIORITY} exists again, the lost pod is replaced");

        let runtimes: Api<RuntimeClass> = Api::all(cluster.client.clone());
        runtimes.delete(RUNTIME, &DeleteParams::default()).await?;
        replacement_refused(cluster, &format!("RuntimeClass \"{RUNTIME}\" not found")).await?;

        scene::kubectl(cluster, &["delete", "namespace", NS, "--wait=false"], None)?;
        priorities.delete(PRIORITY, &DeleteParams::default()).await?;
        Ok(())
    })
}
