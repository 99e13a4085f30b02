//! Placeholder: being written.
use crate::cel::Value;
/// How the offline `authorizer` answers `check()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthorizerMode {
    #[default]
    Allow,
    Deny,
}
/// The `authorizer` variable for a request by `user`.
pub fn authorizer_value(_mode: AuthorizerMode) -> Value {
    Value::Null
}
