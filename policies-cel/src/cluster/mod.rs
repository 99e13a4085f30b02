//! The cluster as policies and the impact estimate see it: one read-only trait.
//!
//! The plugin fills it from snapshot files, the gateway from watches; evaluation only ever sees
//! [`ClusterView`].

/// A read-only view of the cluster.
pub trait ClusterView: Send + Sync {
    /// The Namespace object named `name`, as JSON (for `namespaceSelector` and `namespaceObject`).
    fn namespace(&self, name: &str) -> Option<serde_json::Value>;
}

/// A cluster we know nothing about: namespace selectors see no labels, `namespaceObject` is null.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmptyCluster;

impl ClusterView for EmptyCluster {
    fn namespace(&self, _name: &str) -> Option<serde_json::Value> {
        None
    }
}
