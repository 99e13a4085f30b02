//! A compiled OperatorProfile: its expressions checked and compiled when it is loaded (a mistake
//! names the file, line and field, as a policy's does), ready for the estimate to run.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use crate::cel::{Env, ExprType, Program};
use crate::operators::spec::{CascadeRule, DeletionRule, IntentRule, OperatorProfile};
use crate::policy::LoadError;
use crate::policy::context::{Ctx, Report, required_name};
use crate::policy::path::FieldPath;

/// What an operator does for one custom kind.
#[derive(Debug, Clone)]
pub struct Profile {
    /// `metadata.name`: a file or cluster object of the same name replaces a catalog entry.
    pub name: String,
    /// Who acts (`Argo CD`).
    pub operator: String,
    /// Where the behaviour is documented.
    pub references: Vec<String>,
    pub group: String,
    pub kind: String,
    /// Finalizers the operator acts on.
    pub finalizers: Vec<String>,
    /// Field paths the model keeps of the kind, split at dots.
    pub keep: Vec<Vec<String>>,
    pub deletion: Vec<Deletion>,
    pub intents: Vec<Intent>,
}

/// A compiled [`DeletionRule`].
#[derive(Debug, Clone)]
pub struct Deletion {
    pub name: String,
    /// The operations that set the rule off (`DELETE`, `CREATE`, `UPDATE`).
    pub operations: Vec<&'static str>,
    pub when: Option<Arc<Program>>,
    pub cascade: Vec<Cascade>,
    pub external: Option<Arc<Program>>,
}

/// A compiled [`CascadeRule`].
#[derive(Debug, Clone)]
pub struct Cascade {
    pub reason: Arc<Program>,
    pub objects: Option<Arc<Program>>,
    pub labels: Option<Arc<Program>>,
    pub namespaces: Option<Arc<Program>>,
    pub names: Option<Arc<Program>>,
}

/// A compiled [`IntentRule`].
#[derive(Debug, Clone)]
pub struct Intent {
    pub name: String,
    pub when: Option<Arc<Program>>,
    pub target: Arc<Program>,
    pub min_replicas: Arc<Program>,
    pub max_replicas: Option<Arc<Program>>,
    pub reason: Arc<Program>,
}

impl Profile {
    /// True when the profile names a group pattern (`*`, `*.upbound.io`) or every kind (`*`)
    /// rather than one kind.
    pub fn is_pattern(&self) -> bool {
        self.group.starts_with('*') || self.kind == "*"
    }

    /// True when the profile's resource covers `group`/`kind`.
    pub fn covers(&self, group: &str, kind: &str) -> bool {
        let group_matches = match self.group.strip_prefix('*') {
            Some("") => true,
            Some(suffix) => group.ends_with(suffix),
            None => self.group == group,
        };
        group_matches && (self.kind == "*" || self.kind == kind)
    }

    /// True when `finalizer` is one the operator acts on (`name`, or `name/...`).
    pub fn explains(&self, finalizer: &str) -> bool {
        self.finalizers.iter().any(|own| {
            finalizer == own
                || finalizer
                    .strip_prefix(own.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    }
}

/// What an expression must evaluate to.
#[derive(Debug, Clone, Copy)]
enum Returns {
    Bool,
    String,
    Int,
    List,
    Map,
}

impl Returns {
    fn accepts(self, t: &ExprType) -> bool {
        matches!(t, ExprType::Dyn | ExprType::Error)
            || match self {
                Returns::Bool => *t == ExprType::Bool,
                Returns::String => *t == ExprType::String,
                Returns::Int => *t == ExprType::Int,
                Returns::List => matches!(t, ExprType::List(_)),
                Returns::Map => matches!(t, ExprType::Map(..)),
            }
    }

    fn describe(self) -> &'static str {
        match self {
            Returns::Bool => "bool",
            Returns::String => "string",
            Returns::Int => "int",
            Returns::List => "a list",
            Returns::Map => "a map",
        }
    }
}

/// Compiles one profile's expressions, reporting every problem at its field.
struct Compiler<'c, 'r> {
    ctx: &'c Ctx<'c>,
    report: &'r mut Report,
    env: Env,
}

impl Compiler<'_, '_> {
    fn compile(&mut self, rel: &FieldPath, source: &str, returns: Returns) -> Option<Arc<Program>> {
        if source.trim().is_empty() {
            let error = self.ctx.invalid(rel, "Required value: an expression is needed");
            self.report.errors.push(error);
            return None;
        }
        match self.env.compile(source) {
            Ok(program) if !returns.accepts(program.result_type()) => {
                self.report.errors.push(LoadError::ResultType {
                    at: self.ctx.at(rel),
                    field: self.ctx.path(rel).to_string(),
                    mismatch: Box::new(crate::policy::TypeMismatch {
                        expression: source.to_owned(),
                        expected: returns.describe(),
                        found: program.result_type().to_string(),
                    }),
                });
                None
            }
            Ok(program) => Some(Arc::new(program)),
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

    fn optional(
        &mut self,
        rel: &FieldPath,
        source: Option<&String>,
        returns: Returns,
    ) -> Option<Arc<Program>> {
        source.and_then(|source| self.compile(rel, source, returns))
    }

    fn invalid(&mut self, rel: &FieldPath, message: impl Into<String>) {
        let error = self.ctx.invalid(rel, message);
        self.report.errors.push(error);
    }

    fn unique(&mut self, rel: &FieldPath, name: &str, seen: &mut HashSet<String>) {
        if name.is_empty() {
            self.invalid(rel, "Required value: a name is needed");
        } else if !seen.insert(name.to_owned()) {
            self.invalid(rel, format!("Duplicate value: {name:?}"));
        }
    }

    fn deletion(&mut self, at: &FieldPath, rule: &DeletionRule, seen: &mut HashSet<String>) -> Deletion {
        self.unique(&at.key("name"), &rule.name, seen);
        let mut operations = Vec::new();
        for (i, operation) in rule.operations.iter().enumerate() {
            match operation.as_str() {
                "DELETE" => operations.push("DELETE"),
                "CREATE" => operations.push("CREATE"),
                "UPDATE" => operations.push("UPDATE"),
                other => self.invalid(
                    &at.key("operations").index(i),
                    format!(
                        "Unsupported value: {other:?}: supported values: \"DELETE\", \"CREATE\", \"UPDATE\""
                    ),
                ),
            }
        }
        if operations.is_empty() {
            operations.push("DELETE");
        }
        let when = self.optional(&at.key("when"), rule.when.as_ref(), Returns::Bool);
        let cascade = rule
            .cascade
            .iter()
            .enumerate()
            .filter_map(|(i, c)| self.cascade(&at.key("cascade").index(i), c))
            .collect();
        let external = self.optional(&at.key("external"), rule.external.as_ref(), Returns::List);
        if rule.cascade.is_empty() && rule.external.is_none() {
            self.invalid(at, "Required value: a deletion rule needs cascade or external");
        }
        Deletion {
            name: rule.name.clone(),
            operations,
            when,
            cascade,
            external,
        }
    }

    fn cascade(&mut self, at: &FieldPath, rule: &CascadeRule) -> Option<Cascade> {
        if rule.objects.is_none() && rule.labels.is_none() && rule.names.is_none() {
            self.invalid(
                at,
                "Required value: a cascade selects by objects, labels or names",
            );
        }
        if rule.labels.is_some() && rule.namespaces.is_none() {
            self.invalid(
                &at.key("namespaces"),
                "Required value: a selection by labels names the namespaces it selects in",
            );
        }
        let reason = self.compile(&at.key("reason"), &rule.reason, Returns::String);
        let objects = self.optional(&at.key("objects"), rule.objects.as_ref(), Returns::List);
        let labels = self.optional(&at.key("labels"), rule.labels.as_ref(), Returns::Map);
        let namespaces = self.optional(&at.key("namespaces"), rule.namespaces.as_ref(), Returns::List);
        let names = self.optional(&at.key("names"), rule.names.as_ref(), Returns::Map);
        Some(Cascade {
            reason: reason?,
            objects,
            labels,
            namespaces,
            names,
        })
    }

    fn intent(&mut self, at: &FieldPath, rule: &IntentRule, seen: &mut HashSet<String>) -> Option<Intent> {
        self.unique(&at.key("name"), &rule.name, seen);
        let when = self.optional(&at.key("when"), rule.when.as_ref(), Returns::Bool);
        let target = self.compile(&at.key("target"), &rule.target, Returns::Map);
        let min_replicas = self.compile(&at.key("minReplicas"), &rule.min_replicas, Returns::Int);
        let max_replicas = self.optional(&at.key("maxReplicas"), rule.max_replicas.as_ref(), Returns::Int);
        let reason = self.compile(&at.key("reason"), &rule.reason, Returns::String);
        Some(Intent {
            name: rule.name.clone(),
            when,
            target: target?,
            min_replicas: min_replicas?,
            max_replicas,
            reason: reason?,
        })
    }
}

/// A field path written with dots (`status.inventory.entries`), checked.
fn keep_path(text: &str) -> Option<Vec<String>> {
    let parts: Vec<String> = text.split('.').map(str::to_owned).collect();
    (!parts.iter().any(String::is_empty)).then_some(parts)
}

/// Reads an OperatorProfile into a [`Profile`], compiling its expressions.
pub(crate) fn profile(ctx: &Ctx<'_>, value: &Value, report: &mut Report) -> Option<Profile> {
    let object: OperatorProfile = ctx.decode(value, report)?;
    let errors_before = report.errors.len();
    let name = required_name(ctx, object.metadata.name.as_ref(), report);
    let spec = object.spec;
    let at = FieldPath::root().key("spec");
    let mut compiler = Compiler {
        ctx,
        report,
        // Only Suture compiles profiles: the newest environment, and literals that build records
        // of mixed fields (`{'id': ..., 'dataLoss': true}`).
        env: Env::admission_at(crate::cel::KubernetesVersion::NEWEST).with_mixed_literals(),
    };
    if spec.operator.trim().is_empty() {
        compiler.invalid(
            &at.key("operator"),
            "Required value: the operator's name is needed",
        );
    }
    if spec.resource.kind.is_empty() {
        compiler.invalid(
            &at.key("resource").key("kind"),
            "Required value: a kind is needed",
        );
    }
    let pattern = spec.resource.group.starts_with('*') || spec.resource.kind == "*";
    if pattern && spec.finalizers.is_empty() {
        compiler.invalid(
            &at.key("finalizers"),
            "Required value: a profile of a group pattern or of every kind applies to the objects carrying its finalizers, and names at least one",
        );
    }
    if spec.resource.group.starts_with('*')
        && spec.resource.group != "*"
        && !spec.resource.group.starts_with("*.")
    {
        compiler.invalid(
            &at.key("resource").key("group"),
            format!(
                "Invalid value: {:?}: a group, `*`, or `*.` and a suffix",
                spec.resource.group
            ),
        );
    }
    let mut keep = Vec::new();
    for (i, text) in spec.keep.iter().enumerate() {
        match keep_path(text) {
            Some(path) => keep.push(path),
            None => compiler.invalid(
                &at.key("keep").index(i),
                format!("Invalid value: {text:?}: a field path like `spec.scaleTargetRef`"),
            ),
        }
    }
    let mut seen = HashSet::new();
    let deletion = spec
        .deletion
        .iter()
        .enumerate()
        .map(|(i, rule)| compiler.deletion(&at.key("deletion").index(i), rule, &mut seen))
        .collect();
    let mut seen = HashSet::new();
    let intents = spec
        .intents
        .iter()
        .enumerate()
        .filter_map(|(i, rule)| compiler.intent(&at.key("intents").index(i), rule, &mut seen))
        .collect();
    let name = name?;
    (report.errors.len() == errors_before).then(|| Profile {
        name,
        operator: spec.operator,
        references: spec.references,
        group: spec.resource.group,
        kind: spec.resource.kind,
        finalizers: spec.finalizers,
        keep,
        deletion,
        intents,
    })
}
