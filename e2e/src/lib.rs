//! Suture inside a real Kubernetes control plane: the cluster a run uses (given as a kubeconfig,
//! or started from binaries the caller provides), the node simulator (the only simulated part),
//! the gateway registered for real, helpers to build scenes and wait on them, and the runner of
//! the suite in `tests/e2e`.

pub mod binaries;
pub mod cluster;
pub mod control_plane;
pub mod gateway;
pub mod harness;
pub mod kubeconfig;
pub mod scene;
pub mod simulator;
pub mod wait;

pub use cluster::Cluster;
