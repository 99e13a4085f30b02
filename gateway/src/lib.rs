//! `suture-gateway` as a library: the validating admission webhook that enforces Suture's
//! policies inline, with the same `evaluate()` the plugin runs offline.
//!
//! The binary is [`cli::main`]; [`run::start`] runs a gateway in-process (tests, benchmarks).

pub mod admission;
pub mod cli;
pub mod cluster_version;
pub mod config;
pub mod decision_log;
pub mod duration;
pub mod guard;
pub mod health;
pub mod json_out;
pub mod ledger;
pub mod live;
pub mod metrics;
pub mod model;
pub mod policies;
pub mod reload;
pub mod reports;
pub mod run;
pub mod series;
pub mod server;
pub mod tls;

/// The gateway's version, as printed by `suture-gateway --version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// An error and its sources on one line (`outer: inner: root`).
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
