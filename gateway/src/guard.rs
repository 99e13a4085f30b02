//! Self-protection: the gateway refuses requests that would disable or alter its own webhook
//! configuration or deployment, whoever sends them through the webhook (a compromised or buggy
//! operator must not be able to switch Suture off before doing harm).
//!
//! The protected objects are named after the four settings, with the names `kubectl suture
//! install` gives them: the ValidatingWebhookConfiguration; in the gateway's namespace the
//! Deployment (and its `scale` subresource), and the Service, ServiceAccount and
//! PodDisruptionBudget of the same name, and the TLS Secret `<deployment>-tls`; the Namespace
//! itself; the ClusterRole and ClusterRoleBinding named after the Deployment; the shared ledger's
//! shards (ConfigMaps `suture-ledger-*` in the gateway's namespace: deleting one erases the
//! history the budgets count); and the SafetyPolicy, SafetyPackParams and OperatorProfile
//! CustomResourceDefinitions (deleting one deletes every object of its kind). UPDATE (PATCH arrives as UPDATE) and DELETE of those are refused; so are changes
//! to the gateway's configuration objects ([`PROTECTED_KINDS`]). `status` writes are not (they
//! are how controllers report, and change nothing the gateway depends on). Users in
//! `allowed_users` may change anything.

use policies_cel::Request;

/// The CRDs of the gateway's configuration: deleting one deletes every object of its kind.
pub const SUTURE_CRDS: &[&str] = &[
    "safetypolicies.suture.dev",
    "safetypackparams.suture.dev",
    "operatorprofiles.suture.dev",
];

/// The suffix of the TLS Secret's name after the Deployment's (`suture-gateway-tls`).
pub const TLS_SECRET_SUFFIX: &str = "-tls";

/// The names of the shared ledger's shards, ConfigMaps in the gateway's namespace.
pub const LEDGER_SHARD_PREFIX: &str = crate::ledger::shard::PREFIX;

/// What the gateway protects: its own objects, and who may still change them.
#[derive(Debug, Clone, Default)]
pub struct SelfProtection {
    /// The gateway's namespace.
    pub namespace: String,
    /// The gateway Deployment's name.
    pub deployment: String,
    /// The ValidatingWebhookConfiguration's name.
    pub webhook_configuration: String,
    /// Users allowed to change them anyway (e.g. the installer's identity).
    pub allowed_users: Vec<String>,
}

/// One protected object (or, with `prefixed`, every object whose name starts with `name`): its
/// resource, where it lives, and how a message names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protected {
    /// API group (`""` for the core group).
    pub group: &'static str,
    /// Resource plural.
    pub resource: &'static str,
    /// Its namespace; `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// Its name, or the prefix of the names protected.
    pub name: String,
    /// `name` is a prefix (the ledger's shards, one per replica).
    pub prefixed: bool,
    /// The kind, as messages name it.
    pub kind: &'static str,
}

impl Protected {
    fn cluster(group: &'static str, resource: &'static str, kind: &'static str, name: &str) -> Self {
        Self {
            group,
            resource,
            namespace: None,
            name: name.to_owned(),
            prefixed: false,
            kind,
        }
    }

    fn namespaced(
        group: &'static str,
        resource: &'static str,
        kind: &'static str,
        namespace: &str,
        name: &str,
    ) -> Self {
        Self {
            namespace: Some(namespace.to_owned()),
            ..Self::cluster(group, resource, kind, name)
        }
    }

    /// `Deployment suture-system/suture-gateway`, `ValidatingWebhookConfiguration suture-gateway`,
    /// `ConfigMap suture-system/suture-ledger-*`.
    pub fn describe(&self) -> String {
        let star = if self.prefixed { "*" } else { "" };
        match &self.namespace {
            Some(namespace) => format!("{} {namespace}/{}{star}", self.kind, self.name),
            None => format!("{} {}{star}", self.kind, self.name),
        }
    }

    /// Whether `name` is this object's (or one of them, when prefixed).
    pub fn names(&self, name: &str) -> bool {
        if self.prefixed {
            name.starts_with(&self.name)
        } else {
            name == self.name
        }
    }

    fn is_target_of(&self, request: &Request) -> bool {
        let admission = &request.admission;
        // A cluster-scoped target is named by its resource and name alone: kube-apiserver sends a
        // Namespace's own name as the request's namespace (seen against a real control plane in
        // the e2e suite), and no other cluster-scoped request carries one.
        let namespace_matches = match &self.namespace {
            Some(namespace) => admission.namespace.as_deref() == Some(namespace.as_str()),
            None => true,
        };
        admission.resource.group == self.group
            && admission.resource.resource == self.resource
            && self.names(&admission.name)
            && namespace_matches
    }
}

impl SelfProtection {
    /// Every object the gateway protects, derived from the settings (empty settings protect
    /// nothing of their kind; an empty namespace disables the namespaced protections).
    pub fn protected(&self) -> Vec<Protected> {
        let mut objects = Vec::new();
        if !self.webhook_configuration.is_empty() {
            objects.push(Protected::cluster(
                "admissionregistration.k8s.io",
                "validatingwebhookconfigurations",
                "ValidatingWebhookConfiguration",
                &self.webhook_configuration,
            ));
        }
        if !self.namespace.is_empty() {
            objects.push(Protected::cluster("", "namespaces", "Namespace", &self.namespace));
            // The shared ledger's shards: deleting or rewriting one erases what was disrupted,
            // and with it the budgets `history` keeps.
            objects.push(Protected {
                prefixed: true,
                ..Protected::namespaced(
                    "",
                    "configmaps",
                    "ConfigMap",
                    &self.namespace,
                    LEDGER_SHARD_PREFIX,
                )
            });
        }
        if !self.deployment.is_empty() {
            let (ns, name) = (self.namespace.as_str(), self.deployment.as_str());
            if !ns.is_empty() {
                let secret = format!("{name}{TLS_SECRET_SUFFIX}");
                objects.extend([
                    Protected::namespaced("apps", "deployments", "Deployment", ns, name),
                    Protected::namespaced("", "services", "Service", ns, name),
                    Protected::namespaced("", "serviceaccounts", "ServiceAccount", ns, name),
                    Protected::namespaced("", "secrets", "Secret", ns, &secret),
                    Protected::namespaced("policy", "poddisruptionbudgets", "PodDisruptionBudget", ns, name),
                ]);
            }
            let rbac = "rbac.authorization.k8s.io";
            objects.extend([
                Protected::cluster(rbac, "clusterroles", "ClusterRole", name),
                Protected::cluster(rbac, "clusterrolebindings", "ClusterRoleBinding", name),
            ]);
        }
        if !objects.is_empty() {
            objects.extend(SUTURE_CRDS.iter().map(|crd| {
                Protected::cluster(
                    "apiextensions.k8s.io",
                    "customresourcedefinitions",
                    "CustomResourceDefinition",
                    crd,
                )
            }));
        }
        objects
    }

    /// A cheap pre-check on a request's resource and name, without parsing it: false means
    /// [`check`](Self::check) would certainly pass it. Covers the protected objects and the
    /// [`PROTECTED_KINDS`].
    pub fn may_concern(&self, group: &str, resource: &str, name: &str) -> bool {
        if self.webhook_configuration.is_empty() && self.namespace.is_empty() && self.deployment.is_empty() {
            return false;
        }
        if PROTECTED_KINDS
            .iter()
            .any(|(g, r, _, _)| *g == group && *r == resource)
        {
            return true;
        }
        let named = |expected: &str| !expected.is_empty() && name == expected;
        match (group, resource) {
            ("admissionregistration.k8s.io", "validatingwebhookconfigurations") => {
                named(&self.webhook_configuration)
            }
            ("", "namespaces") => named(&self.namespace),
            ("apps", "deployments")
            | ("", "services")
            | ("", "serviceaccounts")
            | ("policy", "poddisruptionbudgets")
            | ("rbac.authorization.k8s.io", "clusterroles" | "clusterrolebindings") => {
                named(&self.deployment)
            }
            ("", "secrets") => {
                !self.deployment.is_empty()
                    && name.strip_suffix(TLS_SECRET_SUFFIX) == Some(self.deployment.as_str())
            }
            ("apiextensions.k8s.io", "customresourcedefinitions") => SUTURE_CRDS.contains(&name),
            ("", "configmaps") => !self.namespace.is_empty() && name.starts_with(LEDGER_SHARD_PREFIX),
            _ => false,
        }
    }

    /// The denial message when `request` would disable or alter the gateway; `None` otherwise.
    pub fn check(&self, request: &Request) -> Option<String> {
        let operation = request.operation();
        let admission = &request.admission;
        // Status writes report, they change nothing the gateway runs on.
        let subresource = admission.sub_resource.as_deref().unwrap_or("");
        if matches!(subresource, "status" | "finalize") || self.protected().is_empty() {
            return None;
        }
        let target = if operation == "UPDATE" || operation == "DELETE" {
            self.protected()
                .into_iter()
                .find(|p| p.is_target_of(request))
                .map(|p| p.describe())
        } else {
            None
        };
        let target = target.or_else(|| configuration_target(request))?;
        let user = admission.user_info.username.as_deref().unwrap_or("");
        if self.allowed_users.iter().any(|allowed| allowed == user) {
            return None;
        }
        let action = match (operation, subresource) {
            ("DELETE", _) => "deleting".to_owned(),
            ("CREATE", _) => "creating".to_owned(),
            (_, "") => "changing".to_owned(),
            (_, sub) => format!("changing the {sub} of"),
        };
        Some(format!(
            "suture-gateway protects its own objects: {action} {target} would disable or alter the \
             admission gateway, and {} may not do it (only the users given by --protect-allow-user may)",
            if user.is_empty() { "this user" } else { user }
        ))
    }
}

/// Kinds whose every object configures the gateway, and the operations that could weaken it:
/// changing or deleting a SafetyPolicy, or any write of SafetyPackParams (whose
/// `disabledPolicies` switches pack policies off) or of an OperatorProfile (what the estimate
/// knows operators do). Creating a SafetyPolicy only adds judgement.
pub const PROTECTED_KINDS: &[(&str, &str, &str, &[&str])] = &[
    (
        "suture.dev",
        "safetypolicies",
        "SafetyPolicy",
        &["UPDATE", "DELETE"],
    ),
    (
        "suture.dev",
        "safetypackparams",
        "SafetyPackParams",
        &["CREATE", "UPDATE", "DELETE"],
    ),
    // A profile says what a deletion sets off: creating one that replaces a catalog entry, or
    // changing or deleting one, can hide a cascade from the estimate.
    (
        "suture.dev",
        "operatorprofiles",
        "OperatorProfile",
        &["CREATE", "UPDATE", "DELETE"],
    ),
];

/// `SafetyPolicy suture-quorum` when `request` writes one of the [`PROTECTED_KINDS`].
fn configuration_target(request: &Request) -> Option<String> {
    let admission = &request.admission;
    let operation = request.operation();
    PROTECTED_KINDS
        .iter()
        .find(|(group, resource, _, operations)| {
            admission.resource.group == *group
                && admission.resource.resource == *resource
                && operations.contains(&operation)
        })
        .map(|(_, _, kind, _)| format!("{kind} {}", admission.name))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use serde_json::{Value, json};

    fn guard() -> SelfProtection {
        SelfProtection {
            namespace: "suture-system".into(),
            deployment: "suture-gateway".into(),
            webhook_configuration: "suture-gateway".into(),
            allowed_users: vec!["system:serviceaccount:flux-system:suture-installer".into()],
        }
    }

    /// An AdmissionReview as kube-apiserver sends it (the shape of the captured fixtures in
    /// ../shared/fixtures/admission-reviews).
    #[allow(clippy::too_many_arguments)]
    fn review(
        operation: &str,
        (group, version, resource, kind): (&str, &str, &str, &str),
        sub_resource: Option<&str>,
        namespace: Option<&str>,
        name: &str,
        user: &str,
        object: Value,
    ) -> Request {
        let api_version = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        let mut body = json!({
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": resource},
            "requestKind": {"group": group, "version": version, "kind": kind},
            "requestResource": {"group": group, "version": version, "resource": resource},
            "name": name,
            "operation": operation,
            "userInfo": {
                "username": user,
                "uid": "88069ee9-25ae-4c22-a69c-f7a860673a14",
                "groups": ["system:serviceaccounts", "system:authenticated"]
            },
            "dryRun": false
        });
        if let Some(ns) = namespace {
            body["namespace"] = json!(ns);
        }
        if let Some(sub) = sub_resource {
            body["subResource"] = json!(sub);
            body["requestSubResource"] = json!(sub);
        }
        let meta =
            json!({"name": name, "namespace": namespace, "uid": "0b1e3d3c-5d4f-4c39-9f8e-6b0b4a1f0c11"});
        let object = if object.is_null() {
            json!({"apiVersion": api_version, "kind": kind, "metadata": meta})
        } else {
            object
        };
        match operation {
            "DELETE" => {
                body["oldObject"] = object;
                body["object"] = Value::Null;
                body["options"] = json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "propagationPolicy": "Background"});
            }
            "UPDATE" => {
                body["oldObject"] = object.clone();
                body["object"] = object;
                body["options"] = json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"});
            }
            _ => {
                body["object"] = object;
                body["options"] = json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"});
            }
        }
        Request::from_review(json!({
            "kind": "AdmissionReview",
            "apiVersion": "admission.k8s.io/v1",
            "request": body
        }))
        .unwrap()
    }

    const OPERATOR: &str = "system:serviceaccount:ops:operator";
    const DEPLOYMENTS: (&str, &str, &str, &str) = ("apps", "v1", "deployments", "Deployment");
    const WEBHOOKS: (&str, &str, &str, &str) = (
        "admissionregistration.k8s.io",
        "v1",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
    );

    #[test]
    fn deleting_the_webhook_configuration_is_refused_with_its_name() {
        let webhook = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "suture-gateway", "uid": "c9d6d8f2-1111-4c39-9f8e-6b0b4a1f0c11"},
            "webhooks": [{
                "name": "validate.suture.dev",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "clientConfig": {"service": {"namespace": "suture-system", "name": "suture-gateway", "path": "/validate"}}
            }]
        });
        let request = review(
            "DELETE",
            WEBHOOKS,
            None,
            None,
            "suture-gateway",
            OPERATOR,
            webhook.clone(),
        );
        let message = guard().check(&request).unwrap();
        assert_eq!(
            message,
            "suture-gateway protects its own objects: deleting ValidatingWebhookConfiguration \
             suture-gateway would disable or alter the admission gateway, and \
             system:serviceaccount:ops:operator may not do it (only the users given by \
             --protect-allow-user may)"
        );
        let update = review(
            "UPDATE",
            WEBHOOKS,
            None,
            None,
            "suture-gateway",
            OPERATOR,
            webhook,
        );
        assert!(
            guard()
                .check(&update)
                .unwrap()
                .contains("changing ValidatingWebhookConfiguration suture-gateway")
        );
    }

    #[test]
    fn other_webhook_configurations_are_not_protected() {
        let request = review(
            "DELETE",
            WEBHOOKS,
            None,
            None,
            "cert-manager-webhook",
            OPERATOR,
            Value::Null,
        );
        assert_eq!(guard().check(&request), None);
    }

    #[test]
    fn the_ledger_shards_are_protected_in_the_gateways_namespace_only() {
        const CONFIGMAPS: (&str, &str, &str, &str) = ("", "v1", "configmaps", "ConfigMap");
        let shard = |operation: &str, namespace: &str, name: &str| {
            let request = review(
                operation,
                CONFIGMAPS,
                None,
                Some(namespace),
                name,
                OPERATOR,
                Value::Null,
            );
            let concerned = guard().may_concern("", "configmaps", name);
            (concerned, guard().check(&request))
        };
        let (concerned, refused) = shard(
            "DELETE",
            "suture-system",
            "suture-ledger-suture-gateway-7d9f-x2k4p",
        );
        assert!(concerned);
        let message = refused.unwrap();
        assert!(
            message.contains("deleting ConfigMap suture-system/suture-ledger-* would disable or alter"),
            "{message}"
        );
        assert!(shard("UPDATE", "suture-system", "suture-ledger-a").1.is_some());
        assert_eq!(
            shard("DELETE", "shop", "suture-ledger-a").1,
            None,
            "another namespace's"
        );
        assert_eq!(shard("DELETE", "suture-system", "settings"), (false, None));
    }

    #[test]
    fn the_deployment_and_its_scale_are_protected_but_not_its_status() {
        let g = guard();
        let scale = json!({
            "apiVersion": "autoscaling/v1", "kind": "Scale",
            "metadata": {"name": "suture-gateway", "namespace": "suture-system"},
            "spec": {"replicas": 0}
        });
        let scale_down = review(
            "UPDATE",
            DEPLOYMENTS,
            Some("scale"),
            Some("suture-system"),
            "suture-gateway",
            OPERATOR,
            scale,
        );
        let message = g.check(&scale_down).unwrap();
        assert!(
            message.contains("changing the scale of Deployment suture-system/suture-gateway"),
            "{message}"
        );
        let delete = review(
            "DELETE",
            DEPLOYMENTS,
            None,
            Some("suture-system"),
            "suture-gateway",
            OPERATOR,
            Value::Null,
        );
        assert!(
            g.check(&delete)
                .unwrap()
                .contains("deleting Deployment suture-system/suture-gateway")
        );
        let status = review(
            "UPDATE",
            DEPLOYMENTS,
            Some("status"),
            Some("suture-system"),
            "suture-gateway",
            OPERATOR,
            Value::Null,
        );
        assert_eq!(g.check(&status), None);
    }

    #[test]
    fn same_names_elsewhere_and_creates_pass() {
        let g = guard();
        let elsewhere = review(
            "DELETE",
            DEPLOYMENTS,
            None,
            Some("default"),
            "suture-gateway",
            OPERATOR,
            Value::Null,
        );
        assert_eq!(g.check(&elsewhere), None);
        let other = review(
            "DELETE",
            DEPLOYMENTS,
            None,
            Some("suture-system"),
            "other",
            OPERATOR,
            Value::Null,
        );
        assert_eq!(g.check(&other), None);
        let create = review(
            "CREATE",
            DEPLOYMENTS,
            None,
            Some("suture-system"),
            "suture-gateway",
            OPERATOR,
            Value::Null,
        );
        assert_eq!(g.check(&create), None);
    }

    #[test]
    fn service_secret_namespace_rbac_and_crd_are_protected() {
        let g = guard();
        let cases = [
            (
                ("", "v1", "services", "Service"),
                Some("suture-system"),
                "suture-gateway",
                "Service suture-system/suture-gateway",
            ),
            (
                ("", "v1", "secrets", "Secret"),
                Some("suture-system"),
                "suture-gateway-tls",
                "Secret suture-system/suture-gateway-tls",
            ),
            (
                ("", "v1", "serviceaccounts", "ServiceAccount"),
                Some("suture-system"),
                "suture-gateway",
                "ServiceAccount suture-system/suture-gateway",
            ),
            (
                ("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget"),
                Some("suture-system"),
                "suture-gateway",
                "PodDisruptionBudget suture-system/suture-gateway",
            ),
            (
                ("", "v1", "namespaces", "Namespace"),
                None,
                "suture-system",
                "Namespace suture-system",
            ),
            // As kube-apiserver sends it: the Namespace's own name as the request's namespace.
            (
                ("", "v1", "namespaces", "Namespace"),
                Some("suture-system"),
                "suture-system",
                "Namespace suture-system",
            ),
            (
                ("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole"),
                None,
                "suture-gateway",
                "ClusterRole suture-gateway",
            ),
            (
                (
                    "rbac.authorization.k8s.io",
                    "v1",
                    "clusterrolebindings",
                    "ClusterRoleBinding",
                ),
                None,
                "suture-gateway",
                "ClusterRoleBinding suture-gateway",
            ),
            (
                (
                    "apiextensions.k8s.io",
                    "v1",
                    "customresourcedefinitions",
                    "CustomResourceDefinition",
                ),
                None,
                "safetypolicies.suture.dev",
                "CustomResourceDefinition safetypolicies.suture.dev",
            ),
            (
                (
                    "apiextensions.k8s.io",
                    "v1",
                    "customresourcedefinitions",
                    "CustomResourceDefinition",
                ),
                None,
                "safetypackparams.suture.dev",
                "CustomResourceDefinition safetypackparams.suture.dev",
            ),
            (
                ("suture.dev", "v1alpha1", "safetypolicies", "SafetyPolicy"),
                None,
                "suture-statefulset-quorum",
                "SafetyPolicy suture-statefulset-quorum",
            ),
            (
                ("suture.dev", "v1alpha1", "safetypackparams", "SafetyPackParams"),
                None,
                "default",
                "SafetyPackParams default",
            ),
        ];
        for (resource, namespace, name, described) in cases {
            let request = review("DELETE", resource, None, namespace, name, OPERATOR, Value::Null);
            let message = g
                .check(&request)
                .unwrap_or_else(|| panic!("{described} not protected"));
            assert!(message.contains(&format!("deleting {described} ")), "{message}");
        }
        let other_secret = review(
            "DELETE",
            ("", "v1", "secrets", "Secret"),
            None,
            Some("suture-system"),
            "db-password",
            OPERATOR,
            Value::Null,
        );
        assert_eq!(g.check(&other_secret), None);
    }

    #[test]
    fn pack_params_may_not_be_created_but_safety_policies_may() {
        let g = guard();
        let params = ("suture.dev", "v1alpha1", "safetypackparams", "SafetyPackParams");
        let body = json!({
            "apiVersion": "suture.dev/v1alpha1", "kind": "SafetyPackParams",
            "metadata": {"name": "quiet"},
            "spec": {"disabledPolicies": ["suture-statefulset-quorum"]}
        });
        let create = review("CREATE", params, None, None, "quiet", OPERATOR, body);
        let message = g.check(&create).unwrap();
        assert!(
            message.contains("creating SafetyPackParams quiet would disable"),
            "{message}"
        );
        let policy = ("suture.dev", "v1alpha1", "safetypolicies", "SafetyPolicy");
        let create = review("CREATE", policy, None, None, "stricter", OPERATOR, Value::Null);
        assert_eq!(g.check(&create), None);
        let update = review("UPDATE", policy, None, None, "stricter", OPERATOR, Value::Null);
        assert!(
            g.check(&update)
                .unwrap()
                .contains("changing SafetyPolicy stricter")
        );
    }

    #[test]
    fn the_pre_check_covers_everything_check_refuses() {
        let g = guard();
        for object in g.protected() {
            assert!(
                g.may_concern(object.group, object.resource, &object.name),
                "{}",
                object.describe()
            );
        }
        for (group, resource, _, _) in PROTECTED_KINDS {
            assert!(g.may_concern(group, resource, "anything"));
        }
        assert!(!g.may_concern("apps", "deployments", "web"));
        assert!(!g.may_concern("", "secrets", "suture-gateway"));
        assert!(!g.may_concern("", "pods", "suture-gateway"));
        assert!(!SelfProtection::default().may_concern("suture.dev", "safetypolicies", "x"));
    }

    #[test]
    fn allowed_users_may_change_everything() {
        let request = review(
            "DELETE",
            DEPLOYMENTS,
            None,
            Some("suture-system"),
            "suture-gateway",
            "system:serviceaccount:flux-system:suture-installer",
            Value::Null,
        );
        assert_eq!(guard().check(&request), None);
    }

    #[test]
    fn empty_settings_protect_nothing() {
        let request = review(
            "DELETE",
            DEPLOYMENTS,
            None,
            Some("suture-system"),
            "suture-gateway",
            OPERATOR,
            Value::Null,
        );
        assert_eq!(SelfProtection::default().check(&request), None);
        assert!(SelfProtection::default().protected().is_empty());
    }

    #[test]
    fn a_captured_review_of_an_unprotected_deployment_passes() {
        // The real kube-apiserver capture: DELETE of wh/sa-made by a service account.
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/fixtures/admission-reviews/deployment-DELETE-serviceaccount-attempt1.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("skipping: {} is absent", path.display());
            return;
        };
        let mut review: Value = serde_json::from_str(&text).unwrap();
        let request = Request::from_review(review.clone()).unwrap();
        assert_eq!(guard().check(&request), None);
        // The same request aimed at the gateway's Deployment is refused.
        review["request"]["namespace"] = json!("suture-system");
        review["request"]["name"] = json!("suture-gateway");
        let request = Request::from_review(review).unwrap();
        let message = guard().check(&request).unwrap();
        assert!(
            message.contains("Deployment suture-system/suture-gateway"),
            "{message}"
        );
        assert!(message.contains("system:serviceaccount:wh:ci-bot"), "{message}");
    }
}
