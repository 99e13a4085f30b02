//! `suture.dev/v1alpha1` SafetyPolicy: a ValidatingAdmissionPolicy's fields in one cluster-scoped
//! object, plus whose requests it judges (`subjects`) and what a failed validation does (`action`).
//! Its expressions may also read Suture's `impact` and `cluster`. Only Suture compiles them (never
//! kube-apiserver), so they compile for the newest Kubernetes environment Suture knows, whatever
//! version the ValidatingAdmissionPolicies beside them target.
//!
//! The CRD installed in clusters is generated from these types (`crds/safetypolicy.yaml`, kept in
//! sync by a test); the expression fields reuse the `k8s-openapi` types, so the schema and the
//! field documentation are those of ValidatingAdmissionPolicy.

use k8s_openapi::api::admissionregistration::v1::{
    AuditAnnotation, MatchCondition, MatchResources, ParamKind, Validation, Variable,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube_core::CustomResourceExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cel::KubernetesVersion;
use crate::policy::body::{self, Parts};
use crate::policy::context::{Ctx, Report, required_name};
use crate::policy::path::FieldPath;
use crate::policy::{Action, Policy, PolicyKind, Subjects, vap};

/// The group/version of SafetyPolicy.
pub const API_VERSION: &str = "suture.dev/v1alpha1";

/// A safety policy: CEL validations judging the admission requests of chosen subjects (typically
/// operators' service accounts), with access to the estimated impact of each request.
#[derive(
    kube_derive::CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "suture.dev",
    version = "v1alpha1",
    kind = "SafetyPolicy",
    plural = "safetypolicies",
    shortname = "safepol",
    category = "suture",
    doc = "A Suture safety policy: CEL validations over an admission request and its estimated impact on the cluster, enforced for chosen subjects.",
    printcolumn = r#"{"name":"Action","type":"string","jsonPath":".spec.action"}"#,
    printcolumn = r#"{"name":"Failure policy","type":"string","jsonPath":".spec.failurePolicy"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#,
    derive = "PartialEq",
    crates(
        kube_core = "::kube_core",
        k8s_openapi = "::k8s_openapi",
        schemars = "::schemars",
        serde = "::serde",
        serde_json = "::serde_json"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct SafetyPolicySpec {
    /// Whose requests the policy judges. Absent: everyone's. Exclusions win over inclusions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subjects: Option<SafetySubjects>,
    /// What a failed validation does: Deny (default) rejects the request, Warn returns a warning
    /// to the client, Audit records it in the audit log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<SafetyAction>,
    /// Several actions at once (like a binding's validationActions), instead of `action`. Deny
    /// and Warn may not be used together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<SafetyAction>>,
    /// What happens when an expression cannot be evaluated: Fail (default) judges the request
    /// as failing the policy, Ignore lets it through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<SafetyFailurePolicy>,
    /// The escape hatch: an annotation (e.g. `suture.dev/allow-disruption`) that a human sets on
    /// the target object or on its controlling owner, with the reason as its value. A denial of
    /// this policy is then admitted and reported as a warning naming the reason, and recorded as
    /// the audit annotation `<policy>/allowed-by`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_annotation: Option<String>,
    /// The kind of the objects that tune the policy (e.g. `suture.dev/v1alpha1`
    /// `SafetyPolicyParams`). The policy is evaluated once with each loaded object of that kind
    /// as `params`, or once with `params` null when there is none, so its expressions should
    /// give defaults (`params.?spec.?maxObjects.orValue(100)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param_kind: Option<ParamKind>,
    /// Which requests the policy is about (resources, operations, namespaces, objects), as in a
    /// ValidatingAdmissionPolicy. Absent: every request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_constraints: Option<MatchResources>,
    /// CEL conditions that must all be true for the request to be judged. They cannot use
    /// `variables`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_conditions: Option<Vec<MatchCondition>>,
    /// Named CEL expressions, available as `variables.<name>` to later variables and to the
    /// validations, messageExpressions and auditAnnotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Vec<Variable>>,
    /// CEL expressions that must be true; when one is false the policy's action applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validations: Option<Vec<Validation>>,
    /// CEL expressions whose string values are recorded as audit annotations of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_annotations: Option<Vec<AuditAnnotation>>,
}

/// Whose requests a SafetyPolicy judges. With no users, groups or service accounts listed, every
/// requester is judged (except the excluded ones).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SafetySubjects {
    /// Usernames, with `*` wildcards (e.g. `system:serviceaccount:ci:*`, `alice@example.com`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<String>,
    /// Groups, with `*` wildcards (e.g. `system:serviceaccounts:databases`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// Service accounts as `namespace/name`, with `*` wildcards (e.g. `databases/*`,
    /// `*/postgres-operator`, `*/*` for every service account).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub service_accounts: Vec<String>,
    /// Requesters never judged by this policy, even when listed above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude: Option<SafetySubjectsExclude>,
}

/// Requesters a SafetyPolicy never judges.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SafetySubjectsExclude {
    /// Usernames, with `*` wildcards.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub users: Vec<String>,
    /// Groups, with `*` wildcards.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// Service accounts as `namespace/name`, with `*` wildcards (e.g. `kube-system/*`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub service_accounts: Vec<String>,
    /// The Kubernetes control plane's own identities: kube-controller-manager's (and
    /// cloud-controller-manager's) per-controller service accounts in kube-system, the
    /// components' users (`system:kube-controller-manager`, `system:kube-scheduler`...) and nodes.
    /// Other service accounts in kube-system (a third-party operator installed there) stay judged.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub control_plane: bool,
}

/// What a failed validation does: Deny (the default) rejects the request with the validation's
/// message, Warn lets it through with the message as a warning to the client, Audit lets it
/// through and records the failure in the audit log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SafetyAction {
    /// Reject the request with the validation's message.
    Deny,
    /// Let the request through with the message as a warning to the client.
    Warn,
    /// Let the request through and record the failure in the audit log.
    Audit,
}

impl From<SafetyAction> for Action {
    fn from(action: SafetyAction) -> Self {
        match action {
            SafetyAction::Deny => Action::Deny,
            SafetyAction::Warn => Action::Warn,
            SafetyAction::Audit => Action::Audit,
        }
    }
}

/// What happens when an expression cannot be evaluated: Fail (the default) judges the request as
/// failing the policy, Ignore skips the policy for the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SafetyFailurePolicy {
    /// The request is judged as failing the policy.
    Fail,
    /// The policy is skipped for the request.
    Ignore,
}

/// The SafetyPolicy CustomResourceDefinition.
pub fn crd() -> CustomResourceDefinition {
    crate::crds::with_known_formats(SafetyPolicy::crd())
}

/// The CRD as the YAML committed in `policies-cel/crds/safetypolicy.yaml`.
pub fn crd_yaml() -> Result<String, serde_yaml_ng::Error> {
    crate::crds::render(&crd(), "policies-cel/src/policy/safety.rs")
}

/// Reads a SafetyPolicy into the model, compiling its expressions.
pub(crate) fn policy(ctx: &Ctx<'_>, value: &Value, report: &mut Report) -> Option<Policy> {
    let object: SafetyPolicy = ctx.decode(value, report)?;
    let errors_before = report.errors.len();
    let name = required_name(ctx, object.metadata.name.as_ref(), report);
    let severity = crate::policy::severity::declared(ctx, object.metadata.annotations.as_ref(), report);
    let spec_at = FieldPath::root().key("spec");
    let spec = object.spec;

    let actions = match (spec.action, &spec.actions) {
        (Some(_), Some(_)) => {
            let error = ctx.invalid(
                &spec_at.key("actions"),
                "Forbidden: set either action or actions, not both",
            );
            report.errors.push(error);
            Vec::new()
        }
        (Some(action), None) => vec![action.into()],
        (None, Some(actions)) => {
            let names: Vec<String> = actions.iter().map(|a| format!("{a:?}")).collect();
            let parsed = vap::actions(ctx, &spec_at.key("actions"), Some(&names), report);
            if parsed.is_empty() {
                report
                    .errors
                    .push(ctx.invalid(&spec_at.key("actions"), "Required value: at least one action"));
            }
            parsed
        }
        (None, None) => vec![Action::Deny],
    };
    if let Some(key) = &spec.allow_annotation
        && !valid_annotation_key(key)
    {
        let message = format!(
            "Invalid value: {key:?}: an annotation key is an optional DNS prefix and `/`, then a name of at most 63 of [A-Za-z0-9-_.]"
        );
        report
            .errors
            .push(ctx.invalid(&spec_at.key("allowAnnotation"), &message));
    }
    let failure_policy = match spec.failure_policy {
        Some(SafetyFailurePolicy::Ignore) => crate::policy::FailurePolicy::Ignore,
        Some(SafetyFailurePolicy::Fail) | None => crate::policy::FailurePolicy::Fail,
    };
    let subjects = spec
        .subjects
        .map(|s| subjects(ctx, &spec_at.key("subjects"), s, report));
    let parts = Parts {
        match_conditions: spec.match_conditions.as_deref().unwrap_or_default(),
        variables: spec.variables.as_deref().unwrap_or_default(),
        validations: spec.validations.as_deref().unwrap_or_default(),
        audit_annotations: spec.audit_annotations.as_deref().unwrap_or_default(),
    };
    let param_kind = body::param_kind(ctx, &spec_at.key("paramKind"), spec.param_kind, report);
    let newest = Ctx {
        version: KubernetesVersion::NEWEST,
        ..*ctx
    };
    let body = body::compile(&newest, &spec_at, parts, report);
    let (name, body) = (name?, body?);
    (report.errors.len() == errors_before).then(|| Policy {
        name,
        kind: PolicyKind::SafetyPolicy,
        source: ctx.object_ref(),
        match_constraints: spec.match_constraints,
        match_conditions: body.match_conditions,
        variables: body.variables,
        validations: body.validations,
        audit_annotations: body.audit_annotations,
        failure_policy,
        param_kind,
        subjects,
        actions,
        uses_impact: body.uses_impact,
        allow_annotation: spec.allow_annotation,
        severity,
    })
}

/// A Kubernetes annotation key: `[prefix/]name`, name of 1–63 alphanumerics, `-`, `_`, `.`.
fn valid_annotation_key(key: &str) -> bool {
    let name = key
        .rsplit_once('/')
        .map_or(key, |(prefix, name)| if prefix.is_empty() { "" } else { name });
    !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

fn subjects(ctx: &Ctx<'_>, at: &FieldPath, spec: SafetySubjects, report: &mut Report) -> Subjects {
    let exclude = spec.exclude.unwrap_or_default();
    check_service_accounts(ctx, &at.key("serviceAccounts"), &spec.service_accounts, report);
    check_service_accounts(
        ctx,
        &at.key("exclude").key("serviceAccounts"),
        &exclude.service_accounts,
        report,
    );
    Subjects {
        users: spec.users,
        groups: spec.groups,
        service_accounts: spec.service_accounts,
        exclude_users: exclude.users,
        exclude_groups: exclude.groups,
        exclude_service_accounts: exclude.service_accounts,
        exclude_control_plane: exclude.control_plane,
    }
}

fn check_service_accounts(ctx: &Ctx<'_>, at: &FieldPath, patterns: &[String], report: &mut Report) {
    for (i, pattern) in patterns.iter().enumerate() {
        let well_formed = pattern.split_once('/').is_some_and(|(namespace, name)| {
            !namespace.is_empty() && !name.is_empty() && !name.contains('/')
        });
        if !well_formed {
            report.errors.push(ctx.invalid(
                &at.index(i),
                format!("Invalid value: `{pattern}`: expected `namespace/name` with optional `*` wildcards, e.g. `databases/*` or `*/postgres-operator`"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn crd_is_cluster_scoped_and_named() {
        let crd = crd();
        assert_eq!(crd.spec.scope, "Cluster");
        assert_eq!(crd.spec.group, "suture.dev");
        assert_eq!(crd.metadata.name.as_deref(), Some("safetypolicies.suture.dev"));
        let version = &crd.spec.versions[0];
        assert_eq!(version.name, "v1alpha1");
        let schema = serde_json::to_value(&version.schema).unwrap();
        let spec = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"];
        for field in [
            "subjects",
            "action",
            "failurePolicy",
            "matchConstraints",
            "matchConditions",
            "variables",
            "validations",
            "auditAnnotations",
        ] {
            assert!(
                spec.get(field).is_some(),
                "spec.{field} missing from the CRD schema"
            );
        }
    }
}
