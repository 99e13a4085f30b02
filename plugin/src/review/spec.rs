//! The facts an AdmissionReview is built from, as a suite case writes them: operation, kind,
//! resource, user and the rest of [`RequestSpec`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// An admission operation, spelled as Kubernetes spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// A group/version/kind (`group` is empty for the core group).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GroupVersionKind {
    #[serde(default)]
    pub group: String,
    pub version: String,
    pub kind: String,
}

/// A group/version/resource (`group` is empty for the core group).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GroupVersionResource {
    #[serde(default)]
    pub group: String,
    pub version: String,
    pub resource: String,
}

/// `kind:` as written: a kind name (`StatefulSet`) or a full `{group, version, kind}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum KindSpec {
    Name(String),
    Full(GroupVersionKind),
}

/// `resource:` as written: `statefulsets`, `v1/pods`, `apps/v1/statefulsets`, or a full
/// `{group, version, resource}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum ResourceSpec {
    Name(String),
    Full(GroupVersionResource),
}

/// Who makes the request. Without `groups`, the groups kube-apiserver's authenticators give
/// that kind of user are used (service accounts get `system:serviceaccounts` and
/// `system:serviceaccounts:<namespace>`; everyone gets `system:authenticated`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UserInfoSpec {
    pub username: String,
    #[serde(default)]
    pub uid: Option<String>,
    #[serde(default)]
    pub groups: Option<Vec<String>>,
    #[serde(default)]
    pub extra: BTreeMap<String, Vec<String>>,
}

/// The facts an AdmissionReview is built from; everything absent is derived.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestSpec {
    /// The request uid (default: derived from `seed`).
    pub uid: Option<String>,
    /// Seed for a stable generated uid (e.g. the suite file and case name).
    pub seed: String,
    /// Default: UPDATE with both objects, CREATE with `object`, DELETE with `old_object`.
    pub operation: Option<Operation>,
    pub object: Option<Json>,
    pub old_object: Option<Json>,
    pub kind: Option<KindSpec>,
    pub resource: Option<ResourceSpec>,
    pub sub_resource: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    /// Default: `admin` in `system:masters` (a client-certificate cluster admin).
    pub user_info: Option<UserInfoSpec>,
    pub dry_run: bool,
    /// Merged over the operation's default options (`CreateOptions`, `UpdateOptions`,
    /// `DeleteOptions` with `propagationPolicy: Background` as kubectl sends it).
    pub options: Option<Json>,
}

/// Why no AdmissionReview could be built from a spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReviewError(pub(crate) String);

pub(crate) fn fail<T>(message: impl Into<String>) -> Result<T, ReviewError> {
    Err(ReviewError(message.into()))
}
