//! The loader: files and directories of YAML or JSON, in either policy format, into one
//! [`PolicySet`].
//!
//! Every document is parsed on its own (see [`split_documents`]), decoded into the real
//! Kubernetes types or the SafetyPolicy CRD types, checked and compiled. Problems are collected
//! rather than stopping at the first, so an author sees all of them at once.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::cel::KubernetesVersion;
use crate::policy::context::{Ctx, Report, Warning, WarningKind};
use crate::policy::path::FieldPath;
use crate::policy::read::{self, ParsedDocument, ReadAs};
use crate::policy::{LoadError, PolicySet, SourceRef, safety, vap};

/// Loads policies, bindings and param objects from files, directories and strings.
///
/// ```no_run
/// # fn main() -> Result<(), policies_cel::LoadError> {
/// use policies_cel::policy::Loader;
/// let set = Loader::new().add_path("policies/")?.add_params_path("params.yaml")?.finish()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Loader {
    set: PolicySet,
    /// Where each policy / binding name was first defined.
    policy_sources: HashMap<String, SourceRef>,
    binding_sources: HashMap<String, SourceRef>,
    /// Names of policy documents that failed to load (their bindings are not "unknown").
    broken_policies: HashSet<String>,
    /// Documents of other kinds: param objects if some policy's paramKind names them.
    others: Vec<Other>,
    report: Report,
    /// The text of every matchCondition loaded, each once: identical conditions share it.
    condition_sources: HashSet<Arc<str>>,
    /// OperatorProfiles loaded, and where each name was first defined.
    profiles: Vec<crate::operators::Profile>,
    profile_sources: HashMap<String, SourceRef>,
    /// The loaded profiles extend the built-in catalog (off only to load the catalog itself).
    with_catalog: bool,
    /// The Kubernetes version whose CEL environment expressions compile against.
    version: KubernetesVersion,
}

#[derive(Debug, Clone)]
struct Other {
    at: SourceRef,
    api_version: String,
    kind: String,
    value: Value,
    /// From `add_params_*`: a param object whatever its kind.
    param: bool,
}

/// What the documents of an input are taken as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Policies and bindings (and param objects of a loaded policy's paramKind).
    Policies,
    /// Param objects, whatever their kind (`--params`).
    Params,
}

impl Default for Loader {
    fn default() -> Self {
        Self::new()
    }
}

impl Loader {
    /// An empty loader. Sets it builds have `implicit_bindings` on (the offline semantics: a
    /// ValidatingAdmissionPolicy without a binding is bound to everything with action Deny).
    pub fn new() -> Self {
        Self {
            set: PolicySet {
                implicit_bindings: true,
                ..PolicySet::default()
            },
            policy_sources: HashMap::new(),
            binding_sources: HashMap::new(),
            broken_policies: HashSet::new(),
            others: Vec::new(),
            report: Report::default(),
            condition_sources: HashSet::new(),
            profiles: Vec::new(),
            profile_sources: HashMap::new(),
            with_catalog: true,
            version: KubernetesVersion::DEFAULT,
        }
    }

    /// Loaded OperatorProfiles make the set's profiles alone, without the built-in catalog.
    pub fn without_catalog(mut self) -> Self {
        self.with_catalog = false;
        self
    }

    /// Compiles the expressions of ValidatingAdmissionPolicies for Kubernetes `version`: only the
    /// functions its CEL environment declares exist ([`KubernetesVersion::DEFAULT`] unless set).
    /// SafetyPolicies, which only Suture compiles, get the newest environment. Set it before
    /// adding policies.
    pub fn kubernetes_version(mut self, version: KubernetesVersion) -> Self {
        self.version = version;
        self
    }

    /// Sets `PolicySet::implicit_bindings` of the result (on by default).
    pub fn implicit_bindings(mut self, on: bool) -> Self {
        self.set.implicit_bindings = on;
        self
    }

    /// Loads a file (`.yaml`, `.yml`, `.json`; any name when given directly) or a directory of
    /// them, recursively, in sorted order; other files in directories are ignored. Fails with
    /// every problem found in `path`.
    pub fn add_path(self, path: impl AsRef<Path>) -> Result<Self, LoadError> {
        self.checked(|loader| loader.walk(path.as_ref(), Role::Policies))
    }

    /// Loads policies from text; `name` stands for the file in messages (a name ending in
    /// `.json` is read as one JSON document).
    pub fn add_str(self, name: &str, text: &str) -> Result<Self, LoadError> {
        self.checked(|loader| loader.text(name, text, Role::Policies))
    }

    /// Adds every object of a file or directory to `params`, whatever its kind (`--params`).
    pub fn add_params_path(self, path: impl AsRef<Path>) -> Result<Self, LoadError> {
        self.checked(|loader| loader.walk(path.as_ref(), Role::Params))
    }

    /// Adds every object of `text` to `params`, whatever its kind.
    pub fn add_params_str(self, name: &str, text: &str) -> Result<Self, LoadError> {
        self.checked(|loader| loader.text(name, text, Role::Params))
    }

    /// Warnings so far: `file:line: unknown field `spec.validatons`` and the like.
    pub fn warnings(&self) -> Vec<String> {
        self.report.warnings.iter().map(Warning::to_string).collect()
    }

    /// The loaded set, once documents of other kinds are resolved as params and bindings are
    /// checked against the policies.
    pub fn finish(self) -> Result<PolicySet, LoadError> {
        self.finish_with_warnings().map(|(set, _)| set)
    }

    /// Like [`finish`](Self::finish), also returning the warnings.
    pub fn finish_with_warnings(self) -> Result<(PolicySet, Vec<String>), LoadError> {
        let (set, errors, warnings) = self.finish_lenient();
        match LoadError::from_many(errors) {
            Some(error) => Err(error),
            None => Ok((set, warnings.iter().map(Warning::to_string).collect())),
        }
    }

    /// Adds the policies of `file`'s documents, already read ([`read::documents`]), and keeps
    /// going whatever is wrong (the lint reports it all).
    pub(crate) fn add_documents_lenient(
        &mut self,
        file: &str,
        documents: &[Result<ParsedDocument, LoadError>],
    ) {
        self.documents(file, documents, Role::Policies);
    }

    /// Adds the param objects of `file`'s documents, keeping going whatever is wrong.
    pub(crate) fn add_params_documents_lenient(
        &mut self,
        file: &str,
        documents: &[Result<ParsedDocument, LoadError>],
    ) {
        self.documents(file, documents, Role::Params);
    }

    /// What loaded, every error in file order, and every warning: the set holds the policies and
    /// bindings that had no error.
    pub(crate) fn finish_lenient(mut self) -> (PolicySet, Vec<LoadError>, Vec<Warning>) {
        for other in std::mem::take(&mut self.others) {
            let is_param = other.param
                || self.set.policies.iter().any(|policy| {
                    policy.param_kind.as_ref().is_some_and(|(api_version, kind)| {
                        *api_version == other.api_version && *kind == other.kind
                    })
                });
            if is_param {
                self.set.params.push(other.value);
            } else {
                self.report.errors.push(LoadError::UnknownKind {
                    at: other.at,
                    api_version: other.api_version,
                    kind: other.kind,
                });
            }
        }
        for binding in &self.set.bindings {
            if self.set.policy(&binding.policy_name).is_none()
                && !self.broken_policies.contains(&binding.policy_name)
            {
                self.report.errors.push(LoadError::UnknownPolicy {
                    at: binding.source.clone(),
                    binding: binding.name.clone(),
                    policy: binding.policy_name.clone(),
                });
            }
        }
        let profiles = std::mem::take(&mut self.profiles);
        self.set.profiles = if self.with_catalog {
            crate::operators::catalog().with(profiles)
        } else {
            crate::operators::Profiles::default().with(profiles)
        };
        self.report.errors.sort_by_key(order);
        (self.set, self.report.errors, self.report.warnings)
    }

    /// Runs `add`, failing with the errors it added.
    fn checked(mut self, add: impl FnOnce(&mut Self)) -> Result<Self, LoadError> {
        let before = self.report.errors.len();
        add(&mut self);
        let new = self.report.errors.split_off(before);
        match LoadError::from_many(new) {
            Some(error) => Err(error),
            None => Ok(self),
        }
    }

    /// The files of `path` ([`read::files`]).
    fn walk(&mut self, path: &Path, role: Role) {
        for file in read::files(path) {
            match file {
                Ok((name, text)) => self.text(&name, &text, role),
                Err((path, source)) => self.report.errors.push(LoadError::Io {
                    path,
                    source: Arc::new(source),
                }),
            }
        }
    }

    /// The documents of a file ([`read::documents`]).
    fn text(&mut self, file: &str, text: &str, role: Role) {
        self.documents(file, &read::documents(file, text), role);
    }

    /// The objects of a file's documents; a document that did not parse is an error.
    fn documents(&mut self, file: &str, documents: &[Result<ParsedDocument, LoadError>], role: Role) {
        for document in documents {
            let document = match document {
                Ok(document) => document,
                Err(error) => {
                    self.report.errors.push(error.clone());
                    continue;
                }
            };
            let root = FieldPath::root();
            let ctx = Ctx {
                file,
                version: self.version,
                document: document.index,
                first_line: document.line,
                pos: &document.marked.pos,
                base: &root,
            };
            match read::objects(&document.marked.value) {
                Ok(objects) => {
                    for (rel, value) in objects {
                        let base = ctx.path(&rel);
                        self.object(&Ctx { base: &base, ..ctx }, value, role);
                    }
                }
                Err(items_at) => self
                    .report
                    .errors
                    .push(ctx.invalid(&items_at, "expected a list of objects")),
            }
        }
    }

    /// One object: a policy, a binding, or something else.
    fn object(&mut self, ctx: &Ctx<'_>, value: &Value, role: Role) {
        let Some(map) = value.as_object() else {
            let error = ctx.invalid(
                &FieldPath::root(),
                "expected a Kubernetes object (a mapping with apiVersion and kind)",
            );
            self.report.errors.push(error);
            return;
        };
        let text_field = |name: &str| {
            map.get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let (api_version, kind) = (text_field("apiVersion"), text_field("kind"));
        if role == Role::Params {
            let at = ctx.object_ref();
            self.others.push(Other {
                at,
                api_version,
                kind,
                value: value.clone(),
                param: true,
            });
            return;
        }
        for (field, text) in [("apiVersion", &api_version), ("kind", &kind)] {
            if text.is_empty() {
                let error = ctx.invalid(
                    &FieldPath::root().key(field),
                    "Required value: every document needs apiVersion and kind",
                );
                self.report.errors.push(error);
                return;
            }
        }

        match read::read_as(&api_version, &kind) {
            ReadAs::Policy { older: true } | ReadAs::Binding { older: true } => {
                let at = FieldPath::root().key("apiVersion");
                let message = format!("{api_version} is read as {}", vap::API_VERSION);
                let warning = ctx.warning(WarningKind::OlderVersion, &at, &message);
                self.report.warnings.push(warning);
                let mut upgraded = value.clone();
                if let Some(map) = upgraded.as_object_mut() {
                    map.insert(
                        "apiVersion".to_owned(),
                        Value::String(vap::API_VERSION.to_owned()),
                    );
                }
                self.object(ctx, &upgraded, role);
            }
            ReadAs::Policy { older: false } => match vap::policy(ctx, value, &mut self.report) {
                Some(policy) => self.add_policy(ctx, policy),
                None => self.broken(value),
            },
            ReadAs::Binding { older: false } => {
                if let Some(binding) = vap::binding(ctx, value, &mut self.report) {
                    let name_at = ctx.at(&name_path());
                    match self.binding_sources.get(&binding.name) {
                        Some(first) => self.report.errors.push(LoadError::Duplicate {
                            at: name_at,
                            what: "binding",
                            name: binding.name.clone(),
                            first: first.clone(),
                        }),
                        None => {
                            self.binding_sources.insert(binding.name.clone(), name_at);
                            self.set.bindings.push(binding);
                        }
                    }
                }
            }
            ReadAs::SafetyPolicy => match safety::policy(ctx, value, &mut self.report) {
                Some(policy) => self.add_policy(ctx, policy),
                None => self.broken(value),
            },
            ReadAs::OperatorProfile => {
                if let Some(profile) = crate::operators::profile::profile(ctx, value, &mut self.report) {
                    let name_at = ctx.at(&name_path());
                    match self.profile_sources.get(&profile.name) {
                        Some(first) => self.report.errors.push(LoadError::Duplicate {
                            at: name_at,
                            what: "operator profile",
                            name: profile.name.clone(),
                            first: first.clone(),
                        }),
                        None => {
                            self.profile_sources.insert(profile.name.clone(), name_at);
                            self.profiles.push(profile);
                        }
                    }
                }
            }
            ReadAs::UnsupportedVersion => {
                let expected = if kind == "SafetyPolicy" || kind == "OperatorProfile" {
                    safety::API_VERSION
                } else {
                    vap::API_VERSION
                };
                let error = ctx.invalid(
                    &FieldPath::root().key("apiVersion"),
                    format!("Unsupported value: `{api_version}` for kind {kind}: expected {expected}"),
                );
                self.report.errors.push(error);
            }
            // Test suites live beside the policies they test: not policies, not a problem, for
            // every command and the lint alike.
            ReadAs::TestSuite => {}
            ReadAs::Other => {
                let at = ctx.object_ref();
                self.others.push(Other {
                    at,
                    api_version,
                    kind,
                    value: value.clone(),
                    param: false,
                });
            }
        }
    }

    /// Remembers the name of a policy document that failed to load.
    fn broken(&mut self, value: &Value) {
        if let Some(name) = value["metadata"]["name"].as_str() {
            self.broken_policies.insert(name.to_owned());
        }
    }

    fn add_policy(&mut self, ctx: &Ctx<'_>, mut policy: crate::policy::Policy) {
        let name_at = ctx.at(&name_path());
        if let Some(first) = self.policy_sources.get(&policy.name) {
            self.report.errors.push(LoadError::Duplicate {
                at: name_at,
                what: "policy",
                name: policy.name.clone(),
                first: first.clone(),
            });
            return;
        }
        self.policy_sources.insert(policy.name.clone(), name_at);
        for condition in &mut policy.match_conditions {
            self.share_source(condition);
        }
        self.set.policies.push(Arc::new(policy));
    }

    /// Gives `condition` the text of an identical condition loaded before it, when there is one:
    /// the answers one request shares between policies ([`crate::eval`]'s match memo) then find
    /// it by address instead of comparing the two texts (the pack's policies all have the same
    /// scope condition, hundreds of bytes long).
    fn share_source(&mut self, condition: &mut crate::policy::MatchCondition) {
        // Compiled just now, so not shared yet.
        let Some(program) = Arc::get_mut(&mut condition.program) else {
            return;
        };
        match self.condition_sources.get(&*program.source) {
            Some(shared) => program.source = Arc::clone(shared),
            None => {
                self.condition_sources.insert(Arc::clone(&program.source));
            }
        }
    }
}

fn name_path() -> FieldPath {
    FieldPath::root().key("metadata").key("name")
}

/// Errors in file order (then document, then line); errors without a place first.
fn order(error: &LoadError) -> (String, usize, usize) {
    error
        .source_ref()
        .map_or_else(Default::default, |at| (at.file.clone(), at.document, at.line))
}

/// Loads every policy, binding and param object under `paths` (files or directories).
pub fn load_paths(paths: &[&Path]) -> Result<PolicySet, LoadError> {
    let mut loader = Loader::new();
    for path in paths {
        loader.walk(path, Role::Policies);
    }
    loader.finish()
}
