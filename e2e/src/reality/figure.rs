//! The figures the estimate and reality are compared on: the summary of the `impact` contract,
//! each as the set of objects (by uid) it counts.

use std::collections::BTreeMap;

/// One summary figure of the `impact` contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Figure {
    Deleted,
    PodsDisrupted,
    DataLoss,
    ServicesWithoutEndpoints,
    PdbViolations,
    WorkloadsDown,
    QuorumLost,
}

impl Figure {
    /// Every figure, in the contract's order.
    pub const ALL: [Figure; 7] = [
        Figure::Deleted,
        Figure::PodsDisrupted,
        Figure::DataLoss,
        Figure::ServicesWithoutEndpoints,
        Figure::PdbViolations,
        Figure::WorkloadsDown,
        Figure::QuorumLost,
    ];

    /// Its name in the contract (`podsDisrupted`).
    pub fn name(self) -> &'static str {
        match self {
            Figure::Deleted => "deleted",
            Figure::PodsDisrupted => "podsDisrupted",
            Figure::DataLoss => "dataLoss",
            Figure::ServicesWithoutEndpoints => "servicesWithoutEndpoints",
            Figure::PdbViolations => "pdbViolations",
            Figure::WorkloadsDown => "workloadsDown",
            Figure::QuorumLost => "quorumLost",
        }
    }

    /// A short column heading.
    pub fn short(self) -> &'static str {
        match self {
            Figure::Deleted => "del",
            Figure::PodsDisrupted => "pods",
            Figure::DataLoss => "data",
            Figure::ServicesWithoutEndpoints => "svc",
            Figure::PdbViolations => "pdb",
            Figure::WorkloadsDown => "wl",
            Figure::QuorumLost => "quorum",
        }
    }

    /// The figure named `name` in the contract.
    pub fn parse(name: &str) -> Option<Figure> {
        Figure::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// The objects a figure counts: uid → `Kind namespace/name`.
pub type Objects = BTreeMap<String, String>;

/// Every figure's objects.
pub type Figures = BTreeMap<Figure, Objects>;

/// `Kind namespace/name` (no namespace for a cluster-scoped object).
pub fn label(kind: &str, namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {namespace}/{name}")
    }
}
