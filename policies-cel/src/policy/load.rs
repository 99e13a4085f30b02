//! Placeholder: the loader (being written).
use std::path::Path;
use crate::policy::{LoadError, PolicySet};
/// Loads policies from files and directories.
#[derive(Debug, Default)]
pub struct Loader;
/// Loads every policy, binding and param object under `paths`.
pub fn load_paths(_paths: &[&Path]) -> Result<PolicySet, LoadError> {
    Ok(PolicySet::default())
}
