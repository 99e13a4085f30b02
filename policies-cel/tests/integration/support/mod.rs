//! Shared builders for integration tests.
pub mod cluster;
pub mod repository;
