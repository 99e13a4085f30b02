//! Where the policies of a command come from: files and directories, or the embedded built-in
//! pack, plus `--params` files. The one place that talks to the policy loader.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use policies_cel::LoadError;
use policies_cel::PolicySet;
use policies_cel::policy::Loader;

use crate::exit::{Exit, Failure};

/// One entry of `--policies` (or of a suite's `policies:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// The embedded default pack.
    Builtin,
    /// A file (YAML/JSON, multi-document, `kind: List`) or a directory.
    Path(PathBuf),
}

/// Loads the policies of `sources` (the built-in pack when empty) and the parameter objects of
/// `params`. The loader's warnings (unknown fields and the like) go to stderr.
///
/// Exit 2 when a path cannot be read; 3 for anything the loader rejects (YAML syntax, unknown
/// kinds, invalid fields, CEL that does not compile).
pub fn load(sources: &[PolicySource], params: &[PathBuf]) -> Result<PolicySet, Failure> {
    let builtin_only = [PolicySource::Builtin];
    let sources = if sources.is_empty() {
        &builtin_only[..]
    } else {
        sources
    };
    for path in sources
        .iter()
        .filter_map(PolicySource::path)
        .chain(params.iter().map(PathBuf::as_path))
    {
        if !path.exists() {
            return Err(Failure::usage(anyhow!(
                "cannot read {}: no such file or directory",
                path.display()
            )));
        }
    }
    let mut loader = if sources.contains(&PolicySource::Builtin) {
        policies_cel::pack::builtin_loader().map_err(failure)?
    } else {
        Loader::new()
    };
    for path in sources.iter().filter_map(PolicySource::path) {
        loader = loader.add_path(path).map_err(failure)?;
    }
    for path in params {
        loader = loader.add_params_path(path).map_err(failure)?;
    }
    let (set, warnings) = loader.finish_with_warnings().map_err(failure)?;
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    Ok(set)
}

impl PolicySource {
    fn path(&self) -> Option<&Path> {
        match self {
            PolicySource::Path(path) => Some(path),
            PolicySource::Builtin => None,
        }
    }
}

/// Unreadable files exit 2, everything else the loader rejects exits 3.
fn failure(error: LoadError) -> Failure {
    let exit = match &error {
        LoadError::Io { .. } => Exit::Usage,
        _ => Exit::Policy,
    };
    let error = match &error {
        LoadError::Io { .. } => anyhow::Error::new(error),
        _ => anyhow::Error::new(error).context("cannot load policies"),
    };
    Failure::new(exit, error)
}
