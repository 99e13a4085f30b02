//! The Kubernetes `authorizer` library, answered offline.
//!
//! `authorizer.group('apps').resource('deployments').namespace('prod').name('web').check('delete').allowed()`
//! and `authorizer.requestResource.check('update')` work as in Kubernetes; the answer comes from a
//! configurable [`AuthorizerMode`] (the plugin's `--authorizer allow|deny`), since there is no
//! API server to ask. Values are maps tagged with a reserved `@authz` key naming their Kubernetes
//! type (`Authorizer` → `group()` → `GroupCheck` → `resource()` → `ResourceCheck` → `check()`,
//! or `Authorizer` → `path()` → `PathCheck`), and each builder is available only on its type and
//! validates its argument as Kubernetes does (a blank path or resource, an invalid service
//! account namespace or name are errors).

use std::collections::HashMap;
use std::sync::Arc;

use crate::cel::upstream::objects::{Key, Map};
use crate::cel::{EvalError, Value};

/// How the offline `authorizer` answers `check()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AuthorizerMode {
    /// Every check is allowed.
    #[default]
    Allow,
    /// Every check is denied.
    Deny,
}

/// A method of the authorizer library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Group,
    Resource,
    Subresource,
    Namespace,
    Name,
    Path,
    FieldSelector,
    LabelSelector,
    ServiceAccount,
    Check,
    Allowed,
    Reason,
    Errored,
    Error,
}

impl Method {
    pub(crate) fn resolve(name: &str, method: bool, argc: usize) -> Option<Method> {
        if !method {
            return None;
        }
        Some(match (name, argc) {
            ("group", 1) => Method::Group,
            ("resource", 1) => Method::Resource,
            ("subresource", 1) => Method::Subresource,
            ("namespace", 1) => Method::Namespace,
            ("name", 1) => Method::Name,
            ("path", 1) => Method::Path,
            ("fieldSelector", 1) => Method::FieldSelector,
            ("labelSelector", 1) => Method::LabelSelector,
            ("serviceAccount", 2) => Method::ServiceAccount,
            ("check", 1) => Method::Check,
            ("allowed", 0) => Method::Allowed,
            ("reason", 0) => Method::Reason,
            ("errored", 0) => Method::Errored,
            ("error", 0) => Method::Error,
            _ => return None,
        })
    }

    fn field(self) -> &'static str {
        match self {
            Method::Group => "group",
            Method::Resource => "resource",
            Method::Subresource => "subresource",
            Method::Namespace => "namespace",
            Method::Name => "name",
            Method::Path => "path",
            Method::FieldSelector => "fieldSelector",
            Method::LabelSelector => "labelSelector",
            Method::ServiceAccount => "serviceAccount",
            Method::Check => "check",
            Method::Allowed => "allowed",
            Method::Reason => "reason",
            Method::Errored => "errored",
            Method::Error => "error",
        }
    }
}

const TAG: &str = "@authz";
const MODE: &str = "@allow";

fn key(name: &str) -> Key {
    Key::String(Arc::new(name.to_owned()))
}

fn text(s: &str) -> Value {
    Value::String(Arc::new(s.to_owned()))
}

fn tagged(tag: &str, allow: bool, fields: impl IntoIterator<Item = (&'static str, Value)>) -> Value {
    let mut map: HashMap<Key, Value> = fields.into_iter().map(|(k, v)| (key(k), v)).collect();
    map.insert(key(TAG), text(tag));
    map.insert(key(MODE), Value::Bool(allow));
    Value::Map(Map { map: Arc::new(map) })
}

/// The `authorizer` variable, with `requestResource` describing the request being judged.
pub fn authorizer_value(mode: AuthorizerMode) -> Value {
    authorizer_for_request(mode, "", "", "", "", "")
}

/// The `authorizer` variable for a request on `group`/`resource`/`subresource` named
/// `namespace`/`name` (its `requestResource` field).
pub fn authorizer_for_request(
    mode: AuthorizerMode,
    group: &str,
    resource: &str,
    subresource: &str,
    namespace: &str,
    name: &str,
) -> Value {
    let allow = mode == AuthorizerMode::Allow;
    let request_resource = tagged(
        "resource",
        allow,
        [
            ("group", text(group)),
            ("resource", text(resource)),
            ("subresource", text(subresource)),
            ("namespace", text(namespace)),
            ("name", text(name)),
        ],
    );
    tagged("authorizer", allow, [("requestResource", request_resource)])
}

fn tag_of(map: &Map) -> Option<&str> {
    match map.map.get(&key(TAG)) {
        Some(Value::String(s)) => Some(s.as_str()),
        _ => None,
    }
}

/// `map` with `method`'s field set to `value`, retagged as `tag` (the type the builder returns).
fn with_field(map: &Map, tag: &str, method: Method, value: Value) -> Value {
    let mut fields = (*map.map).clone();
    fields.insert(key(method.field()), value);
    fields.insert(key(TAG), text(tag));
    Value::Map(Map {
        map: Arc::new(fields),
    })
}

/// A DNS-1123 label, as Kubernetes validates a namespace name: at most 63 lowercase
/// alphanumerics or `-`, starting and ending alphanumeric.
fn is_dns_label(s: &str) -> bool {
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    !s.is_empty()
        && s.len() <= 63
        && s.bytes().all(|b| alnum(b) || b == b'-')
        && s.bytes().next().is_some_and(alnum)
        && s.bytes().last().is_some_and(alnum)
}

/// A DNS-1123 subdomain, as Kubernetes validates a service account name: at most 253
/// characters of dot-separated labels (each alphanumeric at both ends).
fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
            !label.is_empty()
                && label.bytes().all(|b| alnum(b) || b == b'-')
                && label.bytes().next().is_some_and(alnum)
                && label.bytes().last().is_some_and(alnum)
        })
}

/// Calls an authorizer method on `this` with up to two arguments.
pub(crate) fn call(method: Method, this: Value, first: Value, second: Value) -> Result<Value, EvalError> {
    let Value::Map(map) = &this else {
        return Err(EvalError::overload(format!(
            "{} on a value that is not an authorizer",
            method.field()
        )));
    };
    let tag = tag_of(map).unwrap_or_default();
    let allow = matches!(map.map.get(&key(MODE)), Some(Value::Bool(true)));
    let wrong = || EvalError::overload(format!("{}() on {tag}", method.field()));
    match method {
        Method::FieldSelector | Method::LabelSelector => {
            if tag != "resource" {
                return Err(wrong());
            }
            let Value::String(_) = first else {
                return Err(wrong());
            };
            let mut fields = (*map.map).clone();
            fields.insert(key(method.field()), first);
            Ok(Value::Map(Map {
                map: Arc::new(fields),
            }))
        }
        Method::Path | Method::Group | Method::ServiceAccount if tag != "authorizer" => Err(wrong()),
        Method::Resource if tag != "group" => Err(wrong()),
        Method::Subresource | Method::Namespace | Method::Name if tag != "resource" => Err(wrong()),
        Method::Path => {
            let Value::String(path) = &first else {
                return Err(wrong());
            };
            if path.trim().is_empty() {
                return Err(EvalError::Other("path must not be empty".into()));
            }
            Ok(with_field(map, "path", method, first))
        }
        Method::Group => {
            let Value::String(_) = &first else {
                return Err(wrong());
            };
            Ok(with_field(map, "group", method, first))
        }
        Method::Resource => {
            let Value::String(resource) = &first else {
                return Err(wrong());
            };
            if resource.trim().is_empty() {
                return Err(EvalError::Other("resource must not be empty".into()));
            }
            Ok(with_field(map, "resource", method, first))
        }
        Method::Subresource | Method::Namespace | Method::Name => {
            let Value::String(_) = &first else {
                return Err(wrong());
            };
            Ok(with_field(map, "resource", method, first))
        }
        Method::ServiceAccount => {
            let (Value::String(namespace), Value::String(name)) = (&first, &second) else {
                return Err(wrong());
            };
            if !is_dns_subdomain(name) {
                return Err(EvalError::Other("Invalid service account name".into()));
            }
            if !is_dns_label(namespace) {
                return Err(EvalError::Other("Invalid service account namespace".into()));
            }
            Ok(tagged("authorizer", allow, []))
        }
        Method::Check => {
            if !matches!(tag, "resource" | "path") {
                return Err(wrong());
            }
            let Value::String(verb) = first else {
                return Err(wrong());
            };
            let reason = if allow {
                format!("offline authorizer allows every request (verb {verb})")
            } else {
                format!("offline authorizer denies every request (verb {verb})")
            };
            Ok(tagged("decision", allow, [("reason", text(&reason))]))
        }
        Method::Allowed | Method::Reason | Method::Errored | Method::Error => {
            if tag != "decision" {
                return Err(wrong());
            }
            Ok(match method {
                Method::Allowed => Value::Bool(allow),
                Method::Reason => map.map.get(&key("reason")).cloned().unwrap_or_else(|| text("")),
                Method::Errored => Value::Bool(false),
                _ => text(""),
            })
        }
    }
}
