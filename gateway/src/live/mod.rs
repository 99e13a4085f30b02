//! Live mode: the cluster model, the cluster's policy objects and params, kept current by
//! watches.
//!
//! One kube-runtime [`watcher`](kube::runtime::watcher()) per kind the impact estimate reads
//! ([`kinds`]), one per CustomResourceDefinition for its instances ([`crds`]), — unless
//! disabled — one each for SafetyPolicies, ValidatingAdmissionPolicies and their bindings
//! ([`policies`]), and one per kind the policies take params of ([`params`]), both giving the set
//! objects without status or resourceVersion and lists as one edit ([`stable`]). Model objects are
//! stripped on arrival ([`strip`]: no managedFields, no last-applied annotation, no Secret or
//! ConfigMap values; params keep their values) and projected into the shared
//! [`LiveModel`](crate::model::LiveModel) ([`sync`]); [`watch`] runs one watch with backoff and
//! reports its health; [`supervisor`] starts them all and follows CRDs and param kinds as they
//! come and go.

mod client;
pub mod crds;
pub use policies_cel::cluster::api::kinds;
pub mod params;
pub mod policies;
mod stable;
pub mod strip;
mod supervisor;
pub mod sync;
pub mod watch;

pub use client::client;
pub use supervisor::run;

/// What the live mode watches besides the model's kinds.
#[derive(Debug, Clone)]
pub struct LiveConfig {
    /// Load SafetyPolicy, ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding
    /// objects from the cluster into the policy set (`--no-cluster-policies` turns it off).
    pub watch_policies: bool,
    /// Only the policy objects with these labels (a Kubernetes label selector,
    /// `--cluster-policy-selector`); all of them when `None`.
    pub policy_selector: Option<String>,
    /// The server-side timeout of each watch request, in seconds: a connection that died
    /// silently is noticed within this plus 5 seconds (kube-runtime's idle margin).
    pub watch_timeout_secs: u32,
}

impl Default for LiveConfig {
    fn default() -> Self {
        Self {
            watch_policies: true,
            policy_selector: None,
            watch_timeout_secs: DEFAULT_WATCH_TIMEOUT_SECS,
        }
    }
}

/// Short enough that a silently dead connection is noticed well within the default
/// `--max-model-age` (60 s); long enough that re-watching costs the API server nothing.
pub const DEFAULT_WATCH_TIMEOUT_SECS: u32 = 45;
