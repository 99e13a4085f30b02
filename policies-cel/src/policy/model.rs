//! The internal policy model: what `evaluate()` reads, whatever format a policy came from.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::MatchResources;
use serde::Serialize;

use crate::cel::{AuthorizerMode, DEFAULT_COST_LIMIT, Program};
use crate::policy::{ParamObjects, SourceRef};

/// Where a policy came from; it decides which fields may be set and how it is bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum PolicyKind {
    /// `admissionregistration.k8s.io/v1` ValidatingAdmissionPolicy, judged through bindings.
    ValidatingAdmissionPolicy,
    /// `suture.dev/v1alpha1` SafetyPolicy: self-bound, scoped by subjects, with its own action.
    SafetyPolicy,
}

/// How a failed validation is enforced (binding `validationActions` / SafetyPolicy `action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Action {
    Deny,
    Warn,
    Audit,
}

/// What happens when an expression cannot be evaluated (Kubernetes default: Fail).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum FailurePolicy {
    #[default]
    Fail,
    Ignore,
}

/// A named, compiled expression: a matchCondition or a composited variable.
#[derive(Debug, Clone)]
pub struct NamedExpr {
    pub name: String,
    pub program: Arc<Program>,
}

impl crate::cel::VariablePrograms for Vec<NamedExpr> {
    fn program(&self, index: usize) -> Option<&Program> {
        self.get(index).map(|v| &*v.program)
    }

    fn count(&self) -> usize {
        self.len()
    }
}

/// A matchCondition: the request is judged only when every condition is true.
pub type MatchCondition = NamedExpr;

/// One validation: `expression` must be true; otherwise `message` (or `messageExpression`).
#[derive(Debug, Clone)]
pub struct Validation {
    pub program: Arc<Program>,
    pub message: Option<String>,
    pub message_expression: Option<Arc<Program>>,
    /// Kubernetes `reason` (Unauthorized, Forbidden, Invalid, RequestEntityTooLarge); default Invalid.
    pub reason: Option<String>,
}

/// An audit annotation: `valueExpression` yields a string (or null to skip) under `key`.
#[derive(Debug, Clone)]
pub struct AuditAnnotation {
    pub key: String,
    pub value_expression: Arc<Program>,
}

/// Whose requests a SafetyPolicy judges. Patterns accept `*` wildcards; exclusions win.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Subjects {
    pub users: Vec<String>,
    pub groups: Vec<String>,
    /// `namespace/name` patterns, e.g. `databases/*` or `*/postgres-operator`.
    pub service_accounts: Vec<String>,
    pub exclude_users: Vec<String>,
    pub exclude_groups: Vec<String>,
    pub exclude_service_accounts: Vec<String>,
    /// Never judge the control plane's own identities ([`crate::control_plane`]).
    pub exclude_control_plane: bool,
}

/// A compiled policy from either format.
#[derive(Debug, Clone)]
pub struct Policy {
    pub name: String,
    pub kind: PolicyKind,
    pub source: SourceRef,
    /// Which requests the policy is about (absent = everything).
    pub match_constraints: Option<MatchResources>,
    pub match_conditions: Vec<MatchCondition>,
    /// Composited variables in declaration order; `variables.<name>` in CEL.
    pub variables: Vec<NamedExpr>,
    pub validations: Vec<Validation>,
    pub audit_annotations: Vec<AuditAnnotation>,
    pub failure_policy: FailurePolicy,
    /// `paramKind` as (apiVersion, kind), when the policy takes params.
    pub param_kind: Option<(String, String)>,
    /// SafetyPolicy only: whose requests it judges (None = everyone).
    pub subjects: Option<Subjects>,
    /// SafetyPolicy only: its action(s). VAPs take actions from bindings.
    pub actions: Vec<Action>,
    /// True when any expression reads `impact` (the estimate is then computed for matching requests).
    pub uses_impact: bool,
    /// SafetyPolicy only: the escape-hatch annotation (see `SafetyPolicySpec::allow_annotation`).
    pub allow_annotation: Option<String>,
    /// The severity it declares for reports (`suture.dev/severity`: critical, high, medium,
    /// low or info).
    pub severity: Option<String>,
}

/// How a binding selects params (`paramRef`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ParamRefSpec {
    pub name: Option<String>,
    pub namespace: Option<String>,
    /// `matchLabels` of `paramRef.selector` (matchExpressions are applied too, see `selector`).
    pub selector: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
    /// `Deny` (default) or `Allow`.
    pub parameter_not_found_action_deny: bool,
}

/// A `ValidatingAdmissionPolicyBinding`.
#[derive(Debug, Clone)]
pub struct Binding {
    pub name: String,
    pub policy_name: String,
    pub source: SourceRef,
    pub validation_actions: Vec<Action>,
    pub match_resources: Option<MatchResources>,
    pub param_ref: Option<ParamRefSpec>,
}

/// Everything `evaluate()` needs: compiled policies, their bindings and parameter objects.
#[derive(Debug, Clone, Default)]
pub struct PolicySet {
    pub policies: Vec<Arc<Policy>>,
    pub bindings: Vec<Binding>,
    /// Parameter objects (from `--params` files or the cluster), as JSON objects (and their CEL
    /// values, converted once per set).
    pub params: ParamObjects,
    /// Offline: a VAP without any binding is treated as bound to everything with action Deny.
    pub implicit_bindings: bool,
    /// What operators do for their custom kinds: the built-in catalog and the loaded
    /// OperatorProfiles (a set built by hand has none).
    pub profiles: crate::operators::Profiles,
    /// How expressions are evaluated (authorizer answers, budgets).
    pub options: EvalOptions,
}

/// Knobs of evaluation that are not part of any policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvalOptions {
    /// How the offline `authorizer` answers.
    pub authorizer: AuthorizerMode,
    /// Cost budget for one policy evaluation (all its expressions together).
    pub cost_limit: u64,
    /// Wall-clock budget for one policy evaluation.
    pub time_limit: Option<Duration>,
}

impl Default for EvalOptions {
    fn default() -> Self {
        Self {
            authorizer: AuthorizerMode::default(),
            cost_limit: DEFAULT_COST_LIMIT,
            time_limit: None,
        }
    }
}

impl Policy {
    /// Every compiled expression of the policy: matchConditions, variables, validations and
    /// their messages, audit annotations.
    pub fn programs(&self) -> impl Iterator<Item = &Program> {
        fn named(e: &NamedExpr) -> &Program {
            &e.program
        }
        self.match_conditions
            .iter()
            .map(named)
            .chain(self.variables.iter().map(named))
            .chain(
                self.validations
                    .iter()
                    .flat_map(|v| std::iter::once(&*v.program).chain(v.message_expression.as_deref())),
            )
            .chain(self.audit_annotations.iter().map(|a| &*a.value_expression))
    }

    /// True when some expression calls the `history` library (the gateway then keeps a ledger
    /// for the set).
    pub fn uses_history(&self) -> bool {
        self.programs().any(|p| p.uses(crate::cel::Root::History))
    }
}

impl PolicySet {
    /// True when some policy of the set reads `history`.
    pub fn uses_history(&self) -> bool {
        self.policies.iter().any(|p| p.uses_history())
    }

    /// The number of policies of either kind.
    pub fn len(&self) -> usize {
        self.policies.len()
    }

    /// True when the set holds no policy.
    pub fn is_empty(&self) -> bool {
        self.policies.is_empty()
    }

    /// Looks a policy up by name.
    pub fn policy(&self, name: &str) -> Option<&Arc<Policy>> {
        self.policies.iter().find(|p| p.name == name)
    }

    /// The bindings that name `policy` (a ValidatingAdmissionPolicy's; a SafetyPolicy binds
    /// itself and is named by none).
    pub fn bindings_naming<'a, 'p>(
        &'a self,
        policy: &'p Policy,
    ) -> impl Iterator<Item = &'a Binding> + use<'a, 'p> {
        self.bindings.iter().filter(move |b| b.policy_name == policy.name)
    }
}
