//! An in-house OperatorProfile applied as a cluster object: the gateway reloads it like a policy,
//! and its `keep` reaches the live model. Deleting a Tenant takes its Project (garbage
//! collection), whose profile says the project operator then deletes its namespaces; that needs
//! the Project's `spec.namespaces`, which the gateway's model keeps only once the profile names
//! it. Before the profile the operator's deletion is admitted, with it refused for the workloads
//! of the namespace, and admitted again once the profile is deleted.

use kube::Api;
use kube::api::{DeleteParams, DynamicObject};
use kube::core::ApiResource;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Answer, Operator};
use suture_e2e::{Cluster, gateway, scenes};

pub const TESTS: [Test; 1] = [Test {
    name: "operator_profiles::an_in_house_profile_from_the_cluster_reaches_what_its_cascade_finds",
    run: an_in_house_profile_from_the_cluster_reaches_what_its_cascade_finds,
}];

const NS: &str = "e2e-profile-blue";
const GROUP: &str = "e2e-profiles.suture.dev";

fn crd(kind: &str, plural: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
         metadata: {{name: {plural}.{GROUP}}}\nspec:\n  group: {GROUP}\n  scope: Cluster\n  \
         names: {{plural: {plural}, singular: {singular}, kind: {kind}}}\n  versions:\n  - name: v1\n    \
         served: true\n    storage: true\n    schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}\n",
        singular = kind.to_ascii_lowercase(),
    )
}

/// The project operator deletes a Project's namespaces with it.
const PROFILE: &str = r#"apiVersion: suture.dev/v1alpha1
kind: OperatorProfile
metadata: {name: e2e-project}
spec:
  operator: the e2e project operator
  resource: {group: e2e-profiles.suture.dev, kind: Project}
  keep: [spec.namespaces]
  deletion:
  - name: delete-namespaces
    cascade:
    - reason: "'namespace of Project ' + object.metadata.name"
      objects: "object.?spec.?namespaces.orValue([]).map(n, {'kind': 'Namespace', 'name': n})"
"#;

const REFUSED: Answer<'static> =
    Answer::RefusedWith("Deployment e2e-profile-blue/web with 0 of its 2 ready pods");

fn tenants() -> ApiResource {
    ApiResource {
        group: GROUP.to_owned(),
        version: "v1".to_owned(),
        api_version: format!("{GROUP}/v1"),
        kind: "Tenant".to_owned(),
        plural: "tenants".to_owned(),
    }
}

/// Waits until the operator's dry-run delete of Tenant `blue` gets `answer`.
async fn until_tenant_delete_is(op: &Operator, answer: Answer<'_>, what: &str) -> anyhow::Result<()> {
    let api: Api<DynamicObject> = Api::all_with(op.client.clone(), &tenants());
    let dry = DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    };
    scene::until_answered(what, answer, || {
        let (api, dry) = (api.clone(), dry.clone());
        async move { api.delete("blue", &dry).await }
    })
    .await
}

fn an_in_house_profile_from_the_cluster_reaches_what_its_cascade_finds(
    cluster: &mut Cluster,
) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "db-operator").await?;
        gateway::ensure(cluster).await?;
        scene::apply(
            cluster,
            &format!("{}---\n{}", crd("Tenant", "tenants"), crd("Project", "projects")),
        )?;
        scene::until_established(cluster, &format!("tenants.{GROUP}")).await?;
        scene::until_established(cluster, &format!("projects.{GROUP}")).await?;
        scene::apply(cluster, &scenes::web(NS, "web", 2, "RollingUpdate", 1))?;
        scene::deployment_ready(cluster, NS, "web").await?;
        scene::apply(
            cluster,
            &format!("apiVersion: {GROUP}/v1\nkind: Tenant\nmetadata: {{name: blue}}\n"),
        )?;
        let tenant = Api::<DynamicObject>::all_with(cluster.client.clone(), &tenants())
            .get("blue")
            .await?;
        let uid = tenant.metadata.uid.unwrap_or_default();
        scene::apply(
            cluster,
            &format!(
                "apiVersion: {GROUP}/v1\nkind: Project\nmetadata:\n  name: blue\n  ownerReferences:\n  - \
                 {{apiVersion: {GROUP}/v1, kind: Tenant, name: blue, uid: {uid}, controller: true, \
                 blockOwnerDeletion: true}}\nspec: {{namespaces: [{NS}]}}\n"
            ),
        )?;

        until_tenant_delete_is(
            &op,
            Answer::Admitted,
            "the Tenant's delete admitted while no profile says what its Project's deletion does",
        )
        .await?;
        println!("  without a profile, deleting the Tenant takes its Project only: admitted");

        scene::apply(cluster, PROFILE)?;
        until_tenant_delete_is(
            &op,
            REFUSED,
            "the Tenant's delete refused once the profile's kept fields reach the model",
        )
        .await?;
        println!("  with the profile applied, the Project's namespaces go with it: refused");

        scene::kubectl(cluster, &["delete", "operatorprofile", "e2e-project"], None)?;
        until_tenant_delete_is(
            &op,
            Answer::Admitted,
            "the Tenant's delete admitted again once the profile is deleted",
        )
        .await?;
        println!("  with the profile deleted, admitted again");

        for args in [
            vec![
                "delete",
                "projects.e2e-profiles.suture.dev",
                "blue",
                "--wait=false",
            ],
            vec![
                "delete",
                "tenants.e2e-profiles.suture.dev",
                "blue",
                "--wait=false",
            ],
            vec!["delete", "namespace", NS, "--wait=false"],
            vec![
                "delete",
                "crd",
                "projects.e2e-profiles.suture.dev",
                "tenants.e2e-profiles.suture.dev",
                "--wait=false",
            ],
        ] {
            scene::kubectl(cluster, &args, None)?;
        }
        Ok(())
    })
}
