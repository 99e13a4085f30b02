//! Integration tests of policies-cel: the loader, the CEL environment, the cluster model, impact and evaluate().
//!
//! One test binary per crate: each file below is a module, so the crate's dependencies are
//! linked once instead of once per file (CI's disk and link time).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test crate: failing loudly is the point

mod common;
mod support;

mod candidates;
mod cel_cluster;
mod cel_language;
mod cel_parity;
mod escape_hatch;
mod evaluate;
mod fuzz_differential;
mod fuzz_regressions;
mod gatekeeper_corpus;
mod history;
mod impact_balancers;
mod impact_classes;
mod impact_cluster_changes;
mod impact_delete;
mod impact_endpoints;
mod impact_identities;
mod impact_owner_references;
mod impact_pod_security;
mod impact_service_ports;
mod impact_workloads;
mod kubernetes_libraries;
mod kubernetes_versions;
mod loader;
mod operator_profiles;
mod pack;
mod robustness;
mod snapshot;
mod trial;
