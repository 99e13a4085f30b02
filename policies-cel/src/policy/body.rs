//! The part both formats share: matchConditions, variables, validations and auditAnnotations,
//! checked as the Kubernetes API server checks them and compiled against the right environment.
//!
//! Environments follow Kubernetes: a variable sees only the variables declared before it;
//! validations, messageExpressions and auditAnnotations see all of them; matchConditions see none.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::admissionregistration::v1 as k8s;

use crate::cel::{Env, ExprType, Program, Root};
use crate::policy::LoadError;
use crate::policy::TypeMismatch;
use crate::policy::context::{Ctx, Report};
use crate::policy::path::FieldPath;
use crate::policy::{AuditAnnotation, FailurePolicy, MatchCondition, NamedExpr, Validation};

/// The expressions of a policy, as written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parts<'a> {
    pub(crate) match_conditions: &'a [k8s::MatchCondition],
    pub(crate) variables: &'a [k8s::Variable],
    pub(crate) validations: &'a [k8s::Validation],
    pub(crate) audit_annotations: &'a [k8s::AuditAnnotation],
}

/// The expressions of a policy, compiled.
#[derive(Debug, Default)]
pub(crate) struct Body {
    pub(crate) match_conditions: Vec<MatchCondition>,
    pub(crate) variables: Vec<NamedExpr>,
    pub(crate) validations: Vec<Validation>,
    pub(crate) audit_annotations: Vec<AuditAnnotation>,
    /// Some expression reads `impact`.
    pub(crate) uses_impact: bool,
    /// Some expression reads `cluster`.
    pub(crate) uses_cluster: bool,
    /// Some expression reads `history`.
    pub(crate) uses_history: bool,
}

const REASONS: [&str; 4] = ["Unauthorized", "Forbidden", "Invalid", "RequestEntityTooLarge"];

/// Checks and compiles `parts`, found under `spec` of the object. Problems go to `report`; the
/// body is returned only when there were none.
pub(crate) fn compile(
    ctx: &Ctx<'_>,
    spec: &FieldPath,
    parts: Parts<'_>,
    report: &mut Report,
) -> Option<Body> {
    let errors_before = report.errors.len();
    let mut compiler = Compiler {
        ctx,
        report,
        body: Body::default(),
    };

    if parts.validations.is_empty() && parts.audit_annotations.is_empty() {
        let error = ctx.invalid(
            &spec.key("validations"),
            "Required value: at least one of validations or auditAnnotations is needed",
        );
        compiler.report.errors.push(error);
    }

    let mut seen = HashMap::new();
    for (i, condition) in parts.match_conditions.iter().enumerate() {
        let at = spec.key("matchConditions").index(i);
        compiler.check_name(
            &at.key("name"),
            &condition.name,
            &mut seen,
            is_qualified_name,
            "a qualified name",
        );
        let program = compiler.compile(
            &Env::admission_at(ctx.version),
            &at.key("expression"),
            &condition.expression,
            Returns::Bool,
        );
        if let Some(program) = program {
            compiler.body.match_conditions.push(NamedExpr {
                name: condition.name.clone(),
                program,
            });
        }
    }

    let mut env = Env::admission_at(ctx.version);
    let mut seen = HashMap::new();
    for (i, variable) in parts.variables.iter().enumerate() {
        let at = spec.key("variables").index(i);
        compiler.check_name(
            &at.key("name"),
            &variable.name,
            &mut seen,
            is_cel_identifier,
            "a CEL identifier",
        );
        let program = compiler.compile(&env, &at.key("expression"), &variable.expression, Returns::Any);
        // Later expressions see the variable with its expression's type, as Kubernetes
        // declares it (so `'n: ' + variables.count` is refused when `count` is an int).
        let declared = program
            .as_ref()
            .map_or(ExprType::Dyn, |p| p.result_type().clone());
        if let Some(program) = program {
            compiler.body.variables.push(NamedExpr {
                name: variable.name.clone(),
                program,
            });
        }
        env.declare_typed_variable(variable.name.clone(), declared);
    }

    for (i, validation) in parts.validations.iter().enumerate() {
        let at = spec.key("validations").index(i);
        let program = compiler.compile(&env, &at.key("expression"), &validation.expression, Returns::Bool);
        let message_expression = validation
            .message_expression
            .as_deref()
            .filter(|text| !text.trim().is_empty())
            .and_then(|text| compiler.compile(&env, &at.key("messageExpression"), text, Returns::String));
        if let Some(message) = &validation.message
            && message.contains(['\n', '\r'])
        {
            let error = ctx.invalid(
                &at.key("message"),
                "Invalid value: message must not contain line breaks",
            );
            compiler.report.errors.push(error);
        }
        if let Some(reason) = &validation.reason
            && !REASONS.contains(&reason.as_str())
        {
            let error = ctx.invalid(
                &at.key("reason"),
                format!(
                    "Unsupported value: `{reason}`: supported values: {}",
                    REASONS.join(", ")
                ),
            );
            compiler.report.errors.push(error);
        }
        if let Some(program) = program {
            compiler.body.validations.push(Validation {
                program,
                message: validation.message.clone().filter(|m| !m.is_empty()),
                message_expression,
                reason: validation.reason.clone(),
            });
        }
    }

    let mut seen = HashMap::new();
    for (i, annotation) in parts.audit_annotations.iter().enumerate() {
        let at = spec.key("auditAnnotations").index(i);
        compiler.check_name(
            &at.key("key"),
            &annotation.key,
            &mut seen,
            is_annotation_key,
            "a valid annotation key",
        );
        let program = compiler.compile(
            &env,
            &at.key("valueExpression"),
            &annotation.value_expression,
            Returns::StringOrNull,
        );
        if let Some(value_expression) = program {
            compiler.body.audit_annotations.push(AuditAnnotation {
                key: annotation.key.clone(),
                value_expression,
            });
        }
    }

    let body = compiler.body;
    (report.errors.len() == errors_before).then_some(body)
}

struct Compiler<'c, 'a> {
    ctx: &'c Ctx<'a>,
    report: &'c mut Report,
    body: Body,
}

impl Compiler<'_, '_> {
    fn compile(
        &mut self,
        env: &Env,
        rel: &FieldPath,
        source: &str,
        returns: Returns,
    ) -> Option<Arc<Program>> {
        if source.trim().is_empty() {
            let error = self.ctx.invalid(rel, "Required value: an expression is needed");
            self.report.errors.push(error);
            return None;
        }
        match env.compile(source) {
            Ok(program) if !returns.accepts(program.result_type()) => {
                self.report.errors.push(LoadError::ResultType {
                    at: self.ctx.at(rel),
                    field: self.ctx.path(rel).to_string(),
                    mismatch: Box::new(TypeMismatch {
                        expression: source.to_owned(),
                        expected: returns.describe(),
                        found: program.result_type().to_string(),
                    }),
                });
                None
            }
            Ok(program) => {
                self.body.uses_impact |= program.uses(Root::Impact);
                self.body.uses_cluster |= program.uses(Root::Cluster);
                self.body.uses_history |= program.uses(Root::History);
                Some(Arc::new(program))
            }
            Err(error) => {
                self.report.errors.push(LoadError::Compile {
                    at: self.ctx.at(rel),
                    field: self.ctx.path(rel).to_string(),
                    rendered: error.render(),
                    error: Box::new(error),
                });
                None
            }
        }
    }

    /// A name (matchCondition, variable) or key (auditAnnotation): required, well formed, unique.
    fn check_name(
        &mut self,
        at: &FieldPath,
        name: &str,
        seen: &mut HashMap<String, usize>,
        valid: fn(&str) -> bool,
        what: &str,
    ) {
        let name_at = at;
        if name.is_empty() {
            self.report
                .errors
                .push(self.ctx.invalid(name_at, "Required value"));
            return;
        }
        if !valid(name) {
            let error = self
                .ctx
                .invalid(name_at, format!("Invalid value: `{name}` is not {what}"));
            self.report.errors.push(error);
        }
        if let Some(first) = seen.get(name) {
            let error = self.ctx.invalid(
                name_at,
                format!("Duplicate value: `{name}` (also on line {first})"),
            );
            self.report.errors.push(error);
        } else {
            seen.insert(name.to_owned(), self.ctx.at(name_at).line);
        }
    }
}

/// `failurePolicy`: Fail (default) or Ignore.
pub(crate) fn failure_policy(
    ctx: &Ctx<'_>,
    rel: &FieldPath,
    value: Option<&str>,
    report: &mut Report,
) -> FailurePolicy {
    match value {
        None | Some("Fail") => FailurePolicy::Fail,
        Some("Ignore") => FailurePolicy::Ignore,
        Some(other) => {
            let message = format!("Unsupported value: `{other}`: supported values: Fail, Ignore");
            report.errors.push(ctx.invalid(rel, message));
            FailurePolicy::Fail
        }
    }
}

/// A CEL identifier usable as `variables.<name>`.
fn is_cel_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A Kubernetes qualified name: an optional DNS-subdomain prefix and `/`, then 1–63 characters of
/// alphanumerics, `-`, `_` and `.`, starting and ending alphanumeric.
fn is_qualified_name(name: &str) -> bool {
    let (prefix, local) = match name.split_once('/') {
        Some((prefix, local)) => (Some(prefix), local),
        None => (None, name),
    };
    let prefix_ok = prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|label| {
                !label.is_empty()
                    && label
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                    && !label.starts_with('-')
                    && !label.ends_with('-')
            })
    });
    prefix_ok && is_annotation_key(local)
}

/// The name part of a qualified name (what an auditAnnotation `key` must be).
fn is_annotation_key(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// `paramKind` as (apiVersion, kind); both are required when the field is present.
pub(crate) fn param_kind(
    ctx: &Ctx<'_>,
    at: &FieldPath,
    param_kind: Option<k8s::ParamKind>,
    report: &mut Report,
) -> Option<(String, String)> {
    let param_kind = param_kind?;
    match (param_kind.api_version, param_kind.kind) {
        (Some(api_version), Some(kind)) if !api_version.is_empty() && !kind.is_empty() => {
            Some((api_version, kind))
        }
        (api_version, _) => {
            let missing = if api_version.is_none_or(|v| v.is_empty()) {
                "apiVersion"
            } else {
                "kind"
            };
            report
                .errors
                .push(ctx.invalid(&at.key(missing), "Required value"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_cel_identifier("replicas_2"));
        assert!(!is_cel_identifier("2x"));
        assert!(!is_cel_identifier("a-b"));
        assert!(is_qualified_name("example.com/only-sa"));
        assert!(is_qualified_name("only-sa"));
        assert!(!is_qualified_name("-bad"));
        assert!(!is_qualified_name("Example.com/x"));
        assert!(is_annotation_key("allow-disruption"));
        assert!(!is_annotation_key("a/b"));
    }
}

/// The result types Kubernetes accepts from an expression, by the field that holds it.
#[derive(Debug, Clone, Copy)]
enum Returns {
    /// `validations[].expression`, `matchConditions[].expression`: exactly `bool` (a `dyn`
    /// result such as `object.spec.enabled` is refused, as kube-apiserver refuses it).
    Bool,
    /// `messageExpression`.
    String,
    /// `auditAnnotations[].valueExpression`.
    StringOrNull,
    /// `variables[].expression`.
    Any,
}

impl Returns {
    fn accepts(self, t: &ExprType) -> bool {
        match self {
            Returns::Bool => *t == ExprType::Bool,
            Returns::String => *t == ExprType::String,
            Returns::StringOrNull => matches!(t, ExprType::String | ExprType::Null),
            Returns::Any => true,
        }
    }

    /// As Kubernetes words it.
    fn describe(self) -> &'static str {
        match self {
            Returns::Bool => "bool",
            Returns::String => "string",
            Returns::StringOrNull => "one of [string null_type]",
            Returns::Any => "any type",
        }
    }
}
