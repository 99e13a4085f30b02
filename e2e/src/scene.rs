//! Building scenes in the cluster: objects applied from YAML with the real kubectl (server-side
//! apply, as the admin), operator identities (ServiceAccounts with broad RBAC, as operators
//! have, and clients holding their tokens), and waits for the controllers to settle a scene.

use std::future::Future;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use anyhow::Context;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::Api;
use kube::api::ListParams;

use crate::cluster::Cluster;
use crate::gateway::service_account_kubeconfig;
use crate::kubeconfig;
use crate::wait::{self, SETTLE};

/// The toleration every test pod carries, so it lands on simulated nodes only.
pub const TOLERATION: &str = "{key: e2e.suture.dev/simulated, operator: Exists}";

/// Runs kubectl with `args`, `kubeconfig` (the admin's when `None`) and `input` on stdin.
pub fn kubectl_with(
    cluster: &Cluster,
    kubeconfig: Option<&PathBuf>,
    args: &[&str],
    input: Option<&str>,
) -> anyhow::Result<Output> {
    let kubeconfig = kubeconfig.unwrap_or(&cluster.kubeconfig);
    let mut child = Command::new(&cluster.kubectl)
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {}", cluster.kubectl.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.unwrap_or_default().as_bytes())?;
    }
    Ok(child.wait_with_output()?)
}

/// Runs kubectl as the admin with `input` on stdin: its stdout, or an error carrying its stderr.
pub fn kubectl(cluster: &Cluster, args: &[&str], input: Option<&str>) -> anyhow::Result<String> {
    let out = kubectl_with(cluster, None, args, input)?;
    anyhow::ensure!(
        out.status.success(),
        "kubectl {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Applies `yaml` as the admin (server-side apply); an error carries kubectl's stderr.
pub fn apply(cluster: &Cluster, yaml: &str) -> anyhow::Result<()> {
    let args = ["apply", "--server-side", "--field-manager=suture-e2e", "-f", "-"];
    kubectl(cluster, &args, Some(yaml)).map(|_| ())
}

/// An operator identity: a ServiceAccount bound to `cluster-admin` (operators' RBAC is broad;
/// Suture judges what they do with it).
#[derive(Clone)]
pub struct Operator {
    /// `namespace/name`.
    pub account: String,
    /// A kubeconfig holding its token.
    pub kubeconfig: PathBuf,
    /// A client with its token.
    pub client: kube::Client,
}

impl std::fmt::Debug for Operator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operator")
            .field("account", &self.account)
            .finish_non_exhaustive()
    }
}

/// Creates the ServiceAccount `namespace/name` with cluster-admin and a token for it.
pub async fn operator(cluster: &Cluster, namespace: &str, name: &str) -> anyhow::Result<Operator> {
    apply(
        cluster,
        &format!(
            "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {namespace}}}\n---\n\
             apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: {name}, namespace: {namespace}}}\n---\n\
             apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n\
             metadata: {{name: e2e-{namespace}-{name}}}\n\
             roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}}\n\
             subjects: [{{kind: ServiceAccount, name: {name}, namespace: {namespace}}}]\n"
        ),
    )?;
    let kubeconfig = service_account_kubeconfig(cluster, namespace, name).await?;
    let client = kubeconfig::client(&kubeconfig).await?;
    Ok(Operator {
        account: format!("{namespace}/{name}"),
        kubeconfig,
        client,
    })
}

/// Waits until the StatefulSet has all its replicas Ready and every claim of it is Bound.
pub async fn statefulset_ready(cluster: &Cluster, namespace: &str, name: &str) -> anyhow::Result<()> {
    let sets: Api<StatefulSet> = Api::namespaced(cluster.client.clone(), namespace);
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(cluster.client.clone(), namespace);
    wait::until(&format!("statefulset {namespace}/{name} ready"), SETTLE, || {
        let (sets, claims) = (sets.clone(), claims.clone());
        async move {
            let set = sets.get(name).await?;
            let want = set.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
            let ready = set.status.as_ref().and_then(|s| s.ready_replicas).unwrap_or(0);
            if ready != want {
                return Ok(Some(format!("{ready}/{want} ready")));
            }
            let unbound = claims
                .list(&ListParams::default())
                .await?
                .items
                .iter()
                .filter(|c| c.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Bound"))
                .count();
            Ok((unbound > 0).then(|| format!("{unbound} claims not bound")))
        }
    })
    .await
}

/// Waits until the Deployment has all its replicas available and updated.
pub async fn deployment_ready(cluster: &Cluster, namespace: &str, name: &str) -> anyhow::Result<()> {
    let deployments: Api<Deployment> = Api::namespaced(cluster.client.clone(), namespace);
    wait::until(&format!("deployment {namespace}/{name} ready"), SETTLE, || {
        let deployments = deployments.clone();
        async move {
            let d = deployments.get(name).await?;
            let want = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
            let status = d.status.unwrap_or_default();
            let available = status.available_replicas.unwrap_or(0);
            let updated = status.updated_replicas.unwrap_or(0);
            let total = status.replicas.unwrap_or(0);
            Ok((available != want || updated != want || total != want)
                .then(|| format!("{available} available, {updated} updated, {total} total of {want}")))
        }
    })
    .await
}

/// The names of the pods in `namespace` that run on simulated nodes and are Ready.
pub async fn ready_pods(cluster: &Cluster, namespace: &str) -> anyhow::Result<Vec<String>> {
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), namespace);
    let mut names: Vec<String> = pods
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|p| {
            p.status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
        })
        .filter_map(|p| p.metadata.name)
        .collect();
    names.sort();
    Ok(names)
}

/// Waits until the CustomResourceDefinition `name` is Established.
pub async fn until_established(cluster: &Cluster, name: &str) -> anyhow::Result<()> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crds: Api<CustomResourceDefinition> = Api::all(cluster.client.clone());
    wait::until(&format!("CRD {name} established"), SETTLE, || {
        let crds = crds.clone();
        async move {
            let crd = crds.get(name).await?;
            let established = crd
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True");
            Ok((!established).then(|| "not established".to_owned()))
        }
    })
    .await
}

/// Waits until the disruption controller reports `allowed` disruptions for the PDB, for its
/// current generation.
pub async fn pdb_settled(cluster: &Cluster, namespace: &str, name: &str, allowed: i32) -> anyhow::Result<()> {
    use k8s_openapi::api::policy::v1::PodDisruptionBudget;
    let budgets: Api<PodDisruptionBudget> = Api::namespaced(cluster.client.clone(), namespace);
    wait::until(
        &format!("PDB {namespace}/{name} allows {allowed}"),
        SETTLE,
        || {
            let budgets = budgets.clone();
            async move {
                let pdb = budgets.get(name).await?;
                let status = pdb.status.unwrap_or_default();
                let current = status.observed_generation == pdb.metadata.generation;
                Ok((!current || status.disruptions_allowed != allowed)
                    .then(|| format!("disruptionsAllowed {}", status.disruptions_allowed)))
            }
        },
    )
    .await
}

/// What a request is expected to get from kube-apiserver.
#[derive(Debug, Clone, Copy)]
pub enum Answer<'a> {
    Admitted,
    /// Refused with a message containing this text.
    RefusedWith(&'a str),
}

impl Answer<'_> {
    /// `None` when `outcome` is this answer, else what it was instead.
    fn mismatch<T>(self, outcome: Result<T, kube::Error>) -> Option<String> {
        match (outcome, self) {
            (Ok(_), Answer::Admitted) => None,
            (Err(kube::Error::Api(status)), Answer::RefusedWith(text)) if status.message.contains(text) => {
                None
            }
            (Ok(_), Answer::RefusedWith(_)) => Some("admitted".to_owned()),
            (Err(error), _) => Some(error.to_string()),
        }
    }
}

/// Repeats `request` (each call a fresh request) until kube-apiserver gives it the `expected`
/// answer: how a test waits for the gateway's model or policy set to catch up with the cluster.
pub async fn until_answered<T, F, Fut>(what: &str, expected: Answer<'_>, mut request: F) -> anyhow::Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    wait::until(what, SETTLE, || {
        let outcome = request();
        async move { Ok(expected.mismatch(outcome.await)) }
    })
    .await
}

/// The suite's gateway installed and the database scene (`replicas` members, a budget keeping
/// `min_available`) built in `namespace`, Ready and in the gateway's model; the judged
/// `e2e-operators/db-operator`, returned.
pub async fn judged_database(
    cluster: &mut Cluster,
    namespace: &str,
    replicas: u32,
    min_available: u32,
) -> anyhow::Result<Operator> {
    let operator = operator(cluster, "e2e-operators", "db-operator").await?;
    crate::gateway::ensure(cluster).await?;
    apply(
        cluster,
        &crate::scenes::database(namespace, replicas, min_available),
    )?;
    statefulset_ready(cluster, namespace, "db").await?;
    gateway_sees(&operator, namespace).await?;
    Ok(operator)
}

/// Waits until the gateway's live model holds the workloads of `namespace`: a dry-run delete of
/// the namespace by `operator` is refused by the pack for what it holds (asked of the gateway through
/// kube-apiserver, as every judged request is).
pub async fn gateway_sees(operator: &Operator, namespace: &str) -> anyhow::Result<()> {
    use k8s_openapi::api::core::v1::Namespace;
    let namespaces: Api<Namespace> = Api::all(operator.client.clone());
    let params = kube::api::DeleteParams {
        dry_run: true,
        ..kube::api::DeleteParams::default()
    };
    until_answered(
        &format!("the gateway's model to hold {namespace}"),
        Answer::RefusedWith("SafetyPolicy 'suture-"),
        || {
            let (namespaces, params) = (namespaces.clone(), params.clone());
            async move { namespaces.delete(namespace, &params).await }
        },
    )
    .await
}

/// The message with which kube-apiserver refused a request; an error naming `what` if the
/// request was admitted, and the error itself if it failed otherwise.
pub fn refusal<T>(what: &str, result: Result<T, kube::Error>) -> anyhow::Result<String> {
    match result {
        Ok(_) => anyhow::bail!("{what}: admitted"),
        Err(kube::Error::Api(status)) => Ok(status.message),
        Err(other) => Err(anyhow::Error::new(other).context(format!("{what}: failed otherwise"))),
    }
}

/// Waits until a ReplicaSet selected by `labels` in `namespace` reports, in its `ReplicaFailure`
/// condition, that it cannot create a pod, with `refusal` in the message (kube-apiserver's
/// admission refusing the replacement of a lost pod).
pub async fn replica_failure(
    cluster: &Cluster,
    namespace: &str,
    labels: &str,
    refusal: &str,
) -> anyhow::Result<()> {
    let sets: Api<ReplicaSet> = Api::namespaced(cluster.client.clone(), namespace);
    wait::until(
        &format!("the ReplicaSet controller to report `{refusal}`"),
        std::time::Duration::from_secs(60),
        || {
            let sets = sets.clone();
            async move {
                let failures: Vec<String> = sets
                    .list(&ListParams::default().labels(labels))
                    .await?
                    .items
                    .into_iter()
                    .flat_map(|s| s.status.and_then(|s| s.conditions).unwrap_or_default())
                    .filter(|c| c.type_ == "ReplicaFailure")
                    .filter_map(|c| c.message)
                    .collect();
                Ok((!failures.iter().any(|m| m.contains(refusal)))
                    .then(|| format!("conditions {failures:?}")))
            }
        },
    )
    .await
}
