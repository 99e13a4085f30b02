//! The admission setups the latency benchmark compares, and switching the cluster between them:
//! no admission webhook; the gateway as a no-op webhook (`--noop`: the same TLS/HTTP stack,
//! everything allowed); the gateway judging with the pack and impact; and kube-apiserver's
//! in-process ValidatingAdmissionPolicy with a comparable set of request-only rules. The two
//! webhook setups use the install's own webhook configuration with its URL pointed at one
//! gateway or the other; the others delete it.

use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::cluster::Cluster;
use crate::scene::{self, Answer};

/// One admission setup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Setup {
    NoAdmission,
    Vap,
    NoopWebhook,
    Judging,
}

impl Setup {
    /// Every setup.
    pub const ALL: [Self; 4] = [Self::NoAdmission, Self::Vap, Self::NoopWebhook, Self::Judging];

    /// The order round `round` visits the setups in: rotated from round to round, so that over
    /// a multiple of four rounds each setup comes first after a switch equally often (the first
    /// setup measured after the cluster's admission changed came out slower in trial runs,
    /// whichever it was).
    pub fn round_order(round: usize) -> [Self; 4] {
        let mut order = Self::ALL;
        order.rotate_left(round % Self::ALL.len());
        order
    }

    /// How the report names it.
    pub fn label(self) -> &'static str {
        match self {
            Self::NoAdmission => "no admission webhook",
            Self::Vap => "in-process ValidatingAdmissionPolicy",
            Self::NoopWebhook => "gateway as a no-op webhook",
            Self::Judging => "Suture judging (pack + impact)",
        }
    }
}

/// Request-only rules comparable to what the pack checks, as kube-apiserver runs them itself:
/// quorum on scale, Recreate and `:latest` on Deployments, labelled pods and system namespaces on
/// delete; each matched to the judged operators.
const VAP_RULES: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bench-statefulset-quorum}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: ["*"], operations: [UPDATE], resources: [statefulsets, statefulsets/scale]}
  matchConditions:
  - {name: operators, expression: "request.userInfo.username.startsWith('system:serviceaccount:e2e-operators:')"}
  validations:
  - {expression: "object.spec.replicas >= 3 || object.spec.replicas >= oldObject.spec.replicas", message: "scaling below quorum"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bench-deployments}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [deployments]}
  matchConditions:
  - {name: operators, expression: "request.userInfo.username.startsWith('system:serviceaccount:e2e-operators:')"}
  validations:
  - {expression: "object.spec.?strategy.?type.orValue('RollingUpdate') != 'Recreate' || object.spec.?replicas.orValue(1) <= 1", message: "Recreate stops every replica"}
  - {expression: "object.spec.template.spec.containers.all(c, has(c.image) && !c.image.endsWith(':latest'))", message: "pin images"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bench-deletes}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["*"], operations: [DELETE], resources: [pods, namespaces, persistentvolumeclaims]}
  matchConditions:
  - {name: operators, expression: "request.userInfo.username.startsWith('system:serviceaccount:e2e-operators:')"}
  validations:
  - {expression: "oldObject.metadata.?labels[?'app'].orValue('') != 'db'", message: "database pods stay"}
  - {expression: "!(request.name in ['default', 'kube-system', 'kube-public'])", message: "system namespaces stay"}
  - {expression: "request.resource.resource != 'persistentvolumeclaims'", message: "claims stay"}
"#;

const VAP_NAMES: [&str; 3] = ["bench-statefulset-quorum", "bench-deployments", "bench-deletes"];

fn bindings() -> String {
    VAP_NAMES
        .iter()
        .map(|name| {
            format!(
                "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\n\
                 metadata: {{name: {name}}}\nspec: {{policyName: {name}, validationActions: [Deny]}}\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// Switches the cluster between setups.
#[derive(Debug)]
pub struct Switcher {
    /// The install's webhook configuration, as created (without server-set fields).
    webhook: ValidatingWebhookConfiguration,
    judging_url: String,
    noop_url: String,
    /// The judged operator's client and the StatefulSet's namespace, for the probes.
    probe: Api<StatefulSet>,
}

/// The delay after a switch that cannot be fully observed (between no admission and the no-op
/// webhook, which both admit the probe): kube-apiserver's informers apply a change in
/// milliseconds.
const UNOBSERVABLE_SETTLE: Duration = Duration::from_secs(2);

impl Switcher {
    /// A switcher over the installed webhook configuration `name`; probes scale the StatefulSet
    /// `db` of `namespace` below quorum (dry run) as `operator`.
    pub async fn new(
        cluster: &Cluster,
        name: &str,
        (judging_url, noop_url): (&str, &str),
        operator: &kube::Client,
        namespace: &str,
    ) -> anyhow::Result<Self> {
        let mut webhook = Api::<ValidatingWebhookConfiguration>::all(cluster.client.clone())
            .get(name)
            .await?;
        let meta = webhook.metadata;
        webhook.metadata = kube::core::ObjectMeta {
            name: meta.name,
            labels: meta.labels,
            annotations: meta.annotations,
            ..kube::core::ObjectMeta::default()
        };
        Ok(Self {
            webhook,
            judging_url: judging_url.to_owned(),
            noop_url: noop_url.to_owned(),
            probe: Api::namespaced(operator.clone(), namespace),
        })
    }

    /// Puts `setup` in force and returns once it is observed (or settled, when it cannot be),
    /// whichever setup was in force before.
    pub async fn switch(&self, cluster: &Cluster, setup: Setup) -> anyhow::Result<()> {
        match setup {
            Setup::NoAdmission => {
                self.remove_webhook(cluster).await?;
                self.remove_vap(cluster)?;
                // Admitted shows neither the VAP nor the judging webhook is in force; the no-op
                // one cannot be told apart: give the informer its moment.
                self.until_probe(None).await?;
                tokio::time::sleep(UNOBSERVABLE_SETTLE).await;
            }
            Setup::Vap => {
                self.remove_webhook(cluster).await?;
                scene::apply(cluster, &format!("{VAP_RULES}---\n{}", bindings()))?;
                self.until_probe(Some("scaling below quorum")).await?;
            }
            Setup::NoopWebhook | Setup::Judging => {
                self.remove_vap(cluster)?;
                let base = if setup == Setup::Judging {
                    &self.judging_url
                } else {
                    &self.noop_url
                };
                self.put_webhook(cluster, base).await?;
                let refusal = (setup == Setup::Judging).then_some("SafetyPolicy 'suture-");
                self.until_probe(refusal).await?;
                if setup == Setup::NoopWebhook {
                    // Admitted could also mean "no webhook yet": give the informer its moment.
                    tokio::time::sleep(UNOBSERVABLE_SETTLE).await;
                }
            }
        }
        Ok(())
    }

    async fn put_webhook(&self, cluster: &Cluster, base: &str) -> anyhow::Result<()> {
        let mut webhook = self.webhook.clone();
        for hook in webhook.webhooks.iter_mut().flatten() {
            hook.client_config.url = Some(format!("{base}/validate"));
        }
        let api = Api::<ValidatingWebhookConfiguration>::all(cluster.client.clone());
        let name = webhook.metadata.name.clone().unwrap_or_default();
        match api.get_opt(&name).await? {
            Some(_) => {
                let patch = json!({"webhooks": webhook.webhooks});
                // A strategic merge would merge the webhooks by name; the whole list is meant.
                api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await?;
            }
            None => {
                api.create(&PostParams::default(), &webhook).await?;
            }
        }
        Ok(())
    }

    async fn remove_webhook(&self, cluster: &Cluster) -> anyhow::Result<()> {
        let api = Api::<ValidatingWebhookConfiguration>::all(cluster.client.clone());
        let name = self.webhook.metadata.name.clone().unwrap_or_default();
        if api.get_opt(&name).await?.is_some() {
            api.delete(&name, &DeleteParams::default()).await?;
        }
        Ok(())
    }

    fn remove_vap(&self, cluster: &Cluster) -> anyhow::Result<()> {
        let mut args = vec![
            "delete",
            "validatingadmissionpolicybinding,validatingadmissionpolicy",
        ];
        args.extend(VAP_NAMES);
        args.push("--ignore-not-found");
        scene::kubectl(cluster, &args, None)?;
        Ok(())
    }

    /// Waits until a dry-run scale of `db` to one replica is refused with `refusal`, or admitted
    /// when `None`.
    async fn until_probe(&self, refusal: Option<&str>) -> anyhow::Result<()> {
        let answer = refusal.map_or(Answer::Admitted, Answer::RefusedWith);
        let down = json!({"spec": {"replicas": 1}});
        let dry = PatchParams::default().dry_run();
        scene::until_answered("the admission setup to be in force", answer, || {
            let (probe, dry, down) = (self.probe.clone(), dry.clone(), down.clone());
            async move { probe.patch_scale("db", &dry, &Patch::Merge(&down)).await }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_rounds_put_every_setup_first_once() {
        let firsts: Vec<Setup> = (0..4).map(|r| Setup::round_order(r)[0]).collect();
        let mut sorted = firsts.clone();
        sorted.sort();
        assert_eq!(sorted, Setup::ALL.to_vec(), "{firsts:?}");
        assert_eq!(Setup::round_order(4), Setup::round_order(0));
    }
}
