//! Suture inside a real Kubernetes control plane: the cluster a run uses (given as a kubeconfig,
//! or started from binaries the caller provides), the node simulator (the only simulated part),
//! the gateway registered for real (a host process, or its image run by podman: `podman`), the
//! scenes and helpers to build and wait on them, the runner of the suite in `tests/e2e`, and the
//! latency benchmark inside kube-apiserver (`latency`).

pub mod binaries;
pub mod cluster;
pub mod control_plane;
pub mod gateway;
pub mod harness;
pub mod kubeconfig;
pub mod latency;
pub mod podman;
pub mod reality;
pub mod reviews;
pub mod scene;
pub mod scenes;
pub mod simulator;
pub mod wait;

pub use cluster::Cluster;
