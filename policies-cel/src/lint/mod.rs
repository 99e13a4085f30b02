//! `lint`: everything wrong with a set of policy files that can be seen without a request, as
//! findings with a file, line and column, a severity and a stable code.
//!
//! What is found: whatever the loader refuses (YAML syntax, invalid fields, unknown kinds,
//! duplicates, and every CEL expression that does not compile, all of them), unknown fields,
//! functions a later Kubernetes version introduced than the one linted for,
//! matches that can never select a request ([`matching`]), conditions and validations decided
//! before any request is seen ([`fold`]), expressions whose estimated cost is above Kubernetes'
//! per-expression limit ([`cost`]), and what the type checker refuses as kube-apiserver would
//! (calls with no matching overload, mixed-type literals, a validation that is not a `bool`, a
//! messageExpression that is not a `string`), and, as kube-apiserver's type check warns, fields
//! of `object`/`oldObject` that the schema of a kind the policy matches does not declare — a
//! built-in kind, or a custom resource of a CRD among the linted files or given apart
//! ([`Linter::add_crds_path`]) — ([`kinds`], [`crds`], [`fields`]: warnings only, loading is
//! unaffected). Pure and synchronous like the rest of the crate;
//! reading files is the only I/O.
//!
//! ```
//! use policies_cel::lint::{Linter, NoCatalog};
//! let mut linter = Linter::new();
//! linter.add_str("p.yaml", "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec:\n  validations:\n  - expression: '1 == 2'\n");
//! let report = linter.run(&NoCatalog);
//! assert_eq!(report.findings[0].code.as_str(), "never-true");
//! assert_eq!((report.findings[0].line, report.findings[0].column), (6, 20));
//! ```

mod builtin;
mod catalog;
mod cost;
mod crd_inputs;
mod crds;
mod expressions;
mod fields;
mod finding;
mod fold;
mod kinds;
mod loading;
mod matching;
mod objects;
mod schema;
mod sink;
mod source;

use std::path::Path;

pub use catalog::{NoCatalog, ResourceCatalog};
pub use cost::{PER_EXPRESSION_LIMIT, UNKNOWN_LENGTH};
pub use finding::{Code, Finding, Severity};

use sink::Sink;
use source::SourceFile;

use crate::cel::KubernetesVersion;

/// An input the lint cannot use.
#[derive(Debug, thiserror::Error)]
pub enum LintError {
    /// A file or directory that could not be read.
    #[error("cannot read `{path}`")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A CRD file (`--crds`) that does not parse or holds a broken CustomResourceDefinition.
    #[error("{file}:{line}: {message}")]
    Crd {
        file: String,
        line: usize,
        message: String,
    },
    /// A CRD path (`--crds`) holding no CustomResourceDefinition.
    #[error("`{path}` holds no CustomResourceDefinition (apiextensions.k8s.io/v1)")]
    NoCrd { path: String },
}

/// The policy files to lint (and param objects they may refer to).
#[derive(Debug, Default)]
pub struct Linter {
    files: Vec<SourceFile>,
    /// Indexes of the files holding param objects (`--params`).
    params: Vec<usize>,
    /// The custom resources of the CRDs given apart (`--crds`).
    crds: crds::Crds,
    /// The Kubernetes version whose CEL environment expressions compile against.
    version: KubernetesVersion,
}

/// What a lint run found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LintReport {
    /// Every finding, in file order, then line and column.
    pub findings: Vec<Finding>,
    /// Files read (params included).
    pub files: usize,
    /// Policies and bindings found (whether they loaded or not).
    pub policies: usize,
    pub bindings: usize,
    /// OperatorProfiles found (their expressions are checked as they load).
    pub profiles: usize,
    /// CEL expressions looked at.
    pub expressions: usize,
}

impl LintReport {
    /// How many findings have `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings.iter().filter(|f| f.severity == severity).count()
    }
}

impl Linter {
    /// Nothing to lint yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file (any name) or the `.yaml`/`.yml`/`.json` files under a directory, in sorted
    /// order, as the loader reads them.
    pub fn add_path(&mut self, path: impl AsRef<Path>) -> Result<(), LintError> {
        for file in read_path(path.as_ref())? {
            self.files.push(file);
        }
        Ok(())
    }

    /// Adds a file's text; `name` stands for the file in findings.
    pub fn add_str(&mut self, name: &str, text: &str) {
        self.files.push(SourceFile::new(name, text));
    }

    /// Lints for Kubernetes `version` ([`KubernetesVersion::DEFAULT`] unless set): a function
    /// a later version introduced, called by a ValidatingAdmissionPolicy, is the
    /// `kubernetes-version` finding.
    pub fn kubernetes_version(&mut self, version: KubernetesVersion) {
        self.version = version;
    }

    /// Adds the built-in policy pack.
    pub fn add_builtin(&mut self) {
        for (name, text) in crate::pack::files() {
            self.add_str(name, text);
        }
    }

    /// Adds param objects (whatever their kind) from a file or directory.
    pub fn add_params_path(&mut self, path: impl AsRef<Path>) -> Result<(), LintError> {
        for file in read_path(path.as_ref())? {
            self.params.push(self.files.len());
            self.files.push(file);
        }
        Ok(())
    }

    /// Adds the CustomResourceDefinitions of a file or directory (other objects are skipped):
    /// policies matching their custom resources have `object` checked against their schemas.
    /// CRDs among the linted files are read too, without this.
    pub fn add_crds_path(&mut self, path: impl AsRef<Path>) -> Result<(), LintError> {
        let mut count = 0;
        for file in read_path(path.as_ref())? {
            count += self.add_crds(&file.name, &file.text)?;
        }
        match count {
            0 => Err(LintError::NoCrd {
                path: path.as_ref().display().to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// Adds the CustomResourceDefinitions of a file's text (see [`Linter::add_crds_path`]).
    pub fn add_crds_str(&mut self, name: &str, text: &str) -> Result<(), LintError> {
        match self.add_crds(name, text)? {
            0 => Err(LintError::NoCrd {
                path: name.to_owned(),
            }),
            _ => Ok(()),
        }
    }

    fn add_crds(&mut self, name: &str, text: &str) -> Result<usize, LintError> {
        let (crds, count) = crd_inputs::in_file(name, text)?;
        self.crds.extend(&crds);
        Ok(count)
    }

    /// Lints everything added; `catalog` says which API groups serve which resources.
    pub fn run(&self, catalog: &dyn ResourceCatalog) -> LintReport {
        let mut sink = Sink::new(&self.files);
        let policy_files: Vec<usize> = (0..self.files.len())
            .filter(|i| !self.params.contains(i))
            .collect();
        let documents = objects::documents(&self.files);
        loading::load(&mut sink, &documents, &policy_files, &self.params, self.version);
        let objects = objects::objects(&documents, &policy_files);
        let mut crds = crd_inputs::in_objects(&mut sink, &objects);
        crds.extend(&self.crds);
        let expressions = expressions::check(&mut sink, &objects, &crds);
        matching::check(&mut sink, &objects, catalog);
        let count =
            |kinds: &[objects::ObjectKind]| objects.iter().filter(|o| kinds.contains(&o.kind())).count();
        let policies = count(&[
            objects::ObjectKind::ValidatingAdmissionPolicy,
            objects::ObjectKind::SafetyPolicy,
        ]);
        let bindings = count(&[objects::ObjectKind::Binding]);
        let profiles = count(&[objects::ObjectKind::OperatorProfile]);
        let mut findings = sink.findings;
        for finding in findings.iter_mut().filter(|f| f.policy.is_none()) {
            finding.policy = objects
                .iter()
                .filter(|o| o.kind() != objects::ObjectKind::Other)
                .filter(|o| self.files[o.file].name == finding.file && o.start_line() <= finding.line)
                .max_by_key(|o| o.start_line())
                .filter(|o| o.kind() != objects::ObjectKind::CustomResourceDefinition)
                .and_then(|o| o.name().map(str::to_owned));
        }
        let file_order = |name: &str| self.files.iter().position(|f| f.name == name);
        findings.sort_by(|a, b| {
            (file_order(&a.file), a.line, a.column, a.code).cmp(&(
                file_order(&b.file),
                b.line,
                b.column,
                b.code,
            ))
        });
        findings.dedup();
        LintReport {
            findings,
            files: self.files.len(),
            policies,
            bindings,
            profiles,
            expressions,
        }
    }
}

/// The files of `path` as the loader reads them; the first that cannot be read is the error.
fn read_path(path: &Path) -> Result<Vec<SourceFile>, LintError> {
    crate::policy::read::files(path)
        .map(|file| match file {
            Ok((name, text)) => Ok(SourceFile::new(name, text)),
            Err((path, source)) => Err(LintError::Read { path, source }),
        })
        .collect()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod crd_tests;
