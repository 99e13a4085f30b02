//! The built-in policy pack, embedded in both binaries: SafetyPolicies that keep operators'
//! service accounts from the disruptions that most often turn a bad reconcile into an outage
//! (quorum loss, scale to zero, deleted namespaces, CRDs and volumes). `docs/policies.md`
//! describes each one and how to tune or disable it.

use crate::policy::{LoadError, Loader, PolicySet};

/// The pack's files as (name, YAML text), in a fixed order.
const FILES: &[(&str, &str)] = &[
    (
        "pack/statefulset-quorum.yaml",
        include_str!("../pack/statefulset-quorum.yaml"),
    ),
    (
        "pack/scale-to-zero.yaml",
        include_str!("../pack/scale-to-zero.yaml"),
    ),
    (
        "pack/namespace-delete.yaml",
        include_str!("../pack/namespace-delete.yaml"),
    ),
    ("pack/crd-delete.yaml", include_str!("../pack/crd-delete.yaml")),
    (
        "pack/volume-delete.yaml",
        include_str!("../pack/volume-delete.yaml"),
    ),
    (
        "pack/statefulset-pvc-retention.yaml",
        include_str!("../pack/statefulset-pvc-retention.yaml"),
    ),
];

/// The pack's files as (name, YAML text), e.g. to list them or write them out for editing.
pub fn files() -> &'static [(&'static str, &'static str)] {
    FILES
}

/// The pack, loaded and compiled.
pub fn builtin() -> Result<PolicySet, LoadError> {
    builtin_loader()?.finish()
}

/// A loader holding the pack, to which more policies or params can be added.
pub fn builtin_loader() -> Result<Loader, LoadError> {
    FILES
        .iter()
        .try_fold(Loader::new(), |loader, (name, text)| loader.add_str(name, text))
}
