//! The ValidatingWebhookConfiguration (a webhook judging the chosen identities' requests, and
//! one sending changes to the gateway's own objects to its self-protection), and the
//! ValidatingAdmissionPolicy that guards the webhook configuration itself — kube-apiserver never
//! calls webhooks for webhook configurations, but does run in-process policies on them.

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MatchCondition, MatchResources, NamedRuleWithOperations, RuleWithOperations, ServiceReference,
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, ValidatingAdmissionPolicyBindingSpec,
    ValidatingAdmissionPolicySpec, ValidatingWebhook, ValidatingWebhookConfiguration, Validation,
    WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use crate::install::conditions;
use crate::install::names;
use crate::install::options::{InstallOptions, Tls};
use crate::install::rbac::meta;

fn strings(items: &[&str]) -> Option<Vec<String>> {
    Some(items.iter().map(|s| (*s).to_owned()).collect())
}

fn rule(operations: &[&str], groups: &[&str], resources: &[&str], scope: &str) -> RuleWithOperations {
    RuleWithOperations {
        operations: strings(operations),
        api_groups: strings(groups),
        api_versions: strings(&["*"]),
        resources: strings(resources),
        scope: Some(scope.to_owned()),
    }
}

fn client_config(options: &InstallOptions) -> WebhookClientConfig {
    let ca_bundle = match &options.tls {
        Tls::Material(material) => Some(material.ca_pem.as_str()),
        Tls::CaBundle { ca_pem } => Some(ca_pem.as_str()),
        Tls::CertManager { .. } => None,
    };
    let (service, url) = match &options.webhook_url {
        Some(url) => (None, Some(url.validate())),
        None => (
            Some(ServiceReference {
                namespace: options.namespace.clone(),
                name: names::GATEWAY.to_owned(),
                path: Some("/validate".to_owned()),
                port: Some(443),
            }),
            None,
        ),
    };
    WebhookClientConfig {
        service,
        url,
        ca_bundle: ca_bundle.map(|pem| ByteString(pem.as_bytes().to_vec())),
    }
}

fn namespaces(operator: &str, values: Vec<String>) -> LabelSelector {
    LabelSelector {
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: "kubernetes.io/metadata.name".to_owned(),
            operator: operator.to_owned(),
            values: Some(values),
        }]),
        ..LabelSelector::default()
    }
}

/// The rules of the judging webhook: writes to every resource and its `scale`, and evictions.
/// Other subresources (`status`, `exec`...) and CONNECT are never judged by the pack; sending
/// them would only add latency to the controllers' busiest paths.
fn judged_rules() -> Vec<RuleWithOperations> {
    vec![
        rule(&["CREATE", "UPDATE", "DELETE"], &["*"], &["*", "*/scale"], "*"),
        rule(&["CREATE"], &[""], &["pods/eviction"], "Namespaced"),
    ]
}

/// The judging webhook: the chosen identities' requests, outside kube-system and the gateway's
/// own namespace.
fn validate(options: &InstallOptions) -> ValidatingWebhook {
    ValidatingWebhook {
        name: names::VALIDATE_WEBHOOK.to_owned(),
        admission_review_versions: vec!["v1".to_owned()],
        client_config: client_config(options),
        rules: Some(judged_rules()),
        match_policy: Some("Equivalent".to_owned()),
        namespace_selector: Some(namespaces(
            "NotIn",
            vec!["kube-system".to_owned(), options.namespace.clone()],
        )),
        match_conditions: Some(vec![conditions::not_noise(), conditions::identities(options)]),
        failure_policy: Some(options.failure_policy.as_str().to_owned()),
        side_effects: "None".to_owned(),
        timeout_seconds: Some(options.timeout_seconds),
        ..ValidatingWebhook::default()
    }
}

/// The self-protection webhook: the chosen identities' UPDATE/DELETE of the gateway's own
/// objects, by name. Always `Fail`: it never matches a request the gateway's recovery needs (no
/// pods, no controllers, no kube-system, no allowed users), so a down gateway blocks only the
/// requests it exists to refuse.
fn protect(options: &InstallOptions) -> ValidatingWebhook {
    let update_delete = ["UPDATE", "DELETE"];
    let mut match_conditions: Vec<MatchCondition> =
        vec![conditions::own_objects(options), conditions::identities(options)];
    match_conditions.extend(conditions::not_allowed_users(options));
    ValidatingWebhook {
        name: names::PROTECT_WEBHOOK.to_owned(),
        admission_review_versions: vec!["v1".to_owned()],
        client_config: client_config(options),
        rules: Some(vec![
            rule(&update_delete, &[""], &["namespaces"], "Cluster"),
            rule(
                &update_delete,
                &["rbac.authorization.k8s.io"],
                &["clusterroles", "clusterrolebindings"],
                "Cluster",
            ),
            rule(
                &update_delete,
                &["apiextensions.k8s.io"],
                &["customresourcedefinitions"],
                "Cluster",
            ),
            rule(
                &update_delete,
                &["apps"],
                &["deployments", "deployments/scale"],
                "Namespaced",
            ),
            rule(
                &update_delete,
                &[""],
                &["services", "serviceaccounts", "secrets", "configmaps"],
                "Namespaced",
            ),
            rule(
                &update_delete,
                &["policy"],
                &["poddisruptionbudgets"],
                "Namespaced",
            ),
        ]),
        match_policy: Some("Equivalent".to_owned()),
        // Namespaced rules: the gateway's namespace only. Namespaces are matched on their own
        // labels, so this also selects the gateway's Namespace; other cluster-scoped kinds
        // ignore the selector.
        namespace_selector: Some(namespaces("In", vec![options.namespace.clone()])),
        match_conditions: Some(match_conditions),
        failure_policy: Some("Fail".to_owned()),
        side_effects: "None".to_owned(),
        timeout_seconds: Some(options.timeout_seconds),
        ..ValidatingWebhook::default()
    }
}

/// The webhook configuration.
pub fn configuration(options: &InstallOptions) -> ValidatingWebhookConfiguration {
    let mut metadata = meta(names::GATEWAY, None);
    if let Tls::CertManager { .. } = options.tls {
        metadata.annotations = Some(
            [(
                "cert-manager.io/inject-ca-from".to_owned(),
                format!("{}/{}", options.namespace, names::CERTIFICATE),
            )]
            .into(),
        );
    }
    ValidatingWebhookConfiguration {
        metadata,
        webhooks: Some(vec![validate(options), protect(options)]),
    }
}

/// The in-process guard of the webhook configuration: the chosen identities may not change or
/// delete it (webhooks are never called for webhook configurations). It is matched by a
/// condition on the name rather than by `resourceNames`: a deletecollection's objects come
/// unnamed (their name in oldObject), and `resourceNames` would let them through.
pub fn protect_policy(options: &InstallOptions) -> ValidatingAdmissionPolicy {
    let mut match_conditions = vec![
        conditions::targets("the-gateways-webhook-configuration", names::GATEWAY),
        conditions::identities(options),
    ];
    match_conditions.extend(conditions::not_allowed_users(options));
    ValidatingAdmissionPolicy {
        metadata: meta(names::PROTECT_POLICY, None),
        spec: Some(ValidatingAdmissionPolicySpec {
            failure_policy: Some("Fail".to_owned()),
            match_constraints: Some(MatchResources {
                resource_rules: Some(vec![NamedRuleWithOperations {
                    api_groups: strings(&["admissionregistration.k8s.io"]),
                    api_versions: strings(&["*"]),
                    operations: strings(&["UPDATE", "DELETE"]),
                    resources: strings(&["validatingwebhookconfigurations"]),
                    resource_names: None,
                    scope: Some("Cluster".to_owned()),
                }]),
                ..MatchResources::default()
            }),
            match_conditions: Some(match_conditions),
            validations: Some(vec![Validation {
                expression: "false".to_owned(),
                message: Some(format!(
                    "suture-gateway protects its own objects: changing or deleting \
                     ValidatingWebhookConfiguration {} would disable or alter the admission gateway",
                    names::GATEWAY
                )),
                reason: Some("Forbidden".to_owned()),
                ..Validation::default()
            }]),
            ..ValidatingAdmissionPolicySpec::default()
        }),
        ..ValidatingAdmissionPolicy::default()
    }
}

/// Binds the guard, denying.
pub fn protect_binding() -> ValidatingAdmissionPolicyBinding {
    ValidatingAdmissionPolicyBinding {
        metadata: meta(names::PROTECT_POLICY, None),
        spec: Some(ValidatingAdmissionPolicyBindingSpec {
            policy_name: Some(names::PROTECT_POLICY.to_owned()),
            validation_actions: strings(&["Deny"]),
            ..ValidatingAdmissionPolicyBindingSpec::default()
        }),
    }
}
