//! The cluster as policies and the impact estimate see it.
//!
//! [`ClusterView`] is the one read-only trait evaluation uses. [`ClusterModel`] implements it
//! over slim objects ([`object`]) with indexes; the plugin fills one from snapshot files, the
//! gateway from watches.

pub mod api;
mod index;
pub mod json;
mod layered;
mod model;
pub mod object;
pub mod pod_security;
pub mod ports;
pub mod project;
mod scratch;
pub mod snapshot;
pub mod template;
mod view;

pub use layered::Layered;
pub use model::{ClusterModel, KindCounts, ObjectId, labels_from};
pub use object::{Endpoint, Object, ObjectKey, Spec};
pub(crate) use project::project_spec_text;
pub use project::{ProjectError, project, project_spec};
pub use scratch::with_scratch_model;
pub use snapshot::{Progress, SnapshotError, SnapshotLoader, load_snapshots, load_snapshots_keeping};
pub use view::{ClusterView, EmptyCluster};
