//! The declarations an expression is compiled against: root variables, composited variables,
//! and the Kubernetes version whose functions exist.

use crate::cel::{CompileError, ExprType, KubernetesVersion, Program, compile};

/// A root variable of the admission CEL environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Root {
    Object,
    OldObject,
    Request,
    Params,
    NamespaceObject,
    Authorizer,
    /// Suture: the estimated effect of the request on the cluster (computed lazily).
    Impact,
    /// Suture: read-only look-ups into the cluster model.
    Cluster,
    /// Suture: what admitted requests disrupted in a recent window (`history.byRequester('10m')`).
    History,
}

impl Root {
    /// Every root, in a fixed order (the slot order of an activation).
    pub const ALL: [Root; 9] = [
        Root::Object,
        Root::OldObject,
        Root::Request,
        Root::Params,
        Root::NamespaceObject,
        Root::Authorizer,
        Root::Impact,
        Root::Cluster,
        Root::History,
    ];

    /// The CEL identifier.
    pub fn name(self) -> &'static str {
        match self {
            Root::Object => "object",
            Root::OldObject => "oldObject",
            Root::Request => "request",
            Root::Params => "params",
            Root::NamespaceObject => "namespaceObject",
            Root::Authorizer => "authorizer",
            Root::Impact => "impact",
            Root::Cluster => "cluster",
            Root::History => "history",
        }
    }

    /// The root named `name`, if any.
    pub fn from_name(name: &str) -> Option<Root> {
        Root::ALL.into_iter().find(|root| root.name() == name)
    }

    /// The slot of this root in an activation.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// What an expression may refer to: the admission roots, the composited variables declared
/// before it (Kubernetes lets a variable use only earlier ones), and the functions of the
/// Kubernetes version compiled for.
#[derive(Debug, Clone, Default)]
pub struct Env {
    version: KubernetesVersion,
    variables: Vec<String>,
    /// The type of each variable (its expression's, as Kubernetes types them; `dyn` when
    /// unknown).
    variable_types: Vec<ExprType>,
    /// List and map literals may mix types (their elements are then `dyn`): for expressions only
    /// Suture compiles that build records, an OperatorProfile's `{'id': ..., 'dataLoss': true}`.
    /// Kubernetes' admission environment refuses them (homogeneous aggregate literals).
    mixed_literals: bool,
}

impl Env {
    /// The Kubernetes admission environment (plus `impact`, `cluster` and `history`) of the
    /// default version ([`KubernetesVersion::DEFAULT`]), with no variables.
    pub fn admission() -> Self {
        Self::default()
    }

    /// The admission environment of Kubernetes `version`, with no variables.
    pub fn admission_at(version: KubernetesVersion) -> Self {
        Self {
            version,
            ..Self::default()
        }
    }

    /// The Kubernetes version whose functions an expression may call.
    pub fn version(&self) -> KubernetesVersion {
        self.version
    }

    /// This environment with list and map literals that may mix types (see `mixed_literals`).
    pub fn with_mixed_literals(mut self) -> Self {
        self.mixed_literals = true;
        self
    }

    /// True when list and map literals may mix types.
    pub fn mixed_literals(&self) -> bool {
        self.mixed_literals
    }

    /// This environment with `names` declared as `variables.<name>`, in order.
    pub fn with_variables<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.variables = names.into_iter().map(Into::into).collect();
        self.variable_types = vec![ExprType::Dyn; self.variables.len()];
        self
    }

    /// Adds one more composited variable after the existing ones, of type `dyn`.
    pub fn declare_variable(&mut self, name: impl Into<String>) {
        self.declare_typed_variable(name, ExprType::Dyn);
    }

    /// Adds one more composited variable of type `t` (its expression's result type).
    pub fn declare_typed_variable(&mut self, name: impl Into<String>, t: ExprType) {
        self.variables.push(name.into());
        self.variable_types.push(t);
    }

    /// The type of the variable at `index` (`dyn` when out of range).
    pub fn variable_type(&self, index: usize) -> &ExprType {
        self.variable_types.get(index).unwrap_or(&ExprType::Dyn)
    }

    /// The declared composited variables, in order.
    pub fn variables(&self) -> &[String] {
        &self.variables
    }

    /// The index of `variables.<name>`, if declared.
    pub fn variable_index(&self, name: &str) -> Option<usize> {
        self.variables.iter().position(|v| v == name)
    }

    /// Parses, checks and lowers `source` into a program that can be evaluated many times.
    pub fn compile(&self, source: &str) -> Result<Program, CompileError> {
        compile::compile(self, source)
    }
}
