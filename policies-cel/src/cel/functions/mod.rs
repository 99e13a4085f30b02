//! Placeholder: being written.
pub mod authorizer;
pub mod bridge;
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    Size,
}
