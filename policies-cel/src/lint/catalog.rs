//! What the lint knows of the API: which API groups serve a resource. The caller supplies it
//! (the plugin from its table of built-in kinds); resources it does not know are not judged.

/// Which API groups serve a resource (`deployments` → `apps`).
pub trait ResourceCatalog {
    /// The groups serving `resource` (plural, no subresource), or `None` when it is not known.
    fn groups_serving(&self, resource: &str) -> Option<Vec<String>>;

    /// True when the catalog knows every resource `group` serves. A rule naming a group the
    /// catalog does not know (a CRD's, Knative's `services`) is never judged by it.
    fn knows_group(&self, _group: &str) -> bool {
        false
    }
}

/// A catalog that knows no resource: group checks are skipped.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCatalog;

impl ResourceCatalog for NoCatalog {
    fn groups_serving(&self, _resource: &str) -> Option<Vec<String>> {
        None
    }
}
