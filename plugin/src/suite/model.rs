//! The `SutureTest` file format (`suture.dev/v1alpha1`) exactly as written in YAML. See
//! `docs/test-suites.md` for the reference; unknown fields are errors, so typos never pass
//! silently.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value as Json;

use crate::review::{KindSpec, Operation, ResourceSpec, UserInfoSpec};

/// The suite's `apiVersion`.
pub const API_VERSION: &str = "suture.dev/v1alpha1";

/// The suite's `kind`.
pub const KIND: &str = "SutureTest";

/// A suite: which policies, and the cases to judge with them.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SuiteDoc {
    pub api_version: String,
    pub kind: String,
    #[serde(default)]
    pub metadata: Metadata,
    #[serde(default)]
    pub description: Option<String>,
    /// Policy files or directories, relative to the suite file, or `builtin` (the embedded pack).
    pub policies: Vec<String>,
    /// Parameter object files, relative to the suite file.
    #[serde(default)]
    pub params: Vec<String>,
    /// Cluster snapshots, relative to the suite file (reserved for the cluster model).
    #[serde(default)]
    pub cluster: Vec<String>,
    /// History of admitted disruption for every case: a fixture file relative to the suite, or
    /// the fixture inline (`records`, `now`, `retention`).
    #[serde(default)]
    pub history: Option<Json>,
    pub cases: Vec<CaseDoc>,
}

/// `metadata`: the suite's name (default: the file name without extension).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// One case: a request (built from these fields, or a recorded `review`) and what to expect.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CaseDoc {
    /// The case's name (unique in its suite).
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// A recorded AdmissionReview file, instead of the request fields below.
    #[serde(default)]
    pub review: Option<String>,
    #[serde(default)]
    pub operation: Option<Operation>,
    #[serde(default)]
    pub object: Option<Json>,
    #[serde(default)]
    pub object_file: Option<String>,
    #[serde(default)]
    pub old_object: Option<Json>,
    #[serde(default)]
    pub old_object_file: Option<String>,
    #[serde(default)]
    pub kind: Option<KindSpec>,
    #[serde(default)]
    pub resource: Option<ResourceSpec>,
    #[serde(default)]
    pub sub_resource: Option<String>,
    #[serde(default)]
    pub namespace: Option<String>,
    /// The request's `name` (the object's name); default: the object's `metadata.name`.
    #[serde(default)]
    pub object_name: Option<String>,
    #[serde(default)]
    pub user_info: Option<UserInfoSpec>,
    #[serde(default)]
    pub dry_run: Option<bool>,
    #[serde(default)]
    pub options: Option<Json>,
    #[serde(default)]
    pub uid: Option<String>,
    /// This case's history of admitted disruption (instead of the suite's): a file or inline.
    #[serde(default)]
    pub history: Option<Json>,
    pub expect: ExpectDoc,
}

impl CaseDoc {
    /// The request fields that cannot be combined with `review`.
    pub fn request_fields_set(&self) -> Vec<&'static str> {
        let set = [
            ("operation", self.operation.is_some()),
            ("object", self.object.is_some()),
            ("objectFile", self.object_file.is_some()),
            ("oldObject", self.old_object.is_some()),
            ("oldObjectFile", self.old_object_file.is_some()),
            ("kind", self.kind.is_some()),
            ("resource", self.resource.is_some()),
            ("subResource", self.sub_resource.is_some()),
            ("namespace", self.namespace.is_some()),
            ("objectName", self.object_name.is_some()),
            ("userInfo", self.user_info.is_some()),
            ("dryRun", self.dry_run.is_some()),
            ("options", self.options.is_some()),
            ("uid", self.uid.is_some()),
        ];
        set.into_iter()
            .filter_map(|(name, present)| present.then_some(name))
            .collect()
    }
}

/// What the decision must look like.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExpectDoc {
    /// The verdict.
    pub allowed: bool,
    /// The exact number of denials.
    #[serde(default)]
    pub denials: Option<usize>,
    /// A regular expression that at least one denial message matches.
    #[serde(default)]
    pub message: Option<String>,
    /// Regular expressions that each match at least one warning; `[]` means "no warnings".
    #[serde(default)]
    pub warnings: Option<Vec<String>>,
    /// Policies that must be among the denying ones.
    #[serde(default)]
    pub policies: Option<Vec<String>>,
    /// Audit annotations that must be present, with a regular expression for the value.
    #[serde(default)]
    pub audit_annotations: Option<BTreeMap<String, String>>,
    /// Reserved for expectations on the impact estimate.
    #[serde(default)]
    pub impact: Option<Json>,
}
