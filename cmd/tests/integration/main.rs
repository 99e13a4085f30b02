//! Integration tests of the two binaries, kubectl-suture and suture-gateway, driven with assert_cmd.
//!
//! One test binary per crate: each file below is a module, so the crate's dependencies are
//! linked once instead of once per file (CI's disk and link time).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test crate: failing loudly is the point

mod common;
mod mock_api;

mod cli_authoring;
mod cli_check;
mod cli_eval;
mod cli_fixtures;
mod cli_impact;
mod cli_install;
mod cli_lint;
mod cli_live;
mod cli_names;
mod cli_operators;
mod cli_replay;
mod cli_test;
mod cli_version;
mod cli_whatif;
mod docs_links;
mod fuzz_regressions;
mod gateway_binary;
mod image;
mod krew_manifest;
mod pack_suites;
mod pgo_training;
mod readme_example;
