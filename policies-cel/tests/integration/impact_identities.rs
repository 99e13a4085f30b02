//! The deletion of a ServiceAccount running pods run as (`impact.lostServiceAccounts`): the pods
//! that hold its token lose their API access, and none can be replaced until it exists again.

use crate::support;

use policies_cel::cluster::object::{Phase, PodRequirements};
use policies_cel::cluster::{Object, Spec};
use policies_cel::impact::estimate;
use support::cluster::*;

/// A running pod of `shop` that runs as `account` (unnamed: `default`), holding its token or not.
fn runs_as(name: &str, account: &str, token: bool) -> Object {
    let mut p = pod("shop", name, "node-a", true);
    if let Spec::Pod(spec) = &mut p.spec {
        spec.requires = std::sync::Arc::new(PodRequirements {
            service_account: account.into(),
            ..PodRequirements::default()
        });
        spec.api_token = token;
    }
    p
}

fn delete_account(name: &str) -> policies_cel::Request {
    delete(
        ("", "v1", "serviceaccounts"),
        "ServiceAccount",
        "shop",
        name,
        None,
    )
}

fn lost(impact: &policies_cel::impact::Impact) -> Vec<(&str, &str, bool)> {
    impact
        .lost_service_accounts
        .iter()
        .map(|l| (l.pod.as_str(), l.service_account.as_str(), l.token))
        .collect()
}

#[test]
fn deleting_a_service_account_lists_the_running_pods_that_run_as_it() {
    let mut finished = runs_as("web-job-x", "web", true);
    if let Spec::Pod(spec) = &mut finished.spec {
        spec.phase = Phase::Succeeded;
    }
    let mut other_namespace = runs_as("web-9", "web", true);
    other_namespace.key.namespace = "staging".into();
    let cluster = model(vec![
        runs_as("web-2", "web", true),
        runs_as("web-1", "web", false),
        runs_as("api-1", "api", true),
        runs_as("batch-1", "", true),
        finished,
        other_namespace,
    ]);
    let impact = estimate(&delete_account("web"), &cluster);
    // Sorted by pod; one without a token (automountServiceAccountToken: false) only loses its
    // replacements; a finished pod, another account's and another namespace's are not listed.
    assert_eq!(
        lost(&impact),
        vec![("web-1", "web", false), ("web-2", "web", true)]
    );
    assert!(impact.modelled);
    // Nothing the contract's summary counts is deleted or stopped.
    assert_eq!((impact.summary.deleted, impact.summary.pods_disrupted), (0, 0));
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("2 running pods, 1 of which hold its token")),
        "{:?}",
        impact.notes
    );

    // A pod that names no ServiceAccount runs as `default`.
    let impact = estimate(&delete_account("default"), &cluster);
    assert_eq!(lost(&impact), vec![("batch-1", "default", true)]);
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("1 running pod, which holds its token")),
        "{:?}",
        impact.notes
    );
}

#[test]
fn a_service_account_no_running_pod_uses_loses_nothing() {
    let mut terminating = runs_as("web-1", "web", true);
    terminating.deletion_timestamp = std::num::NonZeroI64::new(1_764_000_000);
    let cluster = model(vec![terminating, runs_as("api-1", "api", true)]);
    let impact = estimate(&delete_account("web"), &cluster);
    assert!(impact.lost_service_accounts.is_empty());
    assert!(impact.notes.is_empty(), "{:?}", impact.notes);
}

#[test]
fn a_stored_service_account_in_the_request_is_not_taken_for_a_lagging_model() {
    // kube-apiserver sends the stored ServiceAccount (with its uid) as oldObject; the model never
    // holds ServiceAccounts, so its absence is no sign of a watch lagging behind.
    let cluster = model(vec![runs_as("web-1", "web", true)]);
    let request = review(
        "DELETE",
        ("", "v1", "serviceaccounts"),
        "ServiceAccount",
        "shop",
        "web",
        serde_json::json!({"object": null, "oldObject": {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "web", "namespace": "shop", "uid": "sa-1"}}}),
    );
    let impact = estimate(&request, &cluster);
    assert_eq!(lost(&impact), vec![("web-1", "web", true)]);
    assert!(
        !impact
            .notes
            .iter()
            .any(|n| n.contains("not in the cluster model yet")),
        "{:?}",
        impact.notes
    );
}
