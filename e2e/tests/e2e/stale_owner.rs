//! The stale-owner class: deleting an object whose owner was deleted (or deleted and recreated
//! under the same name) is refused as acting on a stale view. In a real cluster the garbage
//! collector removes such dependents within moments, which is the window an operator with a
//! lagging cache acts in; the scene widens that window with an in-process
//! ValidatingAdmissionPolicy that holds the garbage collector's deletes of labelled ConfigMaps.
//! Once the hold is lifted, the real garbage collector deletes both dependents: it agrees their
//! owners are gone.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{DeleteParams, DynamicObject};
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Answer, Operator, kubectl_with};
use suture_e2e::wait::{self, SETTLE};
use suture_e2e::{Cluster, gateway};

use crate::admission::{refused_by, widgets};
use suture_e2e::scenes;

pub const TESTS: [Test; 1] = [Test {
    name: "stale_owner::dependents_of_a_gone_or_replaced_owner_are_refused",
    run: dependents_of_a_gone_or_replaced_owner_are_refused,
}];

const NS: &str = "e2e-stale";
const GARBAGE_COLLECTOR: &str = "system:serviceaccount:kube-system:generic-garbage-collector";

/// Holds the garbage collector's deletes of ConfigMaps labelled `e2e.suture.dev/hold`.
fn hold() -> String {
    format!(
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {{name: e2e-hold-from-gc}}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {{apiGroups: [""], apiVersions: ["v1"], operations: ["DELETE"], resources: ["configmaps"]}}
  matchConditions:
  - {{name: garbage-collector, expression: "request.userInfo.username == '{GARBAGE_COLLECTOR}'"}}
  validations:
  - expression: "!('e2e.suture.dev/hold' in oldObject.metadata.?labels.orValue({{}}))"
    message: held for the stale-owner scene
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {{name: e2e-hold-from-gc}}
spec:
  policyName: e2e-hold-from-gc
  validationActions: [Deny]
"#
    )
}

/// A held ConfigMap `name` owned by the Widget `owner` of `uid`.
fn dependent(name: &str, owner: &str, uid: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: {NS}
  labels: {{e2e.suture.dev/hold: "true"}}
  ownerReferences:
  - {{apiVersion: e2e.suture.dev/v1, kind: Widget, name: {owner}, uid: {uid}}}
data: {{k: v}}
"#
    )
}

async fn widget_uid(cluster: &Cluster, name: &str) -> anyhow::Result<String> {
    let widget = Api::<DynamicObject>::namespaced_with(cluster.client.clone(), NS, &widgets())
        .get(name)
        .await?;
    Ok(widget.metadata.uid.unwrap_or_default())
}

/// Waits until the operator's dry-run delete of the ConfigMap `name` is refused as stale.
async fn until_stale(op: &Operator, name: &str) -> anyhow::Result<()> {
    let maps: Api<ConfigMap> = Api::namespaced(op.client.clone(), NS);
    let dry = DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    };
    scene::until_answered(
        &format!("{name}'s owner to be stale in the gateway's model"),
        Answer::RefusedWith("stale view"),
        || {
            let (maps, dry) = (maps.clone(), dry.clone());
            async move { maps.delete(name, &dry).await }
        },
    )
    .await
}

fn dependents_of_a_gone_or_replaced_owner_are_refused(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "db-operator").await?;
        gateway::ensure(cluster).await?;
        scene::apply(cluster, &scenes::namespace_yaml(NS))?;
        scene::apply(cluster, scenes::WIDGET_CRD)?;
        scene::until_established(cluster, "widgets.e2e.suture.dev").await?;
        scene::apply(cluster, &hold())?;
        // The hold is in force once the garbage collector's (impersonated) dry run is refused.
        scene::apply(
            cluster,
            &dependent("probe", "nobody", "00000000-0000-0000-0000-000000000000"),
        )?;
        let as_gc = [
            "--as",
            GARBAGE_COLLECTOR,
            "-n",
            NS,
            "delete",
            "configmap/probe",
            "--dry-run=server",
        ];
        wait::until("the hold on the garbage collector", SETTLE, || async {
            let out = kubectl_with(cluster, None, &as_gc, None)?;
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            Ok((!stderr.contains("held for the stale-owner scene")).then_some(stderr))
        })
        .await?;

        for owner in ["export", "migration"] {
            scene::apply(cluster, &scenes::widget(NS, owner))?;
        }
        let export = widget_uid(cluster, "export").await?;
        let migration = widget_uid(cluster, "migration").await?;
        scene::apply(cluster, &dependent("export-settings", "export", &export))?;
        scene::apply(cluster, &dependent("migration-lock", "migration", &migration))?;
        // `export` is deleted and recreated (a new uid); `migration` is gone.
        scene::kubectl(
            cluster,
            &["-n", NS, "delete", "widget", "export", "migration", "--wait"],
            None,
        )?;
        scene::apply(cluster, &scenes::widget(NS, "export"))?;
        let replaced = widget_uid(cluster, "export").await?;
        anyhow::ensure!(replaced != export, "the recreated Widget kept its uid");

        until_stale(&op, "export-settings").await?;
        until_stale(&op, "migration-lock").await?;
        let maps: Api<ConfigMap> = Api::namespaced(op.client.clone(), NS);
        let del = DeleteParams::default();
        refused_by(
            cluster,
            "delete of a replaced owner's dependent",
            ("configmaps", "export-settings"),
            maps.delete("export-settings", &del).await,
            "suture-stale-owner",
        )
        .await?;
        refused_by(
            cluster,
            "delete of a gone owner's dependent",
            ("configmaps", "migration-lock"),
            maps.delete("migration-lock", &del).await,
            "suture-stale-owner",
        )
        .await?;
        let admin: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), NS);
        for name in ["export-settings", "migration-lock"] {
            anyhow::ensure!(admin.get_opt(name).await?.is_some(), "{name} is gone");
        }

        // The judge: with the hold lifted, the real garbage collector deletes both dependents
        // (its retries back off while held; give it time).
        scene::kubectl(
            cluster,
            &[
                "delete",
                "validatingadmissionpolicybinding,validatingadmissionpolicy",
                "e2e-hold-from-gc",
            ],
            None,
        )?;
        wait::until(
            "the garbage collector to delete the stale dependents",
            std::time::Duration::from_secs(120),
            || async {
                let mut left = Vec::new();
                for name in ["export-settings", "migration-lock"] {
                    if admin.get_opt(name).await?.is_some() {
                        left.push(name);
                    }
                }
                Ok((!left.is_empty()).then(|| format!("still there: {left:?}")))
            },
        )
        .await?;
        println!(
            "  hold lifted: the garbage collector deleted both dependents (it agrees their owners are gone)"
        );
        Ok(())
    })
}
