//! Why snapshots could not be loaded. Like the policy loader's errors, each names where the
//! problem is: file, 1-based line, document and, for a field, its path (`items[3].spec.replicas`).

use std::fmt;

use crate::policy::SourceRef;

/// Why a cluster snapshot could not be loaded.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum SnapshotError {
    /// A file or directory could not be read.
    #[error("cannot read `{path}`")]
    #[diagnostic(code(suture::snapshot::io))]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },

    /// The text is not valid YAML or JSON (`format`).
    #[error("{at}: {format} syntax error at column {column}: {message}")]
    #[diagnostic(code(suture::snapshot::syntax))]
    Syntax {
        at: SourceRef,
        format: &'static str,
        column: usize,
        message: String,
    },

    /// An object (or the List holding it) has a field of the wrong type or value, or lacks one.
    #[error("{at}: {field}: {message}{}", Within(.object))]
    #[diagnostic(code(suture::snapshot::invalid))]
    Invalid {
        at: SourceRef,
        /// The field's path in the document (`items[3].spec.replicas`).
        field: String,
        message: String,
        /// The object, when it can be named (`StatefulSet databases/pg-main`).
        object: Option<String>,
    },

    /// Several of the above, in the order they were found; `stopped` when loading gave up
    /// before the end.
    #[error("{}", Many(.errors, *.stopped))]
    #[diagnostic(code(suture::snapshot::many))]
    Many {
        errors: Vec<SnapshotError>,
        stopped: bool,
    },
}

struct Within<'a>(&'a Option<String>);

impl fmt::Display for Within<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(object) => write!(f, " (in {object})"),
            None => Ok(()),
        }
    }
}

struct Many<'a>(&'a [SnapshotError], bool);

impl fmt::Display for Many<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} problems", self.0.len())?;
        if self.1 {
            write!(f, " (loading stopped there)")?;
        }
        f.write_str(":")?;
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

impl SnapshotError {
    /// The individual errors (one, unless this is `Many`).
    pub fn errors(&self) -> Vec<&SnapshotError> {
        match self {
            SnapshotError::Many { errors, .. } => errors.iter().collect(),
            other => vec![other],
        }
    }

    /// Where the (first) problem is, when it is in a file's content.
    pub fn source_ref(&self) -> Option<&SourceRef> {
        match self {
            SnapshotError::Io { .. } => None,
            SnapshotError::Syntax { at, .. } | SnapshotError::Invalid { at, .. } => Some(at),
            SnapshotError::Many { errors, .. } => errors.iter().find_map(SnapshotError::source_ref),
        }
    }

    /// The field path the (first) problem is about, when there is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            SnapshotError::Invalid { field, .. } => Some(field),
            SnapshotError::Many { errors, .. } => errors.iter().find_map(SnapshotError::field),
            _ => None,
        }
    }

    /// One error from several: nothing when empty, the error itself when alone.
    pub(super) fn from_many(mut errors: Vec<SnapshotError>, stopped: bool) -> Option<SnapshotError> {
        match errors.len() {
            0 => None,
            1 if !stopped => errors.pop(),
            _ => Some(SnapshotError::Many { errors, stopped }),
        }
    }
}
