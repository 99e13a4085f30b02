//! Integration tests of suture-gateway: the real server on loopback TLS, the live model against kube's mock API service.
//!
//! One test binary per crate: each file below is a module, so the crate's dependencies are
//! linked once instead of once per file (CI's disk and link time).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test crate: failing loudly is the point

mod common;
mod live_support;

mod attacks;
mod ledger;
mod limits;
mod live_model;
mod live_policies;
mod malformed_bodies;
mod ops;
mod recorded_reviews;
mod reload;
mod self_protection;
mod tls;
