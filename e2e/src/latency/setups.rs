//! The admission setups the latency benchmark compares, all in force at once and told apart by
//! who sends the request: no admission webhook; the gateway as a no-op webhook (`--noop`: the
//! same TLS/HTTP stack, everything allowed); the gateway judging with the pack and impact;
//! kube-apiserver's in-process ValidatingAdmissionPolicy with a comparable set of request-only
//! rules; and, when a baseline build is given, that build judging the same way. Each setup has
//! its own service account, which only that setup's admission matches: the judged operator goes
//! through the install's webhook (unchanged); `bench-noop` through a copy of it pointed at the
//! no-op twin; `bench-vap` through the policies; `bench-none` through nothing. Those three live
//! in the gateway's namespace, whose service accounts the install never judges. The baseline's
//! `bench-baseline` is an operator beside the judged one (the pack judges both alike) that the
//! install does not list, sent through a copy of the webhook pointed at the baseline build. So
//! the timed requests can alternate setups request by request, and the drift of a busy 2-core
//! machine falls on every setup alike. Every request still has every configuration's match
//! conditions evaluated by kube-apiserver (each a few string comparisons).

use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::cluster::Cluster;
use crate::gateway;
use crate::scene::{self, Answer, Operator};

/// One admission setup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Setup {
    NoAdmission,
    Vap,
    NoopWebhook,
    Judging,
    /// Another build of the gateway judging the same way (`--baseline-gateway`).
    Baseline,
}

impl Setup {
    /// Every setup, in report order.
    pub const ALL: [Self; 5] = [
        Self::NoAdmission,
        Self::Vap,
        Self::NoopWebhook,
        Self::Judging,
        Self::Baseline,
    ];

    /// The setups timed: all but the baseline unless one is given.
    pub fn timed(baseline: bool) -> Vec<Self> {
        Self::ALL
            .into_iter()
            .filter(|setup| baseline || *setup != Self::Baseline)
            .collect()
    }

    /// The order iteration `n` visits `setups` in: a permutation drawn from `n` (the same on every
    /// run), so each setup comes before each other one about as often as after it, and at each
    /// position about as often as any. (A rotation, as the earlier runs used, keeps the cyclic
    /// order: one setup then always follows another, and a gateway judging two setups' requests
    /// finds its caches warm for the second — 0.133 against 0.160 ms inside it.)
    pub fn order(setups: &[Self], n: usize) -> Vec<Self> {
        let mut order = setups.to_vec();
        let mut state = n as u64;
        // Fisher-Yates over splitmix64.
        for i in (1..order.len()).rev() {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            let j = (z % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        order
    }

    /// How the report names it.
    pub fn label(self) -> &'static str {
        match self {
            Self::NoAdmission => "no admission webhook",
            Self::Vap => "in-process ValidatingAdmissionPolicy",
            Self::NoopWebhook => "gateway as a no-op webhook",
            Self::Judging => "Suture judging (pack + impact)",
            Self::Baseline => "Suture judging, baseline",
        }
    }

    /// The service account (`namespace`, `name`) whose requests only this setup's admission
    /// matches; `None` for the judged operator.
    fn account(self) -> Option<(&'static str, &'static str)> {
        match self {
            Self::NoAdmission => Some((gateway::NAMESPACE, "bench-none")),
            Self::Vap => Some((gateway::NAMESPACE, "bench-vap")),
            Self::NoopWebhook => Some((gateway::NAMESPACE, "bench-noop")),
            Self::Baseline => Some((OPERATORS, "bench-baseline")),
            Self::Judging => None,
        }
    }
}

/// The namespace of the judged operators ([`gateway::JUDGED`]): the baseline's identity is one
/// more operator there, judged by the pack like them.
const OPERATORS: &str = "e2e-operators";

/// `system:serviceaccount:<namespace>:<name>` of `setup`'s identity (empty for the judged
/// operator's, which the install names).
pub fn username(setup: Setup) -> String {
    setup
        .account()
        .map(|(namespace, name)| format!("system:serviceaccount:{namespace}:{name}"))
        .unwrap_or_default()
}

/// Request-only rules comparable to what the pack checks, as kube-apiserver runs them itself:
/// quorum on scale, Recreate and `:latest` on Deployments, labelled pods and system namespaces on
/// delete; each matched to `bench-vap` alone.
const VAP_RULES: &str = r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bench-statefulset-quorum, labels: {suture.dev/bench: vap}}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: ["*"], operations: [UPDATE], resources: [statefulsets, statefulsets/scale]}
  matchConditions:
  - {name: bench-vap, expression: "request.userInfo.username == 'system:serviceaccount:suture-system:bench-vap'"}
  validations:
  - {expression: "object.spec.replicas >= 3 || object.spec.replicas >= oldObject.spec.replicas", message: "scaling below quorum"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bench-deployments, labels: {suture.dev/bench: vap}}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [deployments]}
  matchConditions:
  - {name: bench-vap, expression: "request.userInfo.username == 'system:serviceaccount:suture-system:bench-vap'"}
  validations:
  - {expression: "object.spec.?strategy.?type.orValue('RollingUpdate') != 'Recreate' || object.spec.?replicas.orValue(1) <= 1", message: "Recreate stops every replica"}
  - {expression: "object.spec.template.spec.containers.all(c, has(c.image) && !c.image.endsWith(':latest'))", message: "pin images"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bench-deletes, labels: {suture.dev/bench: vap}}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["*"], operations: [DELETE], resources: [pods, namespaces, persistentvolumeclaims]}
  matchConditions:
  - {name: bench-vap, expression: "request.userInfo.username == 'system:serviceaccount:suture-system:bench-vap'"}
  validations:
  - {expression: "oldObject.metadata.?labels[?'app'].orValue('') != 'db'", message: "database pods stay"}
  - {expression: "!(request.name in ['default', 'kube-system', 'kube-public'])", message: "system namespaces stay"}
  - {expression: "request.resource.resource != 'persistentvolumeclaims'", message: "claims stay"}
"#;

const VAP_NAMES: [&str; 3] = ["bench-statefulset-quorum", "bench-deployments", "bench-deletes"];

/// The label of the policies: the judging gateway leaves them out
/// (`--cluster-policy-selector=!suture.dev/bench`), as kube-apiserver enforces them itself.
pub const BENCH_LABEL: &str = "suture.dev/bench";

fn bindings() -> String {
    VAP_NAMES
        .iter()
        .map(|name| {
            format!(
                "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\n\
                 metadata: {{name: {name}, labels: {{{BENCH_LABEL}: vap}}}}\n\
                 spec: {{policyName: {name}, validationActions: [Deny]}}\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// The name of the no-op twin's webhook configuration.
const NOOP_WEBHOOK: &str = "suture-bench-noop";

/// The name of the baseline build's webhook configuration.
const BASELINE_WEBHOOK: &str = "suture-bench-baseline";

/// Where the twins of the judging gateway serve (base URLs, `/validate` appended).
#[derive(Debug, Clone, Copy)]
pub struct Twins<'a> {
    /// The `--noop` twin.
    pub noop: &'a str,
    /// The baseline build judging, when one is timed.
    pub baseline: Option<&'a str>,
}

/// The clients of every setup, with the setups in force.
pub struct Routes {
    clients: Vec<(Setup, kube::Client)>,
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let setups: Vec<Setup> = self.clients.iter().map(|(setup, _)| *setup).collect();
        f.debug_struct("Routes").field("setups", &setups).finish()
    }
}

/// The delay after which the no-op webhook, which admits everything, is taken to be in force:
/// kube-apiserver's informers apply a configuration in milliseconds.
const UNOBSERVABLE_SETTLE: Duration = Duration::from_secs(2);

impl Routes {
    /// Creates the setups' accounts and puts every setup in force, beside the install's webhook
    /// (judging `operator`'s requests): a copy of it pointed at the no-op twin (`urls.noop`)
    /// for `bench-noop`, another pointed at the baseline build (`urls.baseline`, when given)
    /// for `bench-baseline`, the policies for `bench-vap`. Returns once the judging and VAP
    /// setups are observed in force (a dry-run scale of `db` in `namespace` below quorum
    /// refused), and the no-op settled.
    pub async fn install(
        cluster: &Cluster,
        operator: &Operator,
        urls: Twins<'_>,
        namespace: &str,
    ) -> anyhow::Result<Self> {
        let mut clients = vec![(Setup::Judging, operator.client.clone())];
        for setup in Setup::timed(urls.baseline.is_some()) {
            if let Some((account_namespace, account)) = setup.account() {
                let identity = scene::operator(cluster, account_namespace, account).await?;
                clients.push((setup, identity.client));
            }
        }
        let routes = Self { clients };
        put_webhook_copy(cluster, NOOP_WEBHOOK, Setup::NoopWebhook, urls.noop).await?;
        if let Some(baseline) = urls.baseline {
            put_webhook_copy(cluster, BASELINE_WEBHOOK, Setup::Baseline, baseline).await?;
        }
        scene::apply(cluster, &format!("{VAP_RULES}---\n{}", bindings()))?;
        routes
            .until_probe(Setup::Vap, namespace, Answer::RefusedWith("scaling below quorum"))
            .await?;
        for judging in [Setup::Judging, Setup::Baseline] {
            if routes.has(judging) {
                routes
                    .until_probe(judging, namespace, Answer::RefusedWith("SafetyPolicy 'suture-"))
                    .await?;
            }
        }
        for setup in [Setup::NoAdmission, Setup::NoopWebhook] {
            routes.until_probe(setup, namespace, Answer::Admitted).await?;
        }
        tokio::time::sleep(UNOBSERVABLE_SETTLE).await;
        Ok(routes)
    }

    /// Whether `setup` is timed.
    pub fn has(&self, setup: Setup) -> bool {
        self.clients.iter().any(|(s, _)| *s == setup)
    }

    /// The setups timed, in report order.
    pub fn setups(&self) -> Vec<Setup> {
        Setup::ALL.into_iter().filter(|s| self.has(*s)).collect()
    }

    /// The client whose requests `setup` judges.
    pub fn client(&self, setup: Setup) -> anyhow::Result<&kube::Client> {
        self.clients
            .iter()
            .find(|(s, _)| *s == setup)
            .map(|(_, client)| client)
            .ok_or_else(|| anyhow::anyhow!("no client for {}", setup.label()))
    }

    /// Removes the twins' configurations and the policies (the install stays as it was).
    pub async fn remove(&self, cluster: &Cluster) -> anyhow::Result<()> {
        let api = Api::<ValidatingWebhookConfiguration>::all(cluster.client.clone());
        for name in [NOOP_WEBHOOK, BASELINE_WEBHOOK] {
            if api.get_opt(name).await?.is_some() {
                api.delete(name, &DeleteParams::default()).await?;
            }
        }
        let mut args = vec![
            "delete",
            "validatingadmissionpolicybinding,validatingadmissionpolicy",
        ];
        args.extend(VAP_NAMES);
        args.push("--ignore-not-found");
        scene::kubectl(cluster, &args, None)?;
        Ok(())
    }

    /// Waits until a dry-run scale of `db` to one replica by `setup`'s identity gets `answer`.
    async fn until_probe(&self, setup: Setup, namespace: &str, answer: Answer<'_>) -> anyhow::Result<()> {
        let sets: Api<StatefulSet> = Api::namespaced(self.client(setup)?.clone(), namespace);
        let down = json!({"spec": {"replicas": 1}});
        let dry = PatchParams::default().dry_run();
        scene::until_answered(&format!("{} to be in force", setup.label()), answer, || {
            let (sets, dry, down) = (sets.clone(), dry.clone(), down.clone());
            async move { sets.patch_scale("db", &dry, &Patch::Merge(&down)).await }
        })
        .await
    }
}

/// A copy (`name`) of the install's judging webhook, pointed at `url` and matched to `setup`'s
/// identity alone (the install's own protect webhook is left out).
async fn put_webhook_copy(cluster: &Cluster, name: &str, setup: Setup, url: &str) -> anyhow::Result<()> {
    let api = Api::<ValidatingWebhookConfiguration>::all(cluster.client.clone());
    let install = api.get(gateway::WEBHOOK).await?;
    let mut hook = install
        .webhooks
        .unwrap_or_default()
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("the install's webhook configuration has no webhook"))?;
    hook.name = format!("{}.bench.suture.dev", name.trim_start_matches("suture-bench-"));
    hook.client_config.url = Some(format!("{url}/validate"));
    hook.match_conditions = Some(vec![
        k8s_openapi::api::admissionregistration::v1::MatchCondition {
            name: name.to_owned(),
            expression: format!("request.userInfo.username == '{}'", username(setup)),
        },
    ]);
    let config = ValidatingWebhookConfiguration {
        metadata: kube::core::ObjectMeta {
            name: Some(name.to_owned()),
            ..kube::core::ObjectMeta::default()
        },
        webhooks: Some(vec![hook]),
    };
    match api.get_opt(name).await? {
        Some(_) => {
            let patch = json!({"webhooks": config.webhooks});
            api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
        }
        None => {
            api.create(&PostParams::default(), &config).await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_setup_precedes_each_other_as_often_as_it_follows_and_takes_every_place() {
        for baseline in [false, true] {
            let setups = Setup::timed(baseline);
            let iterations = 5000;
            let orders: Vec<Vec<Setup>> = (0..iterations).map(|n| Setup::order(&setups, n)).collect();
            for order in &orders {
                let mut sorted = order.clone();
                sorted.sort();
                assert_eq!(sorted, setups, "a permutation: {order:?}");
            }
            let place = |order: &Vec<Setup>, setup| order.iter().position(|s| *s == setup);
            for a in &setups {
                for b in &setups {
                    if a == b {
                        continue;
                    }
                    let before = orders.iter().filter(|o| place(o, *a) < place(o, *b)).count();
                    assert!(
                        (2250..=2750).contains(&before),
                        "{a:?} before {b:?} in {before} of {iterations}"
                    );
                }
                let fair = iterations / setups.len();
                for position in 0..setups.len() {
                    let there = orders.iter().filter(|o| o[position] == *a).count();
                    assert!(
                        there.abs_diff(fair) < fair / 10,
                        "{a:?} at {position} in {there} of {iterations}"
                    );
                }
            }
            assert_eq!(Setup::order(&setups, 7), Setup::order(&setups, 7));
        }
        assert!(!Setup::timed(false).contains(&Setup::Baseline));
        assert_eq!(Setup::timed(true).len(), Setup::ALL.len());
    }

    #[test]
    fn each_bench_account_is_one_the_install_never_judges() {
        let judged = |user: &str| {
            gateway::JUDGED
                .iter()
                .any(|account| user == format!("system:serviceaccount:{}", account.replace('/', ":")))
        };
        for setup in [Setup::NoAdmission, Setup::Vap, Setup::NoopWebhook] {
            let user = username(setup);
            assert!(user.starts_with("system:serviceaccount:suture-system:"), "{user}");
        }
        for setup in Setup::ALL {
            assert!(!judged(&username(setup)), "{setup:?}");
        }
        assert!(VAP_RULES.contains(&username(Setup::Vap)));
    }

    #[test]
    fn the_baseline_is_an_operator_beside_the_judged_ones() {
        let namespace = |account: &str| account.split('/').next().unwrap_or_default().to_owned();
        assert!(
            gateway::JUDGED
                .iter()
                .any(|account| namespace(account) == OPERATORS)
        );
        assert_eq!(
            username(Setup::Baseline),
            format!("system:serviceaccount:{OPERATORS}:bench-baseline")
        );
    }

    #[test]
    fn every_policy_object_carries_the_label_the_judging_gateway_leaves_out() {
        let label = format!("{BENCH_LABEL}: vap");
        assert_eq!(VAP_RULES.matches(&label).count(), VAP_NAMES.len());
        assert_eq!(bindings().matches(&label).count(), VAP_NAMES.len());
    }
}
