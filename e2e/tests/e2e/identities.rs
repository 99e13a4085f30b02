//! The identity class: deleting the ServiceAccount running pods run as. What Suture estimates
//! (`impact.lostServiceAccounts`) is proved against the real kube-apiserver and controllers: a
//! token bound to a pod of the ServiceAccount (the kind of token a kubelet mounts; nodes are
//! simulated, so the test requests it itself) is accepted while the ServiceAccount exists; the
//! operator's deletion is refused by `suture-broken-references` and changes nothing. Once the
//! admin deletes it, the same token is rejected, the real ReplicaSet controller cannot replace a
//! lost pod (the ServiceAccount admission refuses it), and a ServiceAccount recreated under the
//! same name does not bring the token back.

use std::time::Duration;

use k8s_openapi::api::authentication::v1::{
    BoundObjectReference, TokenRequest, TokenRequestSpec, TokenReview, TokenReviewSpec,
};
use k8s_openapi::api::core::v1::{Pod, ServiceAccount};
use kube::Api;
use kube::api::{DeleteParams, ListParams, PostParams};
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Answer};
use suture_e2e::wait;
use suture_e2e::{Cluster, gateway, scenes};

pub const TESTS: [Test; 1] = [Test {
    name: "identities::deleting_the_service_account_pods_run_as_is_refused",
    run: deleting_the_service_account_pods_run_as_is_refused,
}];

const NS: &str = "e2e-identity";

/// A Deployment of two replicas running as the ServiceAccount `app`.
fn scene() -> String {
    format!(
        r#"{}---
apiVersion: v1
kind: ServiceAccount
metadata: {{name: app, namespace: {NS}}}
---
{}"#,
        scenes::namespace_yaml(NS),
        scenes::app_deployment(NS, &["serviceAccountName: app"])
    )
}

/// A token of ServiceAccount `app` bound to `pod`, as a kubelet requests it for the pod's volume.
async fn bound_token(cluster: &Cluster, pod: &Pod) -> anyhow::Result<String> {
    let accounts: Api<ServiceAccount> = Api::namespaced(cluster.client.clone(), NS);
    let request = TokenRequest {
        spec: TokenRequestSpec {
            expiration_seconds: Some(3600),
            bound_object_ref: Some(BoundObjectReference {
                api_version: Some("v1".into()),
                kind: Some("Pod".into()),
                name: pod.metadata.name.clone(),
                uid: pod.metadata.uid.clone(),
            }),
            ..TokenRequestSpec::default()
        },
        ..TokenRequest::default()
    };
    let issued = accounts
        .create_token_request("app", &PostParams::default(), &request)
        .await?;
    Ok(issued.status.map(|s| s.token).unwrap_or_default())
}

/// Whether kube-apiserver authenticates `token` (a TokenReview, as a webhook authenticator
/// asks), and the error it gives when not.
async fn authenticated(cluster: &Cluster, token: &str) -> anyhow::Result<(bool, String)> {
    let reviews: Api<TokenReview> = Api::all(cluster.client.clone());
    let review = TokenReview {
        spec: TokenReviewSpec {
            token: Some(token.to_owned()),
            ..TokenReviewSpec::default()
        },
        ..TokenReview::default()
    };
    let status = reviews
        .create(&PostParams::default(), &review)
        .await?
        .status
        .unwrap_or_default();
    Ok((
        status.authenticated.unwrap_or(false),
        status.error.unwrap_or_default(),
    ))
}

fn deleting_the_service_account_pods_run_as_is_refused(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "web-operator").await?;
        gateway::ensure(cluster).await?;
        scene::apply(cluster, &scene())?;
        scene::deployment_ready(cluster, NS, "app").await?;
        let admin_pods: Api<Pod> = Api::namespaced(cluster.client.clone(), NS);
        let pods = admin_pods
            .list(&ListParams::default().labels("app=app"))
            .await?
            .items;
        let pod = pods.first().ok_or_else(|| anyhow::anyhow!("no pod of app"))?;
        let token = bound_token(cluster, pod).await?;
        let (accepted, error) = authenticated(cluster, &token).await?;
        anyhow::ensure!(accepted, "a fresh bound token was rejected: {error}");

        // The operator's deletion is refused once the gateway's model holds the pods.
        let admin_accounts: Api<ServiceAccount> = Api::namespaced(cluster.client.clone(), NS);
        let uid = admin_accounts.get("app").await?.metadata.uid;
        let accounts: Api<ServiceAccount> = Api::namespaced(op.client.clone(), NS);
        let dry_run = DeleteParams {
            dry_run: true,
            ..DeleteParams::default()
        };
        scene::until_answered(
            "the gateway to refuse the dry-run deletion of ServiceAccount app",
            Answer::RefusedWith("takes the identity of 2 running pods"),
            || {
                let (accounts, dry_run) = (accounts.clone(), dry_run.clone());
                async move { accounts.delete("app", &dry_run).await }
            },
        )
        .await?;
        let message = scene::refusal(
            "the deletion of ServiceAccount app",
            accounts.delete("app", &DeleteParams::default()).await,
        )?;
        anyhow::ensure!(
            message.contains("SafetyPolicy 'suture-broken-references'")
                && message.contains("2 lose their API access at once"),
            "refused otherwise: {message}"
        );
        anyhow::ensure!(
            admin_accounts.get("app").await?.metadata.uid == uid,
            "the refused deletion changed the ServiceAccount"
        );
        println!("  operator's deletion of ServiceAccount app refused: {message}");

        // What the refusal prevented, done by the admin (a person: not judged).
        admin_accounts.delete("app", &DeleteParams::default()).await?;
        wait::until(
            "kube-apiserver to reject the token of the deleted ServiceAccount",
            Duration::from_secs(60),
            || async {
                let (accepted, _) = authenticated(cluster, &token).await?;
                Ok(accepted.then(|| "still accepted".to_owned()))
            },
        )
        .await?;
        let (_, error) = authenticated(cluster, &token).await?;
        println!("  after the deletion the pod's token is rejected: {error}");

        // A lost pod cannot be replaced: the ReplicaSet controller's creation is refused.
        admin_pods
            .delete(
                pod.metadata.name.as_deref().unwrap_or_default(),
                &DeleteParams::default(),
            )
            .await?;
        let not_found = "serviceaccount \"app\" not found";
        scene::replica_failure(cluster, NS, "app=app", not_found).await?;
        println!("  the ReplicaSet cannot replace the lost pod: {not_found}");

        // Recreated under the same name, it is another ServiceAccount: the token stays rejected.
        scene::apply(
            cluster,
            &format!("apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: app, namespace: {NS}}}\n"),
        )?;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let (accepted, error) = authenticated(cluster, &token).await?;
        anyhow::ensure!(
            !accepted,
            "the recreated ServiceAccount brought the old token back"
        );
        println!("  recreated, the ServiceAccount does not bring the token back: {error}");

        scene::kubectl(cluster, &["delete", "namespace", NS, "--wait=false"], None)?;
        Ok(())
    })
}
