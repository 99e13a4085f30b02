//! `policies-cel`: the evaluation core shared by `kubectl-suture` and `suture-gateway`.
//!
//! Everything here is pure and synchronous: load policies ([`policy`]), compile their CEL
//! ([`cel`]), look at the cluster through one read-only trait ([`cluster::ClusterView`]) and
//! judge an admission request with [`evaluate`]. The same function runs offline in the plugin and
//! inline in the webhook, so their verdicts can never disagree.

pub mod cel;
pub mod cluster;
pub mod control_plane;
pub mod crds;
pub mod eval;
pub mod files;
pub mod history;
pub mod impact;
pub mod lint;
pub mod operators;
pub mod pack;
pub mod policy;
pub mod reports;
pub mod stages;

pub use cel::{KubernetesVersion, VersionError};
pub use cluster::{ClusterView, EmptyCluster};
pub use eval::{
    Decision, Denial, EvalContext, Request, RequestError, Trial, WireReview, evaluate, evaluate_in,
};
pub use policy::{LoadError, PolicySet};
