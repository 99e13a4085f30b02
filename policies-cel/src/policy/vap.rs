//! `admissionregistration.k8s.io/v1` ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding,
//! read with the real `k8s-openapi` types and checked as the API server checks them.

use k8s_openapi::api::admissionregistration::v1::{
    ParamRef, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
};
use serde_json::Value;

use crate::policy::body::{self, Parts};
use crate::policy::context::{Ctx, Report, WarningKind, required_name};
use crate::policy::path::FieldPath;
use crate::policy::{Action, Binding, ParamRefSpec, Policy, PolicyKind};

/// The group/version both kinds are read as.
pub const API_VERSION: &str = "admissionregistration.k8s.io/v1";
/// Older versions with the same schema, read as v1 (with a warning).
pub(crate) const OLDER_API_VERSIONS: [&str; 1] = ["admissionregistration.k8s.io/v1beta1"];

/// Reads a ValidatingAdmissionPolicy into the model, compiling its expressions.
pub(crate) fn policy(ctx: &Ctx<'_>, value: &Value, report: &mut Report) -> Option<Policy> {
    let vap: ValidatingAdmissionPolicy = ctx.decode(value, report)?;
    let errors_before = report.errors.len();
    let name = required_name(ctx, vap.metadata.name.as_ref(), report);
    let severity = crate::policy::severity::declared(ctx, vap.metadata.annotations.as_ref(), report);
    let spec_at = FieldPath::root().key("spec");
    let Some(spec) = vap.spec else {
        report
            .errors
            .push(ctx.invalid(&spec_at, "Required value: a policy needs a spec"));
        return None;
    };

    let failure_policy = body::failure_policy(
        ctx,
        &spec_at.key("failurePolicy"),
        spec.failure_policy.as_deref(),
        report,
    );
    let param_kind = body::param_kind(ctx, &spec_at.key("paramKind"), spec.param_kind, report);
    let parts = Parts {
        match_conditions: spec.match_conditions.as_deref().unwrap_or_default(),
        variables: spec.variables.as_deref().unwrap_or_default(),
        validations: spec.validations.as_deref().unwrap_or_default(),
        audit_annotations: spec.audit_annotations.as_deref().unwrap_or_default(),
    };
    let body = body::compile(ctx, &spec_at, parts, report);
    let (name, body) = (name?, body?);
    if body.uses_impact || body.uses_cluster || body.uses_history {
        let what = if body.uses_impact {
            "impact"
        } else if body.uses_cluster {
            "cluster"
        } else {
            "history"
        };
        report.warnings.push(ctx.warning(
            WarningKind::SutureExtension,
            &spec_at,
            &format!(
                "`{what}` is a Suture extension: a Kubernetes API server would reject this ValidatingAdmissionPolicy (write a SafetyPolicy instead)"
            ),
        ));
    }
    (report.errors.len() == errors_before).then(|| Policy {
        name,
        kind: PolicyKind::ValidatingAdmissionPolicy,
        source: ctx.object_ref(),
        match_constraints: spec.match_constraints,
        match_conditions: body.match_conditions,
        variables: body.variables,
        validations: body.validations,
        audit_annotations: body.audit_annotations,
        failure_policy,
        param_kind,
        subjects: None,
        actions: Vec::new(),
        uses_impact: body.uses_impact,
        allow_annotation: None,
        severity,
    })
}

/// Reads a ValidatingAdmissionPolicyBinding into the model.
pub(crate) fn binding(ctx: &Ctx<'_>, value: &Value, report: &mut Report) -> Option<Binding> {
    let vapb: ValidatingAdmissionPolicyBinding = ctx.decode(value, report)?;
    let errors_before = report.errors.len();
    let name = required_name(ctx, vapb.metadata.name.as_ref(), report);
    let spec_at = FieldPath::root().key("spec");
    let Some(spec) = vapb.spec else {
        report
            .errors
            .push(ctx.invalid(&spec_at, "Required value: a binding needs a spec"));
        return None;
    };
    let policy_name = match spec.policy_name {
        Some(policy_name) if !policy_name.is_empty() => Some(policy_name),
        _ => {
            report
                .errors
                .push(ctx.invalid(&spec_at.key("policyName"), "Required value"));
            None
        }
    };
    let actions_at = spec_at.key("validationActions");
    let validation_actions = actions(ctx, &actions_at, spec.validation_actions.as_deref(), report);
    if validation_actions.is_empty() && report.errors.len() == errors_before {
        report.errors.push(ctx.invalid(
            &actions_at,
            "Required value: at least one of Deny, Warn, Audit (Deny and Warn may not be used together)",
        ));
    }
    let param_ref = spec
        .param_ref
        .and_then(|param_ref| self::param_ref(ctx, &spec_at.key("paramRef"), param_ref, report));
    let (name, policy_name) = (name?, policy_name?);
    (report.errors.len() == errors_before).then(|| Binding {
        name,
        policy_name,
        source: ctx.object_ref(),
        validation_actions,
        match_resources: spec.match_resources,
        param_ref,
    })
}

/// Parses a list of actions as Kubernetes validates `validationActions`: known values, no
/// duplicates, never Deny together with Warn.
pub(crate) fn actions(
    ctx: &Ctx<'_>,
    at: &FieldPath,
    values: Option<&[String]>,
    report: &mut Report,
) -> Vec<Action> {
    let mut actions = Vec::new();
    for (i, value) in values.unwrap_or_default().iter().enumerate() {
        let action = match value.as_str() {
            "Deny" => Action::Deny,
            "Warn" => Action::Warn,
            "Audit" => Action::Audit,
            other => {
                let message = format!("Unsupported value: `{other}`: supported values: Deny, Warn, Audit");
                report.errors.push(ctx.invalid(&at.index(i), message));
                continue;
            }
        };
        if actions.contains(&action) {
            report
                .errors
                .push(ctx.invalid(&at.index(i), format!("Duplicate value: `{value}`")));
            continue;
        }
        actions.push(action);
    }
    if actions.contains(&Action::Deny) && actions.contains(&Action::Warn) {
        report.errors.push(ctx.invalid(
            at,
            "Invalid value: Deny and Warn may not be used together (Deny already tells the client why)",
        ));
    }
    actions
}

fn param_ref(
    ctx: &Ctx<'_>,
    at: &FieldPath,
    param_ref: ParamRef,
    report: &mut Report,
) -> Option<ParamRefSpec> {
    let errors_before = report.errors.len();
    let name = param_ref.name.filter(|n| !n.is_empty());
    match (&name, &param_ref.selector) {
        (Some(_), Some(_)) => {
            report.errors.push(ctx.invalid(
                &at.key("selector"),
                "Forbidden: name and selector are mutually exclusive",
            ));
        }
        (None, None) => {
            report
                .errors
                .push(ctx.invalid(at, "Required value: one of name or selector is needed"));
        }
        _ => {}
    }
    let deny = match param_ref.parameter_not_found_action.as_deref() {
        None | Some("Deny") => true,
        Some("Allow") => false,
        Some(other) => {
            let message = format!("Unsupported value: `{other}`: supported values: Allow, Deny");
            report
                .errors
                .push(ctx.invalid(&at.key("parameterNotFoundAction"), message));
            true
        }
    };
    (report.errors.len() == errors_before).then(|| ParamRefSpec {
        name,
        namespace: param_ref.namespace.filter(|n| !n.is_empty()),
        selector: param_ref.selector,
        parameter_not_found_action_deny: deny,
    })
}
