//! The CEL matchConditions that choose which requests reach the gateway: the operator
//! identities, minus noise no policy judges, minus the users allowed to change the gateway.

use k8s_openapi::api::admissionregistration::v1::MatchCondition;
use policies_cel::control_plane;

use crate::install::names;
use crate::install::options::InstallOptions;

/// A CEL string literal (double-quoted, with `\` and `"` escaped).
fn literal(text: &str) -> String {
    format!(r#""{}""#, text.replace('\\', r"\\").replace('"', r#"\""#))
}

/// A CEL list of string literals.
fn list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|item| literal(item)).collect();
    format!("[{}]", items.join(", "))
}

/// `request.userInfo.username` is one of the chosen identities.
pub fn identities(options: &InstallOptions) -> MatchCondition {
    let mut alternatives = Vec::new();
    if !options.identities.is_empty() {
        alternatives.push(format!(
            "request.userInfo.username in {}",
            list(&options.identities)
        ));
    }
    if options.sends_all_service_accounts() {
        // The control plane's own controllers are left out by identity, not by namespace: a
        // third-party operator installed in kube-system is sent like any other.
        alternatives.push(format!(
            "(request.userInfo.username.startsWith({}) && !(request.userInfo.username in {}) && \
             !request.userInfo.username.startsWith({}))",
            literal("system:serviceaccount:"),
            list(&control_plane::controller_usernames()),
            literal(&format!("system:serviceaccount:{}:", options.namespace)),
        ));
    }
    MatchCondition {
        name: "operator-identities".to_owned(),
        expression: alternatives.join(" || "),
    }
}

/// Not a lease, an event or a review: written constantly by every controller, judged by no policy.
pub fn not_noise() -> MatchCondition {
    MatchCondition {
        name: "not-leases-events-or-reviews".to_owned(),
        expression: concat!(
            r#"!(request.resource.group == "coordination.k8s.io" && request.resource.resource == "leases")"#,
            r#" && !(request.resource.group in ["", "events.k8s.io"] && request.resource.resource == "events")"#,
            r#" && !(request.resource.group in ["authentication.k8s.io", "authorization.k8s.io"])"#,
        )
        .to_owned(),
    }
}

/// Not one of the users the gateway lets change its own objects (they need no judging there).
pub fn not_allowed_users(options: &InstallOptions) -> Option<MatchCondition> {
    (!options.allowed_users.is_empty()).then(|| MatchCondition {
        name: "not-allowed-users".to_owned(),
        expression: format!("!(request.userInfo.username in {})", list(&options.allowed_users)),
    })
}

/// The name of the object a request acts on: `request.name`, or for the objects of a
/// deletecollection — which kube-apiserver sends one DELETE each, unnamed, the object as
/// `oldObject` — the object's own name. (Only DELETEs have an `oldObject` without a name.)
/// kube-apiserver leaves an empty `name` out of `request`: reading `request.name` would fail.
const TARGET_NAME: &str = "(has(request.name) && request.name != \"\" ? request.name : (oldObject != null && has(oldObject.metadata) && has(oldObject.metadata.name) ? oldObject.metadata.name : \"\"))";

/// The request acts on the object named `name` (the objects of a deletecollection, which come
/// unnamed, included).
pub fn targets(condition: &str, name: &str) -> MatchCondition {
    MatchCondition {
        name: condition.to_owned(),
        expression: format!("{TARGET_NAME} == {}", literal(name)),
    }
}

/// The request targets one of the gateway's own objects (the same list as the gateway's
/// `guard`): its Namespace, the Deployment/Service/ServiceAccount/PDB/TLS Secret and the ledger's
/// shards in it, its ClusterRole(Binding) and Suture's CRDs. Namespaced rules are already
/// limited to the gateway's namespace by the webhook's namespaceSelector.
pub fn own_objects(options: &InstallOptions) -> MatchCondition {
    let named = |resources: &[&str], name: &str| {
        let resources: Vec<String> = resources.iter().map(|r| (*r).to_owned()).collect();
        format!(
            "(request.resource.resource in {} && {TARGET_NAME} == {})",
            list(&resources),
            literal(name)
        )
    };
    let alternatives = [
        named(&["namespaces"], &options.namespace),
        named(
            &[
                "deployments",
                "services",
                "serviceaccounts",
                "poddisruptionbudgets",
                "clusterroles",
                "clusterrolebindings",
            ],
            names::GATEWAY,
        ),
        named(&["secrets"], names::TLS_SECRET),
        format!(
            "(request.resource.resource == \"configmaps\" && {TARGET_NAME}.startsWith({}))",
            literal(names::LEDGER_SHARD_PREFIX)
        ),
        format!(
            "(request.resource.resource == \"customresourcedefinitions\" && {TARGET_NAME} in {})",
            list(&names::SUTURE_CRDS.map(str::to_owned))
        ),
    ];
    MatchCondition {
        name: "suture-objects".to_owned(),
        expression: alternatives.join(" || "),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn literals_are_escaped() {
        assert_eq!(literal(r#"say "hi" \ bye"#), r#""say \"hi\" \\ bye""#);
    }

    #[test]
    fn naming_nobody_sends_every_service_account_but_the_control_planes_and_the_gateways() {
        let expression = identities(&InstallOptions::default()).expression;
        assert!(
            expression.starts_with(
                r#"(request.userInfo.username.startsWith("system:serviceaccount:") && !(request.userInfo.username in ["system:serviceaccount:kube-system:attachdetach-controller", "#
            ),
            "{expression}"
        );
        assert!(
            expression.contains(r#""system:serviceaccount:kube-system:generic-garbage-collector""#),
            "{expression}"
        );
        assert!(
            expression.ends_with(
                r#"]) && !request.userInfo.username.startsWith("system:serviceaccount:suture-system:"))"#
            ),
            "{expression}"
        );
        // kube-system as a whole is no longer left out: its other accounts are operators too.
        assert!(!expression.contains(r#"startsWith("system:serviceaccount:kube-system:")"#));
    }

    #[test]
    fn named_identities_only() {
        let options = InstallOptions {
            identities: vec!["system:serviceaccount:ops:operator".into(), "alice".into()],
            ..InstallOptions::default()
        };
        assert_eq!(
            identities(&options).expression,
            r#"request.userInfo.username in ["system:serviceaccount:ops:operator", "alice"]"#
        );
    }

    #[test]
    fn every_condition_compiles_as_cel() {
        let options = InstallOptions {
            identities: vec![r#"we"ird\user"#.into(), "alice".into()],
            all_service_accounts: true,
            allowed_users: vec!["system:serviceaccount:flux-system:kustomize-controller".into()],
            ..InstallOptions::default()
        };
        let env = policies_cel::cel::Env::admission();
        let conditions = [
            identities(&options),
            identities(&InstallOptions::default()),
            not_noise(),
            not_allowed_users(&options).unwrap(),
            own_objects(&options),
        ];
        for condition in conditions {
            env.compile(&condition.expression)
                .unwrap_or_else(|e| panic!("{}: {e}\n{}", condition.name, condition.expression));
        }
    }
}
