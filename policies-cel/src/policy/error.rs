//! Placeholder: the loader's errors (being written).
/// Why policies could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{0}")]
    Other(String),
}
