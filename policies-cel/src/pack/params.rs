//! `suture.dev/v1alpha1` SafetyPackParams: the one object that tunes the built-in pack — whose
//! requests it judges and its thresholds — without editing the policies. Every pack policy names
//! this kind as its `paramKind`; with no such object loaded the policies use their defaults.
//!
//! The CRD (`crds/safetypackparams.yaml`) is generated from these types and kept in sync by a test.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube_core::CustomResourceExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The group/version of SafetyPackParams.
pub const API_VERSION: &str = "suture.dev/v1alpha1";
/// The kind every pack policy takes as params.
pub const KIND: &str = "SafetyPackParams";
/// The cascade size above which `suture-blast-radius` denies, when no params say otherwise.
pub const DEFAULT_MAX_DELETED_OBJECTS: u32 = 100;

/// Tuning of the built-in safety pack. Every field is optional; absent fields keep the default.
#[derive(
    kube_derive::CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "suture.dev",
    version = "v1alpha1",
    kind = "SafetyPackParams",
    plural = "safetypackparams",
    category = "suture",
    doc = "Tuning of Suture's built-in safety policy pack: whose requests it judges and its thresholds.",
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
pub struct SafetyPackParamsSpec {
    /// Judge only service accounts of these namespaces (e.g. the operators' namespaces). Empty
    /// or absent: every service account but the control plane's own (its controllers' in
    /// kube-system, by name: a third-party operator installed in kube-system is judged).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub service_account_namespaces: Vec<String>,
    /// Never judge service accounts of these namespaces (`[kube-system]` exempts every
    /// kube-system account, as the pack did before it judged third-party operators there).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_service_account_namespaces: Vec<String>,
    /// Never judge these service accounts, as `namespace/name` (e.g. a trusted GitOps
    /// controller).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_service_accounts: Vec<String>,
    /// `suture-blast-radius` denies a request whose cascade deletes more objects than this
    /// (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_deleted_objects: Option<u32>,
    /// Pack policies switched off, by name (e.g. `suture-stale-owner`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled_policies: Vec<String>,
    /// `suture-disruption-rate`'s budgets across requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disruption_rate: Option<DisruptionRate>,
}

/// The budgets of `suture-disruption-rate`: how much admitted requests may disrupt per window.
/// Windows are durations (`10m`, `1h`), at most the history's retention (1h by default).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisruptionRate {
    /// The most pods one requester may disrupt per `podWindow` (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pods_per_requester: Option<u32>,
    /// The window of `maxPodsPerRequester` (default `10m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_window: Option<String>,
    /// The most members of one StatefulSet disrupted per `statefulSetMemberWindow`, whoever
    /// asks (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_stateful_set_members: Option<u32>,
    /// The window of `maxStatefulSetMembers` (default `5m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stateful_set_member_window: Option<String>,
    /// The most objects one requester may delete per minute, a hot-loop guard (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_deletions_per_minute: Option<u32>,
    /// How many times one object may be deleted per `objectWindow`, whoever asks, before the
    /// next deletion is refused as an operator that does not converge (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_deletions_of_object: Option<u32>,
    /// The window of `maxDeletionsOfObject` (default `10m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_window: Option<String>,
}

/// The SafetyPackParams CustomResourceDefinition.
pub fn crd() -> CustomResourceDefinition {
    crate::crds::with_known_formats(SafetyPackParams::crd())
}

/// The CRD as the YAML committed in `policies-cel/crds/safetypackparams.yaml`.
pub fn crd_yaml() -> Result<String, serde_yaml_ng::Error> {
    crate::crds::render(&crd(), "policies-cel/src/pack/params.rs")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn crd_is_cluster_scoped_in_the_suture_group() {
        let crd = crd();
        assert_eq!(crd.spec.scope, "Cluster");
        assert_eq!(crd.metadata.name.as_deref(), Some("safetypackparams.suture.dev"));
        assert_eq!(
            format!("{}/{}", crd.spec.group, crd.spec.versions[0].name),
            API_VERSION
        );
        assert_eq!(crd.spec.names.kind, KIND);
    }
}
