//! `suture-gateway` as a library: the validating admission webhook that enforces Suture's
//! policies inline, with the same `evaluate()` the plugin runs offline.

pub mod guard;
pub mod model;
pub mod policies;

/// The gateway's version, as printed by `suture-gateway --version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What the binary says until the webhook server is wired in.
pub const NOT_YET_IMPLEMENTED: &str = "suture-gateway: the admission webhook server is not yet implemented \
(this build only evaluates policies offline: use `kubectl suture check`)";
