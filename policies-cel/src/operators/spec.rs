//! `suture.dev/v1alpha1` OperatorProfile: what an operator does when objects of its custom kind
//! change, described in CEL so the estimate can follow it as it follows Kubernetes' own
//! controllers. One profile per kind (and operator); loaded beside policies, from files or the
//! cluster. The CRD installed in clusters is generated from these types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The group/version of OperatorProfile.
pub const API_VERSION: &str = "suture.dev/v1alpha1";

/// What an operator does when objects of one custom kind are deleted, and which of its objects
/// make an apparent disruption of a workload intended.
#[derive(
    kube_derive::CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "suture.dev",
    version = "v1alpha1",
    kind = "OperatorProfile",
    plural = "operatorprofiles",
    shortname = "opprofile",
    category = "suture",
    doc = "What an operator does when objects of its custom kind change: the objects a deletion takes with it, what it destroys outside the cluster, and what makes a disruption intended.",
    printcolumn = r#"{"name":"Operator","type":"string","jsonPath":".spec.operator"}"#,
    printcolumn = r#"{"name":"Kind","type":"string","jsonPath":".spec.resource.kind"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#,
    derive = "PartialEq",
    crates(
        kube_core = "::kube_core",
        k8s_openapi = "::k8s_openapi",
        schemars = "::schemars",
        serde = "::serde",
        serde_json = "::serde_json"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct OperatorProfileSpec {
    /// The operator whose behaviour this describes (`Argo CD`), named in the estimate's reasons.
    pub operator: String,
    /// Where the behaviour is documented: the operator's docs or source.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<String>,
    /// The custom kind the operator acts for.
    pub resource: ProfileResource,
    /// Finalizers the operator acts on (`resources-finalizer.argocd.argoproj.io`; a name also
    /// covers `name/...`). A deleted object carrying a finalizer no profile names is estimated as
    /// not modelled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finalizers: Vec<String>,
    /// Fields of the kind the cluster model keeps (`spec.scaleTargetRef`, `status.inventory`),
    /// besides the name, namespace, labels and finalizers it always keeps: what deletion rules
    /// read when an object of the kind is deleted by a cascade, and what intents read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep: Vec<String>,
    /// What deleting an object of the kind sets off. Each rule's expressions see the deleted
    /// object as `object`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deletion: Vec<DeletionRule>,
    /// Objects of the kind that make a workload's scale-down intended (an autoscaler's range).
    /// Each intent's expressions see an object of the kind, as the model keeps it, as `object`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intents: Vec<IntentRule>,
}

/// The kind a profile describes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileResource {
    /// The API group (`argoproj.io`).
    pub group: String,
    /// The kind (`Application`).
    pub kind: String,
}

/// One consequence of a deletion, when its condition holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeletionRule {
    /// The rule's name, unique in the profile (`prune-tracked`).
    pub name: String,
    /// The operations on the kind that set the rule off: `DELETE` (the default); `CREATE`
    /// for a kind whose creation asks the operator to destroy something (a Velero
    /// DeleteBackupRequest); `UPDATE` for a change that makes the operator delete (pruning
    /// switched on, a sync asked with pruning). `object` is the deleted, created or updated
    /// object; on an UPDATE `oldObject` is the object before it (otherwise null).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<String>,
    /// CEL, a bool: whether the rule applies to this object (absent: always). For example a
    /// finalizer present, `spec.prune`, `spec.deletionPolicy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// The objects the operator deletes in turn; each is then estimated as if deleted directly
    /// (its own dependents, pods, claims' data, Services, budgets, quorum).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cascade: Vec<CascadeRule>,
    /// CEL, a list of maps: what the deletion destroys outside the cluster. Each map has
    /// `provider`, `kind`, `id` (strings), `dataLoss` (bool) and optionally `reason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<String>,
}

/// A selection of objects the operator deletes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CascadeRule {
    /// CEL, a string: why the selected objects go (`'tracked by Application ' + ...`).
    pub reason: String,
    /// CEL, a list of maps naming objects: `kind` and `name`, optionally `group` (default the
    /// core group) and `namespace` (default none: cluster-scoped). A status inventory, for
    /// instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objects: Option<String>,
    /// CEL, a map of strings: the labels the selected objects carry (every one of them).
    /// Objects that a controller owns are left out: their controller deletes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<String>,
    /// CEL, a list of strings: the namespaces `labels` selects in. Required with `labels`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<String>,
    /// CEL, a map selecting by a name pattern: `kind`, optional `group` (default the core
    /// group), `pattern` (an RE2 regular expression the whole name matches) and optional
    /// `namespaces` (a list; absent: every namespace, or cluster-scoped objects). Objects that a
    /// controller owns are left out, as with `labels`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub names: Option<String>,
}

/// An object of the kind declaring that a workload may run down to a number of replicas.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IntentRule {
    /// The intent's name, unique in the profile (`scale-to-zero`).
    pub name: String,
    /// CEL, a bool: whether the object declares the intent (absent: always).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// CEL, a map: the workload in the object's namespace, `kind` and `name` (and `group`,
    /// default `apps`).
    pub target: String,
    /// CEL, an int: the fewest replicas the workload is meant to run.
    pub min_replicas: String,
    /// CEL, an int: the most (absent: no bound).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<String>,
    /// CEL, a string: why the change is intended.
    pub reason: String,
}

/// The OperatorProfile CRD.
pub fn crd() -> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    use kube_core::CustomResourceExt;
    crate::crds::with_known_formats(OperatorProfile::crd())
}

/// The CRD as the YAML committed in `policies-cel/crds/operatorprofile.yaml`.
pub fn crd_yaml() -> Result<String, serde_yaml_ng::Error> {
    crate::crds::render(&crd(), "policies-cel/src/operators/spec.rs")
}
