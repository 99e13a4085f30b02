//! Policies created in the cluster: a SafetyPolicy applied with kubectl takes effect (and stops
//! when deleted), a broken one is reported on `/readyz` while the last good set keeps serving,
//! and a ValidatingAdmissionPolicy with its binding joins the set the gateway enforces.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use serde_json::json;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::scene::{self, Answer, Operator};
use suture_e2e::wait::{self, SETTLE};
use suture_e2e::{Cluster, gateway};

use suture_e2e::scenes;

pub const TESTS: [Test; 1] = [Test {
    name: "policies::cluster_policies_take_effect_and_a_broken_one_keeps_the_last_good_set",
    run: cluster_policies_take_effect_and_a_broken_one_keeps_the_last_good_set,
}];

const NS: &str = "e2e-cluster-policies";

/// Refuses judged operators' deletes of ConfigMaps labelled precious.
const PRECIOUS: &str = r#"apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: e2e-precious}
spec:
  action: Deny
  subjects: {serviceAccounts: ["e2e-operators/*"]}
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["DELETE"], resources: ["configmaps"]}
  validations:
  - expression: "oldObject.metadata.?labels[?'e2e.suture.dev/precious'].orValue('') != 'true'"
    message: "precious ConfigMaps are kept (e2e-precious)"
"#;

/// Applies (its CRD's schema accepts it) but does not compile.
const BROKEN: &str = r#"apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: e2e-broken}
spec:
  action: Deny
  subjects: {serviceAccounts: ["e2e-operators/*"]}
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"]}
  validations:
  - expression: "object.metadata.name =="
"#;

/// Upstream Kubernetes objects, unchanged: kube-apiserver warns in-process, and so does the gateway.
const DRAFT_VAP: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: e2e-draft}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"]}
  matchConditions:
  - {name: drafts, expression: "'e2e.suture.dev/draft' in object.metadata.?labels.orValue({})"}
  validations:
  - {expression: "false", message: "draft ConfigMaps are flagged (e2e-draft)"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: e2e-draft}
spec:
  policyName: e2e-draft
  validationActions: [Warn]
"#;

const PRECIOUS_REFUSAL: Answer<'static> = Answer::RefusedWith("precious ConfigMaps are kept");

fn config_map(name: &str, label: &str) -> anyhow::Result<ConfigMap> {
    Ok(serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {label: "true"}},
        "data": {"k": "v"},
    }))?)
}

/// Waits until the operator's dry-run delete of `name` gets `answer`.
async fn until_delete_is(op: &Operator, name: &str, answer: Answer<'_>, what: &str) -> anyhow::Result<()> {
    let maps: Api<ConfigMap> = Api::namespaced(op.client.clone(), NS);
    let dry = DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    };
    scene::until_answered(what, answer, || {
        let (maps, dry) = (maps.clone(), dry.clone());
        async move { maps.delete(name, &dry).await }
    })
    .await
}

async fn readiness(cluster: &Cluster) -> anyhow::Result<(u16, serde_json::Value)> {
    match &cluster.gateway {
        Some(gateway) => gateway.readiness().await,
        None => anyhow::bail!("no gateway"),
    }
}

fn cluster_policies_take_effect_and_a_broken_one_keeps_the_last_good_set(
    cluster: &mut Cluster,
) -> TestFuture<'_> {
    Box::pin(async move {
        let op = scene::operator(cluster, "e2e-operators", "db-operator").await?;
        gateway::ensure(cluster).await?;
        scene::apply(cluster, &scenes::namespace_yaml(NS))?;
        let as_operator: Api<ConfigMap> = Api::namespaced(op.client.clone(), NS);
        let admin: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), NS);
        admin
            .create(
                &PostParams::default(),
                &config_map("ledger", "e2e.suture.dev/precious")?,
            )
            .await?;
        until_delete_is(
            &op,
            "ledger",
            Answer::Admitted,
            "the ledger's delete admitted before the policy",
        )
        .await?;
        let (_, before) = readiness(cluster).await?;

        scene::apply(cluster, PRECIOUS)?;
        until_delete_is(
            &op,
            "ledger",
            PRECIOUS_REFUSAL,
            "the SafetyPolicy applied in the cluster to refuse",
        )
        .await?;
        println!("  a SafetyPolicy applied with kubectl refuses the operator's delete");

        scene::apply(cluster, BROKEN)?;
        wait::until("the broken policy on /readyz", SETTLE, || async {
            let (_, detail) = readiness(cluster).await?;
            let error = detail["lastPolicyError"].as_str().unwrap_or_default().to_owned();
            Ok((!error.contains("e2e-broken")).then_some(format!("{detail}")))
        })
        .await?;
        let (status, detail) = readiness(cluster).await?;
        anyhow::ensure!(
            status == 200,
            "a broken cluster policy made the gateway unready: {detail}"
        );
        println!(
            "  the broken policy is reported: {}",
            detail["lastPolicyError"].as_str().unwrap_or_default()
        );
        // The last good set serves: the precious policy still refuses, for real.
        let message = scene::refusal(
            "the ledger's delete while a broken policy is in the cluster",
            as_operator.delete("ledger", &DeleteParams::default()).await,
        )?;
        anyhow::ensure!(message.contains("precious ConfigMaps are kept"), "{message}");
        anyhow::ensure!(admin.get_opt("ledger").await?.is_some(), "the ledger was deleted");
        // ...and the pack with it (the broken policy is not half-loaded in its place).
        anyhow::ensure!(
            detail["policies"].as_u64() > before["policies"].as_u64(),
            "policies: {} before, {} now",
            before["policies"],
            detail["policies"]
        );

        scene::kubectl(cluster, &["delete", "safetypolicy", "e2e-broken"], None)?;
        scene::apply(cluster, DRAFT_VAP)?;
        // The gateway warns once it has the binding: its decision log names the policy.
        let mut attempt = 0;
        wait::until(
            "the ValidatingAdmissionPolicy in the gateway's set",
            SETTLE,
            || {
                attempt += 1;
                let name = format!("draft-{attempt}");
                let (as_operator, gateway) = (as_operator.clone(), cluster.gateway.as_ref());
                async move {
                    let dry = PostParams {
                        dry_run: true,
                        ..PostParams::default()
                    };
                    as_operator
                        .create(&dry, &config_map(&name, "e2e.suture.dev/draft")?)
                        .await?;
                    // The line is written after the answer (flushed every 200 ms).
                    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                    let warned: Vec<String> = gateway
                        .map(|g| g.decisions("configmaps", &name))
                        .unwrap_or_default()
                        .iter()
                        .flat_map(|d| d["warnedBy"].as_array().cloned().unwrap_or_default())
                        .filter_map(|p| p.as_str().map(str::to_owned))
                        .collect();
                    Ok((!warned.iter().any(|p| p.contains("e2e-draft")))
                        .then_some(format!("warnedBy {warned:?}")))
                }
            },
        )
        .await?;
        let (_, detail) = readiness(cluster).await?;
        anyhow::ensure!(
            detail.get("lastPolicyError").is_none(),
            "still reported: {detail}"
        );
        println!(
            "  a ValidatingAdmissionPolicy and binding joined the set; the broken policy's report cleared"
        );

        scene::kubectl(cluster, &["delete", "safetypolicy", "e2e-precious"], None)?;
        until_delete_is(
            &op,
            "ledger",
            Answer::Admitted,
            "the deleted SafetyPolicy to stop refusing",
        )
        .await?;
        scene::kubectl(
            cluster,
            &[
                "delete",
                "validatingadmissionpolicybinding,validatingadmissionpolicy",
                "e2e-draft",
            ],
            None,
        )?;
        println!("  deleted from the cluster, the SafetyPolicy no longer refuses");
        Ok(())
    })
}
