//! Errors of the CEL layer: compile errors that point at the expression, evaluation errors.

use miette::{Diagnostic, SourceSpan};

use crate::cel::KubernetesVersion;

/// An expression that failed to parse or check. Renders like cel-go, with a caret under the
/// problem, and is a `miette` diagnostic for fancy output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Diagnostic)]
#[error("{message}")]
#[diagnostic(code(suture::cel::compile))]
pub struct CompileError {
    /// What is wrong, without position.
    pub message: String,
    /// The whole expression.
    #[source_code]
    pub expression: String,
    /// Where in `expression` (byte offset and length).
    #[label("here")]
    pub span: SourceSpan,
    /// When the expression calls a function a later Kubernetes version introduced: which, and
    /// the version (what the lint reports).
    pub requires: Option<Requirement>,
}

/// A function the compiled-for Kubernetes version lacks, and the version that introduced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub function: String,
    pub version: KubernetesVersion,
}

impl CompileError {
    /// A compile error at byte `offset` of `expression`.
    pub fn new(message: impl Into<String>, expression: &str, offset: usize, len: usize) -> Self {
        let offset = offset.min(expression.len());
        Self {
            message: message.into(),
            expression: expression.to_owned(),
            span: SourceSpan::new(offset.into(), len),
            requires: None,
        }
    }

    /// 1-based line and column of the problem within the expression.
    pub fn line_col(&self) -> (usize, usize) {
        let offset = self.span.offset().min(self.expression.len());
        let before = &self.expression[..floor_char_boundary(&self.expression, offset)];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, column)
    }

    /// The cel-go style rendering:
    ///
    /// ```text
    /// ERROR: <input>:1:8: undeclared reference to 'objekt'
    ///  | object.spec == objekt
    ///  | ...............^
    /// ```
    pub fn render(&self) -> String {
        let (line, column) = self.line_col();
        let text = self.expression.lines().nth(line - 1).unwrap_or_default();
        format!(
            "ERROR: <input>:{line}:{column}: {}\n | {text}\n | {}^",
            self.message,
            ".".repeat(column.saturating_sub(1))
        )
    }
}

fn floor_char_boundary(s: &str, mut index: usize) -> usize {
    while index > 0 && !s.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// Why an evaluation produced no value. Follows CEL's runtime errors; messages are the ones
/// Kubernetes users see in denials and logs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("no such key: {0}")]
    NoSuchKey(String),
    #[error("index {index} out of range in list of size {size}")]
    IndexOutOfRange { index: i64, size: usize },
    #[error("no such overload: {0}")]
    NoSuchOverload(String),
    #[error("{function}: {message}")]
    Function { function: String, message: String },
    #[error("integer overflow in {0}")]
    Overflow(&'static str),
    #[error("division by zero")]
    DivisionByZero,
    #[error("modulus by zero")]
    ModulusByZero,
    #[error("operation cancelled: actual cost limit exceeded (limit {limit})")]
    CostLimitExceeded { limit: u64 },
    #[error("operation cancelled: evaluation time budget of {millis} ms exceeded")]
    TimeLimitExceeded { millis: u64 },
    #[error("{0} is not available")]
    Unavailable(String),
    #[error("{0}")]
    Other(String),
}

impl EvalError {
    pub(crate) fn overload(what: impl Into<String>) -> Self {
        EvalError::NoSuchOverload(what.into())
    }

    pub(crate) fn function(function: &str, message: impl Into<String>) -> Self {
        EvalError::Function {
            function: function.to_owned(),
            message: message.into(),
        }
    }

    /// True when the evaluation ran out of cost or time: such errors end it, nothing absorbs them.
    pub fn is_budget(&self) -> bool {
        matches!(
            self,
            EvalError::CostLimitExceeded { .. } | EvalError::TimeLimitExceeded { .. }
        )
    }
}
