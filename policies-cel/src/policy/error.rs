//! The loader's errors. Every one names where the problem is: file, 1-based line, document and,
//! when it is about a field, the field's path (`spec.validations[2].expression`).

use std::fmt;
use std::sync::Arc;

use crate::cel::CompileError;
use crate::policy::SourceRef;

/// Why policies could not be loaded.
#[derive(Debug, Clone, thiserror::Error, miette::Diagnostic)]
pub enum LoadError {
    /// A file or directory could not be read.
    #[error("cannot read `{path}`")]
    #[diagnostic(code(suture::load::io))]
    Io {
        path: String,
        #[source]
        source: Arc<std::io::Error>,
    },

    /// The text is not valid YAML (or JSON).
    #[error("{at}: YAML syntax error at column {column}: {message}")]
    #[diagnostic(code(suture::load::syntax))]
    Syntax {
        at: SourceRef,
        column: usize,
        message: String,
    },

    /// A field has the wrong type or value, or a required one is missing.
    #[error("{at}: {field}: {message}")]
    #[diagnostic(code(suture::load::invalid))]
    Invalid {
        at: SourceRef,
        field: String,
        message: String,
    },

    /// A document of a kind the loader does not know (and no policy takes as params).
    #[error(
        "{at}: unknown kind `{kind}` (apiVersion {api_version}): expected ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding or SafetyPolicy"
    )]
    #[diagnostic(
        code(suture::load::unknown_kind),
        help(
            "param objects are accepted when a loaded policy's paramKind names their kind, or through --params"
        )
    )]
    UnknownKind {
        at: SourceRef,
        api_version: String,
        kind: String,
    },

    /// A CEL expression does not compile.
    #[error("{at}: {field}: invalid CEL expression:\n{rendered}")]
    #[diagnostic(code(suture::load::cel))]
    Compile {
        at: SourceRef,
        field: String,
        /// `CompileError::render()`: the cel-go style text with a caret under the problem.
        rendered: String,
        /// The compiler's error, for callers that want the span.
        error: Box<CompileError>,
    },

    /// An expression whose type is not what its field requires (a validation that is not a
    /// `bool`, a messageExpression that is not a `string`), as kube-apiserver refuses it.
    #[error("{at}: {field}: Invalid value: {:?}: must evaluate to {} (its type is {})", mismatch.expression, mismatch.expected, mismatch.found)]
    #[diagnostic(code(suture::load::result_type))]
    ResultType {
        at: SourceRef,
        field: String,
        mismatch: Box<TypeMismatch>,
    },

    /// A binding names a policy that was not loaded.
    #[error("{at}: binding `{binding}`: spec.policyName: no policy named `{policy}` was loaded")]
    #[diagnostic(code(suture::load::unknown_policy))]
    UnknownPolicy {
        at: SourceRef,
        binding: String,
        policy: String,
    },

    /// Two policies (or two bindings) with the same name.
    #[error("{at}: metadata.name: duplicate {what} name `{name}`, first defined at {first}")]
    #[diagnostic(code(suture::load::duplicate))]
    Duplicate {
        at: SourceRef,
        what: &'static str,
        name: String,
        first: SourceRef,
    },

    /// Several of the above, in the order they were found.
    #[error("{}", Many(.0))]
    #[diagnostic(code(suture::load::many))]
    Many(Vec<LoadError>),
}

struct Many<'a>(&'a [LoadError]);

impl fmt::Display for Many<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} problems:", self.0.len())?;
        for error in self.0 {
            let text = error.to_string();
            let mut lines = text.lines();
            if let Some(first) = lines.next() {
                write!(f, "\n- {first}")?;
            }
            for line in lines {
                write!(f, "\n  {line}")?;
            }
        }
        Ok(())
    }
}

/// An expression and the type its field requires, when the checker found another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeMismatch {
    pub expression: String,
    /// As Kubernetes words it: `bool`, `string`, `one of [string null_type]`.
    pub expected: &'static str,
    /// The type the checker found.
    pub found: String,
}

impl LoadError {
    /// One error from several: nothing when empty, the error itself when alone.
    pub(crate) fn from_many(mut errors: Vec<LoadError>) -> Option<LoadError> {
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(LoadError::Many(
                errors.into_iter().flat_map(LoadError::into_vec).collect(),
            )),
        }
    }

    /// The individual errors (one, unless this is `Many`).
    pub fn into_vec(self) -> Vec<LoadError> {
        match self {
            LoadError::Many(errors) => errors,
            other => vec![other],
        }
    }

    /// The individual errors (one, unless this is `Many`).
    pub fn errors(&self) -> Vec<&LoadError> {
        match self {
            LoadError::Many(errors) => errors.iter().collect(),
            other => vec![other],
        }
    }

    /// Where the (first) problem is, when it is in a file's content.
    pub fn source_ref(&self) -> Option<&SourceRef> {
        match self {
            LoadError::Io { .. } => None,
            LoadError::Syntax { at, .. }
            | LoadError::Invalid { at, .. }
            | LoadError::UnknownKind { at, .. }
            | LoadError::Compile { at, .. }
            | LoadError::ResultType { at, .. }
            | LoadError::UnknownPolicy { at, .. }
            | LoadError::Duplicate { at, .. } => Some(at),
            LoadError::Many(errors) => errors.iter().find_map(LoadError::source_ref),
        }
    }

    /// The field path the (first) problem is about, when there is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            LoadError::Invalid { field, .. }
            | LoadError::Compile { field, .. }
            | LoadError::ResultType { field, .. } => Some(field),
            LoadError::UnknownPolicy { .. } => Some("spec.policyName"),
            LoadError::Duplicate { .. } => Some("metadata.name"),
            LoadError::Many(errors) => errors.iter().find_map(LoadError::field),
            _ => None,
        }
    }
}
