//! Where the policies of a command come from: files and directories, or the embedded built-in
//! pack, plus `--params` files, compiled for the Kubernetes version `--kubernetes-version`
//! names. The one place that talks to the policy loader.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use clap::Args;
use policies_cel::PolicySet;
use policies_cel::policy::Loader;
use policies_cel::{KubernetesVersion, LoadError};

use crate::exit::{Exit, Failure};

/// One entry of `--policies` (or of a suite's `policies:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// The embedded default pack.
    Builtin,
    /// A file (YAML/JSON, multi-document, `kind: List`) or a directory.
    Path(PathBuf),
}

/// `--kubernetes-version`: the cluster's version, which decides the CEL functions a
/// ValidatingAdmissionPolicy (or `eval`'s expression) may call, as kube-apiserver's environment
/// of that version declares them. SafetyPolicies, compiled by Suture alone, get the newest.
#[derive(Debug, Clone, Copy, Args)]
pub struct TargetVersion {
    /// The Kubernetes version whose CEL environment ValidatingAdmissionPolicies compile
    /// against (1.33 to 1.37; `v1.36.2` reads as 1.36). A cluster running 1.N checks new
    /// policies against 1.N-1's (docs/cel-compatibility.md)
    #[arg(
        long = "kubernetes-version",
        value_name = "VERSION",
        env = "SUTURE_KUBERNETES_VERSION",
        default_value_t = KubernetesVersion::DEFAULT
    )]
    pub kubernetes_version: KubernetesVersion,
}

impl Default for TargetVersion {
    fn default() -> Self {
        Self {
            kubernetes_version: KubernetesVersion::DEFAULT,
        }
    }
}

/// Loads the policies of `sources` (the built-in pack when empty) and the parameter objects of
/// `params`, compiled for `version`. The loader's warnings (unknown fields and the like) go to
/// stderr.
///
/// Exit 2 when a path cannot be read; 3 for anything the loader rejects (YAML syntax, unknown
/// kinds, invalid fields, CEL that does not compile).
pub fn load(
    sources: &[PolicySource],
    params: &[PathBuf],
    version: KubernetesVersion,
) -> Result<PolicySet, Failure> {
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
        policies_cel::pack::builtin_loader_at(version).map_err(failure)?
    } else {
        Loader::new().kubernetes_version(version)
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
