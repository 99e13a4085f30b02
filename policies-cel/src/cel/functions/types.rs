//! CEL type values: `type(x)` and the type identifiers (`int`, `string`, `list`, `net.IP`, ...),
//! so that `type(x) == string` and `type(type(x)) == type` hold as in cel-go.
//!
//! The `cel` crate has no type values; a type is an opaque value named `type` that carries the
//! name of the type it denotes.

use std::sync::Arc;

use crate::cel::Value;
use crate::cel::upstream::objects::{Key, Opaque};

/// A CEL type, as a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CelType(Arc<str>);

impl CelType {
    /// The type's name (`int`, `google.protobuf.Duration`, `net.IP`, ...).
    pub fn name(&self) -> &str {
        &self.0
    }
}

impl Opaque for CelType {
    fn runtime_type_name(&self) -> &str {
        "type"
    }
}

/// Identifiers that name types, unqualified and qualified.
const TYPE_IDENTIFIERS: &[&str] = &[
    "bool",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "optional_type",
    "google.protobuf.Duration",
    "google.protobuf.Timestamp",
    "net.IP",
    "net.CIDR",
    "kubernetes.URL",
    "kubernetes.Quantity",
    "kubernetes.Semver",
    "kubernetes.NamedFormat",
    "kubernetes.authorization.Authorizer",
    "kubernetes.authorization.PathCheck",
    "kubernetes.authorization.GroupCheck",
    "kubernetes.authorization.ResourceCheck",
    "kubernetes.authorization.Decision",
];

/// The type value an identifier denotes, if it names a type.
pub(crate) fn type_identifier(name: &str) -> Option<Value> {
    TYPE_IDENTIFIERS.contains(&name).then(|| type_value(name))
}

/// The type value named `name`.
pub(crate) fn type_value(name: &str) -> Value {
    Value::Opaque(Arc::new(CelType(Arc::from(name))))
}

/// `type(value)`.
pub(crate) fn type_of(value: &Value) -> Value {
    let name = match value {
        Value::Map(map) => match map.map.get(&Key::String(Arc::new("@authz".to_owned()))) {
            Some(Value::String(tag)) => match tag.as_str() {
                "authorizer" => "kubernetes.authorization.Authorizer",
                "path" => "kubernetes.authorization.PathCheck",
                "group" => "kubernetes.authorization.GroupCheck",
                "resource" => "kubernetes.authorization.ResourceCheck",
                _ => "kubernetes.authorization.Decision",
            },
            _ => "map",
        },
        other => return type_value(&crate::cel::value::type_name(other)),
    };
    type_value(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_of_types_are_type() {
        assert_eq!(type_of(&Value::Int(1)), type_value("int"));
        assert_eq!(type_of(&type_of(&Value::Int(1))), type_value("type"));
        assert_ne!(type_value("int"), type_value("uint"));
        assert_eq!(
            type_identifier("google.protobuf.Duration"),
            Some(type_value("google.protobuf.Duration"))
        );
        assert_eq!(type_identifier("google"), None);
    }
}
