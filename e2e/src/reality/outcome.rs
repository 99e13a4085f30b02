//! What really happened, as the figures of the `impact` contract: from the objects before the
//! request, the objects once the cluster is quiet again, and the lowest readings in between.
//!
//! - `deleted`: objects (of the kinds the model holds) that existed before and are gone, or
//!   newly carry a deletionTimestamp (held by a finalizer);
//! - `podsDisrupted`: pods running before (not terminating, not finished) that are gone,
//!   terminating or finished;
//! - `dataLoss`: PersistentVolumes deleted (or terminating), and volumes reclaimed with `Delete`
//!   whose claim was deleted (destruction scheduled);
//! - `servicesWithoutEndpoints`: Services with a ready endpoint before whose EndpointSlices held
//!   none at some moment (or that were deleted);
//! - `workloadsDown`: workloads with a healthy pod before and none at some moment;
//! - `pdbViolations`: budgets whose `currentHealthy` fell below `desiredHealthy` (and below its
//!   value before) as the disruption controller reported them;
//! - `quorumLost`: StatefulSets of 3+ healthy members that had fewer than a majority of them at
//!   some moment.

use crate::reality::figure::{Figure, Figures, Objects};
use crate::reality::moment::{Store, pod_running};
use crate::reality::observe::{Before, Lowest};

fn gone_or_newly_terminating(uid: &str, before: &Store, after: &Store) -> bool {
    match (before.get(uid), after.get(uid)) {
        (Some(_), None) => true,
        (Some(b), Some(a)) => !b.terminating() && a.terminating(),
        _ => false,
    }
}

fn label(before: &Store, uid: &str) -> String {
    before
        .get(uid)
        .map(|o| o.label())
        .unwrap_or_else(|| uid.to_owned())
}

fn objects<'a>(before: &Store, uids: impl IntoIterator<Item = &'a String>) -> Objects {
    uids.into_iter()
        .map(|uid| (uid.clone(), label(before, uid)))
        .collect()
}

/// The figures of what happened.
pub fn figures(before: &Before, after: &Store, lowest: &Lowest) -> Figures {
    let store = &before.store;
    let mut figures = Figures::new();

    let deleted = store
        .keys()
        .filter(|uid| gone_or_newly_terminating(uid, store, after));
    figures.insert(Figure::Deleted, objects(store, deleted));

    let disrupted = store
        .iter()
        .filter(|(_, o)| o.kind.kind == "Pod" && pod_running(o))
        .filter(|(uid, _)| after.get(*uid).is_none_or(|o| !pod_running(o)))
        .map(|(uid, _)| uid);
    figures.insert(Figure::PodsDisrupted, objects(store, disrupted));

    let lost = store
        .iter()
        .filter(|(_, o)| o.kind.kind == "PersistentVolume")
        .filter(|(uid, volume)| {
            if gone_or_newly_terminating(uid, store, after) {
                return true;
            }
            let policy =
                after.get(*uid).unwrap_or(volume).value["spec"]["persistentVolumeReclaimPolicy"].as_str();
            let claim = volume.value["spec"]["claimRef"]["uid"]
                .as_str()
                .unwrap_or_default();
            policy == Some("Delete") && !claim.is_empty() && gone_or_newly_terminating(claim, store, after)
        })
        .map(|(uid, _)| uid);
    figures.insert(Figure::DataLoss, objects(store, lost));

    let dark = before
        .services
        .iter()
        .filter(|(uid, ready)| **ready > 0 && lowest.services.get(*uid) == Some(&0))
        .map(|(uid, _)| uid);
    figures.insert(Figure::ServicesWithoutEndpoints, objects(store, dark));

    figures.insert(
        Figure::PdbViolations,
        objects(store, lowest.budgets_broken.iter()),
    );

    let down = before
        .workloads
        .iter()
        .filter(|(uid, ready)| **ready > 0 && lowest.workloads.get(*uid) == Some(&0))
        .map(|(uid, _)| uid);
    figures.insert(Figure::WorkloadsDown, objects(store, down));

    let quorum = before
        .workloads
        .iter()
        .filter(|(uid, ready)| {
            store.get(*uid).is_some_and(|o| o.kind.kind == "StatefulSet")
                && **ready >= 3
                && lowest
                    .workloads
                    .get(*uid)
                    .is_some_and(|low| *low < **ready / 2 + 1)
        })
        .map(|(uid, _)| uid);
    figures.insert(Figure::QuorumLost, objects(store, quorum));
    figures
}
