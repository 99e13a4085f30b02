//! Impact of DELETE and eviction on small hand-built clusters: the garbage-collector cascade
//! with each propagation policy, Namespace, CRD, Node, PVC and PV deletion, StatefulSet claim
//! retention, evictions against PodDisruptionBudgets, terminating pods and dangling owners.

use crate::support;

use policies_cel::cluster::object::{IntOrPercent, Retention, Text};
use policies_cel::cluster::{ClusterModel, Object, Spec};
use policies_cel::impact::{Summary, estimate};
use serde_json::json;
use support::cluster::*;

const STATEFULSETS: (&str, &str, &str) = ("apps", "v1", "statefulsets");

/// A 3-member database: StatefulSet `pg` (claims `data-pg-N` on volumes with reclaim Delete),
/// a PDB with minAvailable 2 and a Service.
fn database(retention: Retention) -> (ClusterModel, Object) {
    let (mut objects, sts) = database_without_its_statefulset(retention);
    objects.push(sts.clone());
    (model(objects), sts)
}

/// The objects of [`database`] but its StatefulSet, and the StatefulSet.
fn database_without_its_statefulset(retention: Retention) -> (Vec<Object>, Object) {
    let sts = statefulset("databases", "pg", 3, "pg", &["data"], retention);
    let mut objects = vec![
        object("Namespace", "", "databases", Spec::Namespace),
        pdb_min_available("databases", "pg", "pg", IntOrPercent::Int(2)),
        service("databases", "pg", "pg"),
    ];
    for i in 0..3 {
        let claim = format!("data-pg-{i}");
        let pod = with_labels(
            pod_with_claims("databases", &format!("pg-{i}"), "node-a", &[&claim]),
            &[("app", "pg")],
        );
        objects.push(owned_by(pod, &sts));
        objects.push(pvc("databases", &claim, &format!("pv-{i}")));
        objects.push(pv(&format!("pv-{i}"), "databases", &claim, true));
    }
    (objects, sts)
}

fn deleted_names(impact: &policies_cel::impact::Impact) -> Vec<String> {
    let mut names: Vec<String> = impact.deleted.iter().map(|d| d.object.display()).collect();
    names.sort();
    names
}

#[test]
fn deleting_a_statefulset_cascades_to_its_pods_not_its_claims() {
    let (cluster, _) = database(Retention::default());
    let impact = estimate(
        &delete(STATEFULSETS, "StatefulSet", "databases", "pg", None),
        &cluster,
    );
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 4,
            pods_disrupted: 3,
            data_loss: 0,
            services_without_endpoints: 1,
            pdb_violations: 1,
            workloads_down: 1,
            quorum_lost: 1,
            broken_references: 0,
            external_data_loss: 0,
        }
    );
    assert_eq!(
        deleted_names(&impact),
        [
            "Pod databases/pg-0",
            "Pod databases/pg-1",
            "Pod databases/pg-2",
            "StatefulSet databases/pg"
        ]
    );
    assert_eq!(
        impact.deleted[1].reason,
        "owned by StatefulSet databases/pg (garbage collection)"
    );
    assert_eq!(
        (impact.services[0].ready_before, impact.services[0].ready_after),
        (3, 0)
    );
    let pdb = &impact.pdbs[0];
    assert_eq!(
        (
            pdb.desired_healthy,
            pdb.current_healthy,
            pdb.healthy_after,
            pdb.violated
        ),
        (2, 3, 0, true)
    );
    assert_eq!(
        (
            impact.quorum[0].ready_before,
            impact.quorum[0].ready_after,
            impact.quorum[0].majority
        ),
        (3, 0, 2)
    );
    assert!(
        impact.pods.iter().all(|p| !p.replaced),
        "the owner is gone too: nothing replaces the pods"
    );
}

#[test]
fn orphan_propagation_deletes_only_the_target() {
    let (cluster, _) = database(Retention::default());
    let impact = estimate(
        &delete(STATEFULSETS, "StatefulSet", "databases", "pg", Some("Orphan")),
        &cluster,
    );
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 1,
            ..Summary::default()
        }
    );
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("propagationPolicy Orphan"))
    );
}

#[test]
fn retention_when_deleted_takes_the_claims_and_their_data() {
    let (cluster, _) = database(Retention {
        delete_when_deleted: true,
        delete_when_scaled: false,
    });
    let impact = estimate(
        &delete(STATEFULSETS, "StatefulSet", "databases", "pg", Some("Foreground")),
        &cluster,
    );
    assert_eq!(impact.summary.deleted, 10, "{:#?}", deleted_names(&impact));
    assert_eq!(impact.summary.data_loss, 3);
    assert_eq!(impact.volumes[0].volume.as_deref(), Some("pv-0"));
    assert_eq!(impact.volumes[0].in_use_by, ["pg-0"], "the data is live");
    assert_eq!(impact.volumes[0].stateful_set.as_deref(), Some("pg"));
    assert!(
        impact.volumes[0].reason.contains("reclaims with Delete"),
        "{}",
        impact.volumes[0].reason
    );
}

#[test]
fn deleting_a_namespace_takes_everything_in_it() {
    let (cluster, _) = database(Retention::default());
    let impact = estimate(
        &delete(("", "v1", "namespaces"), "Namespace", "", "databases", None),
        &cluster,
    );
    // Namespace, StatefulSet, 3 pods, 3 claims, their 3 volumes, the PDB and the Service.
    assert_eq!(impact.summary.deleted, 13, "{:#?}", deleted_names(&impact));
    assert_eq!(impact.summary.data_loss, 3);
    assert_eq!(impact.summary.pods_disrupted, 3);
    assert_eq!(impact.summary.quorum_lost, 1);
    assert_eq!(
        impact.summary.services_without_endpoints, 1,
        "the deleted Service loses its 3 ready endpoints"
    );
    assert_eq!(
        (impact.services[0].ready_before, impact.services[0].ready_after),
        (3, 0)
    );
    assert_eq!(impact.summary.pdb_violations, 0, "a deleted PDB protects nothing");
    assert!(
        impact
            .deleted
            .iter()
            .any(|d| d.reason == "in deleted Namespace databases")
    );
}

/// A live model holds objects in the order its watches delivered them: pods before their
/// ReplicaSet and Deployment must not make the sweep of a Namespace see them as replaced — even
/// when the Deployment itself is owned from outside the namespace (a cluster-scoped custom
/// resource that the sweep does not delete).
#[test]
fn a_namespace_sweep_does_not_depend_on_the_model_order() {
    let platform = object("Platform", "", "main", Spec::Other);
    let deployment = owned_by(deployment("shop", "web", 2, "web"), &platform);
    let replicaset = owned_by(replicaset("shop", "web-1", 2, "web"), &deployment);
    let pods: Vec<Object> = ["web-1-a", "web-1-b"]
        .into_iter()
        .map(|name| {
            owned_by(
                with_labels(pod("shop", name, "n1", true), &[("app", "web")]),
                &replicaset,
            )
        })
        .collect();
    let namespace = object("Namespace", "", "shop", Spec::Namespace);
    let owners_first = model(
        [
            vec![
                platform.clone(),
                namespace.clone(),
                deployment.clone(),
                replicaset.clone(),
            ],
            pods.clone(),
        ]
        .concat(),
    );
    let pods_first = model([vec![platform, namespace], pods, vec![replicaset, deployment]].concat());
    let request = delete(("", "v1", "namespaces"), "Namespace", "", "shop", None);
    let (a, b) = (estimate(&request, &owners_first), estimate(&request, &pods_first));
    assert_eq!(a.summary, b.summary);
    for impact in [&a, &b] {
        assert!(impact.pods.iter().all(|p| !p.replaced), "{:#?}", impact.pods);
        assert!(
            impact
                .deleted
                .iter()
                .any(|d| d.object.name == "web-1-a" && d.reason.contains("owned by ReplicaSet")),
            "{:#?}",
            deleted_names(impact)
        );
    }
}

#[test]
fn deleting_a_claim_in_use_loses_its_data_later() {
    let (cluster, _) = database(Retention::default());
    let impact = estimate(
        &delete(
            ("", "v1", "persistentvolumeclaims"),
            "PersistentVolumeClaim",
            "databases",
            "data-pg-0",
            None,
        ),
        &cluster,
    );
    // The claim is deleted now (terminating); its volume only once pg-0 stops, which this
    // request does not do: the loss is scheduled, the volume is not deleted yet.
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 1,
            data_loss: 1,
            ..Summary::default()
        }
    );
    assert_eq!(
        deleted_names(&impact),
        ["PersistentVolumeClaim databases/data-pg-0"]
    );
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("in use by pg-0") && n.contains("pvc-protection")),
        "{:?}",
        impact.notes
    );
}

#[test]
fn a_retained_volume_keeps_its_data() {
    let mut cluster = database(Retention::default()).0;
    cluster.insert(pv("pv-0", "databases", "data-pg-0", false));
    let impact = estimate(
        &delete(
            ("", "v1", "persistentvolumeclaims"),
            "PersistentVolumeClaim",
            "databases",
            "data-pg-0",
            None,
        ),
        &cluster,
    );
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 1,
            ..Summary::default()
        }
    );
    assert!(impact.notes.iter().any(|n| n.contains("reclaims with Retain")));
}

#[test]
fn deleting_a_bound_volume_loses_its_data() {
    let (cluster, _) = database(Retention::default());
    let impact = estimate(
        &delete(
            ("", "v1", "persistentvolumes"),
            "PersistentVolume",
            "",
            "pv-1",
            None,
        ),
        &cluster,
    );
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 1,
            data_loss: 1,
            ..Summary::default()
        }
    );
    assert_eq!(
        (
            impact.volumes[0].namespace.as_str(),
            impact.volumes[0].claim.as_str()
        ),
        ("databases", "data-pg-1")
    );
}

#[test]
fn an_eviction_within_budget_breaks_nothing() {
    let (cluster, _) = database(Retention::default());
    let evict = review(
        "CREATE",
        ("", "v1", "pods"),
        "Eviction",
        "databases",
        "pg-0",
        json!({"subResource": "eviction",
        "object": {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "pg-0", "namespace": "databases"}}}),
    );
    let impact = estimate(&evict, &cluster);
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 1,
            pods_disrupted: 1,
            ..Summary::default()
        }
    );
    assert_eq!(impact.pods[0].reason, "evicted");
    assert!(impact.pods[0].replaced, "the StatefulSet recreates the pod");
    assert_eq!(
        (
            impact.pdbs[0].current_healthy,
            impact.pdbs[0].healthy_after,
            impact.pdbs[0].violated
        ),
        (3, 2, false)
    );
    assert_eq!((impact.quorum[0].ready_after, impact.quorum[0].lost), (2, false));
    assert_eq!(
        (impact.workloads[0].ready_worst, impact.workloads[0].ready_after),
        (2, 3)
    );
}

#[test]
fn a_delete_while_another_pod_is_terminating_breaks_the_budget() {
    let (mut cluster, sts) = database(Retention::default());
    let mut terminating = owned_by(
        with_labels(
            pod_with_claims("databases", "pg-2", "node-a", &["data-pg-2"]),
            &[("app", "pg")],
        ),
        &sts,
    );
    terminating.deletion_timestamp =
        policies_cel::cluster::object::deletion_timestamp("2026-11-25T10:00:00Z");
    cluster.insert(terminating);
    let impact = estimate(
        &delete(("", "v1", "pods"), "Pod", "databases", "pg-1", None),
        &cluster,
    );
    assert_eq!(impact.summary.pods_disrupted, 1);
    let pdb = &impact.pdbs[0];
    assert_eq!(
        (
            pdb.desired_healthy,
            pdb.current_healthy,
            pdb.healthy_after,
            pdb.violated
        ),
        (2, 2, 1, true)
    );
    assert_eq!(impact.summary.pdb_violations, 1);
    // Deleting the terminating pod itself disrupts nothing new.
    let again = estimate(
        &delete(("", "v1", "pods"), "Pod", "databases", "pg-2", None),
        &cluster,
    );
    assert_eq!(again.summary.pods_disrupted, 0);
    assert_eq!(again.summary.deleted, 1);
}

/// Deployment `web` → ReplicaSet `web-7d9f8` → 4 pods on two nodes, behind a Service.
fn web() -> ClusterModel {
    let deploy = deployment("shop", "web", 4, "web");
    let rs = owned_by(replicaset("shop", "web-7d9f8", 4, "web"), &deploy);
    let mut objects = vec![service("shop", "web", "web")];
    for i in 0..4 {
        let node = if i < 2 { "node-a" } else { "node-b" };
        objects.push(owned_by(
            with_labels(
                pod("shop", &format!("web-7d9f8-{i}"), node, true),
                &[("app", "web")],
            ),
            &rs,
        ));
    }
    objects.extend([
        deploy,
        rs,
        object(
            "Node",
            "",
            "node-a",
            Spec::Node {
                unschedulable: false,
                taints: Box::default(),
            },
        ),
    ]);
    model(objects)
}

#[test]
fn deleting_a_deployment_cascades_through_its_replicaset() {
    let impact = estimate(
        &delete(("apps", "v1", "deployments"), "Deployment", "shop", "web", None),
        &web(),
    );
    assert_eq!(impact.summary.deleted, 6);
    assert_eq!(impact.summary.pods_disrupted, 4);
    assert_eq!(impact.summary.workloads_down, 1);
    assert_eq!(impact.summary.services_without_endpoints, 1);
    assert_eq!(impact.workloads[0].workload.display(), "Deployment shop/web");
}

#[test]
fn deleting_one_managed_pod_is_replaced() {
    let impact = estimate(
        &delete(("", "v1", "pods"), "Pod", "shop", "web-7d9f8-0", None),
        &web(),
    );
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 1,
            pods_disrupted: 1,
            ..Summary::default()
        }
    );
    assert!(impact.pods[0].replaced);
    let workload = &impact.workloads[0];
    assert_eq!(
        (workload.ready_before, workload.ready_worst, workload.ready_after),
        (4, 3, 4)
    );
    assert_eq!(
        (impact.services[0].ready_before, impact.services[0].ready_after),
        (4, 3)
    );
}

#[test]
fn deleting_a_node_stops_its_pods() {
    let impact = estimate(&delete(("", "v1", "nodes"), "Node", "", "node-a", None), &web());
    assert_eq!(impact.summary.deleted, 3);
    assert_eq!(impact.summary.pods_disrupted, 2);
    assert!(impact.pods.iter().all(|p| p.node.as_deref() == Some("node-a")));
    assert_eq!(impact.summary.workloads_down, 0);
}

#[test]
fn deleting_a_crd_deletes_its_instances_and_what_they_own() {
    let crd = object(
        "CustomResourceDefinition",
        "",
        "rabbitmqclusters.rabbitmq.com",
        Spec::CustomResourceDefinition {
            group: "rabbitmq.com".into(),
            kind: "RabbitmqCluster".into(),
            plural: "rabbitmqclusters".into(),
            namespaced: true,
        },
    );
    let cr = object("RabbitmqCluster", "mq", "rabbit", Spec::Other);
    let sts = owned_by(
        statefulset("mq", "rabbit-server", 3, "rabbit", &[], Retention::default()),
        &cr,
    );
    let mut objects = vec![crd, cr, sts.clone()];
    for i in 0..3 {
        objects.push(owned_by(
            with_labels(
                pod("mq", &format!("rabbit-server-{i}"), "node-a", true),
                &[("app", "rabbit")],
            ),
            &sts,
        ));
    }
    let impact = estimate(
        &delete(
            ("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
            "CustomResourceDefinition",
            "",
            "rabbitmqclusters.rabbitmq.com",
            None,
        ),
        &model(objects),
    );
    assert_eq!(impact.summary.deleted, 6, "{:#?}", deleted_names(&impact));
    assert_eq!(impact.summary.quorum_lost, 1);
    assert!(deleted_names(&impact).contains(&"RabbitmqCluster mq/rabbit".to_owned()));
}

#[test]
fn deleting_a_custom_resource_cascades_through_it() {
    let cr = object("RabbitmqCluster", "mq", "rabbit", Spec::Other);
    let crd = object(
        "CustomResourceDefinition",
        "",
        "rabbitmqclusters.rabbitmq.com",
        Spec::CustomResourceDefinition {
            group: "rabbitmq.com".into(),
            kind: "RabbitmqCluster".into(),
            plural: "rabbitmqclusters".into(),
            namespaced: true,
        },
    );
    let sts = owned_by(
        statefulset("mq", "rabbit-server", 3, "rabbit", &[], Retention::default()),
        &cr,
    );
    let impact = estimate(
        &delete(
            ("rabbitmq.com", "v1beta1", "rabbitmqclusters"),
            "RabbitmqCluster",
            "mq",
            "rabbit",
            None,
        ),
        &model(vec![crd, cr, sts]),
    );
    assert_eq!(
        deleted_names(&impact),
        ["RabbitmqCluster mq/rabbit", "StatefulSet mq/rabbit-server"]
    );
}

#[test]
fn a_dependent_with_another_live_owner_is_kept() {
    let a = replicaset("shop", "a", 1, "x");
    let b = replicaset("shop", "b", 1, "x");
    let mut shared = owned_by(pod("shop", "shared", "node-a", true), &a);
    shared = owned_by(shared, &b);
    std::sync::Arc::make_mut(&mut shared.owners)[1].controller = false;
    let impact = estimate(
        &delete(("apps", "v1", "replicasets"), "ReplicaSet", "shop", "a", None),
        &model(vec![a, b, shared]),
    );
    assert_eq!(impact.summary.deleted, 1);
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("also owned by ReplicaSet b")),
        "{:?}",
        impact.notes
    );
}

#[test]
fn jobs_orphan_their_pods_by_default() {
    let job = object("Job", "batch", "nightly", Spec::Job { selector: None });
    let worker = owned_by(pod("batch", "nightly-x", "node-a", true), &job);
    let mut key = job.key.clone();
    key.group = "batch".into();
    let mut job = job;
    job.key = key;
    let impact = estimate(
        &delete(("batch", "v1", "jobs"), "Job", "batch", "nightly", None),
        &model(vec![job, worker]),
    );
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 1,
            ..Summary::default()
        }
    );
}

#[test]
fn an_object_the_model_has_never_seen_changes_nothing() {
    let impact = estimate(
        &delete(STATEFULSETS, "StatefulSet", "databases", "ghost", None),
        &model(vec![]),
    );
    assert_eq!(impact.summary, Summary::default());
    assert!(impact.notes[0].contains("not in the cluster model"));
    assert_eq!(impact.action, "delete StatefulSet databases/ghost");
}

/// The StatefulSet `pg` of [`database`] as kube-apiserver sends it in a DELETE's `oldObject`.
fn pg_as_stored() -> serde_json::Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "pg", "namespace": "databases", "uid": uid("StatefulSet", "pg").to_string()},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "pg"}},
            "serviceName": "pg",
            "template": {"metadata": {"labels": {"app": "pg"}}, "spec": {"containers": [{"name": "pg", "image": "postgres:16"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}}],
        },
    })
}

#[test]
fn an_object_the_model_has_not_caught_up_with_is_judged_from_its_old_object() {
    // The model lags: it holds the pods and claims but not yet their StatefulSet (created a moment
    // ago, or its watch still reconnecting). The DELETE's oldObject names it, with its uid.
    let lagging = model(database_without_its_statefulset(Retention::default()).0);
    let deleting = |old_object: serde_json::Value| {
        review(
            "DELETE",
            STATEFULSETS,
            "StatefulSet",
            "databases",
            "pg",
            json!({"object": null, "oldObject": old_object}),
        )
    };
    let impact = estimate(&deleting(pg_as_stored()), &lagging);
    assert_eq!(
        (
            impact.summary.deleted,
            impact.summary.pods_disrupted,
            impact.summary.quorum_lost
        ),
        (4, 3, 1),
        "{:?}",
        impact.notes
    );
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("judged with the request's oldObject"))
    );

    // An oldObject of another object changes nothing.
    let mut elsewhere = pg_as_stored();
    elsewhere["metadata"]["name"] = json!("other");
    assert_eq!(
        estimate(&deleting(elsewhere), &lagging).summary,
        Summary::default()
    );
}

#[test]
fn a_dangling_owner_reference_is_reported() {
    let gone = replicaset("shop", "web-old", 1, "web");
    let orphan = owned_by(pod("shop", "web-old-x", "node-a", true), &gone);
    let impact = estimate(
        &delete(("", "v1", "pods"), "Pod", "shop", "web-old-x", None),
        &model(vec![orphan]),
    );
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 1,
            pods_disrupted: 1,
            ..Summary::default()
        }
    );
    assert!(!impact.pods[0].replaced, "no live controller recreates it");
    assert_eq!(impact.stale_owners.len(), 1);
    assert_eq!(
        (
            impact.stale_owners[0].owner_kind.as_str(),
            impact.stale_owners[0].owner_name.as_str(),
            impact.stale_owners[0].live_uid.as_deref()
        ),
        ("ReplicaSet", "web-old", None)
    );
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("which no longer exists: a stale ownerReference")),
        "{:?}",
        impact.notes
    );
}

#[test]
fn an_owner_reference_to_a_recreated_namesake_is_reported() {
    let old = replicaset("shop", "web", 1, "web");
    let mut recreated = replicaset("shop", "web", 1, "web");
    recreated.uid = Some("uid-replicaset-web-recreated".into());
    let stale = owned_by(pod("shop", "web-x", "node-a", true), &old);
    let impact = estimate(
        &delete(("", "v1", "pods"), "Pod", "shop", "web-x", None),
        &model(vec![recreated, stale]),
    );
    assert!(
        impact
            .notes
            .iter()
            .any(|n| n.contains("but the live ReplicaSet web has uid uid-replicaset-web-recreated")),
        "{:?}",
        impact.notes
    );
    assert_eq!(
        impact.stale_owners[0].live_uid.as_deref(),
        Some("uid-replicaset-web-recreated")
    );
}

#[test]
fn deleting_a_service_in_use_leaves_its_clients_without_endpoints() {
    let (cluster, _) = database(Retention::default());
    let impact = estimate(
        &delete(("", "v1", "services"), "Service", "databases", "pg", None),
        &cluster,
    );
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 1,
            services_without_endpoints: 1,
            ..Summary::default()
        }
    );
    assert_eq!(
        (
            impact.services[0].name.as_str(),
            impact.services[0].ready_before,
            impact.services[0].ready_after
        ),
        ("pg", 3, 0)
    );
}

#[test]
fn a_leftover_claim_nobody_uses_is_not_live_data() {
    let (mut cluster, _) = database(Retention::default());
    cluster.insert(pvc("databases", "data-pg-7", "pv-7"));
    cluster.insert(pv("pv-7", "databases", "data-pg-7", true));
    let impact = estimate(
        &delete(
            ("", "v1", "persistentvolumeclaims"),
            "PersistentVolumeClaim",
            "databases",
            "data-pg-7",
            None,
        ),
        &cluster,
    );
    assert_eq!(impact.summary.data_loss, 1, "the data is still destroyed");
    assert!(impact.volumes[0].in_use_by.is_empty());
    assert_eq!(
        impact.volumes[0].stateful_set, None,
        "ordinal 7 is beyond the 3 current replicas"
    );
}

#[test]
fn a_job_deleted_with_background_stops_its_pods_but_is_not_a_workload_down() {
    let mut job = object("Job", "batch", "nightly", Spec::Job { selector: None });
    job.key.group = "batch".into();
    let worker = owned_by(pod("batch", "nightly-x", "node-a", true), &job);
    let impact = estimate(
        &delete(
            ("batch", "v1", "jobs"),
            "Job",
            "batch",
            "nightly",
            Some("Background"),
        ),
        &model(vec![job, worker]),
    );
    // workloadsDown counts Deployments, StatefulSets, DaemonSets and ReplicaSets only.
    assert_eq!(
        impact.summary,
        Summary {
            deleted: 2,
            pods_disrupted: 1,
            ..Summary::default()
        }
    );
    assert!(impact.workloads.is_empty());
}

#[test]
fn deleting_a_statefulset_leaves_a_max_unavailable_budget_expecting_nothing() {
    let (mut cluster, _) = database(Retention::default());
    // The same database, its budget a maxUnavailable one: the disruption controller expects
    // as many pods as the StatefulSet's scale, and a deleted StatefulSet expects none.
    let mut budget = pdb_min_available("databases", "pg", "pg", IntOrPercent::Int(2));
    budget.spec = Spec::PodDisruptionBudget {
        selector: policies_cel::cluster::object::Selector {
            match_labels: vec![("app".into(), "pg".into())].into(),
            expressions: Box::default(),
        },
        min_available: None,
        max_unavailable: Some(IntOrPercent::Int(1)),
        always_allow_unhealthy: false,
    };
    cluster.insert(budget);
    let impact = estimate(
        &delete(STATEFULSETS, "StatefulSet", "databases", "pg", None),
        &cluster,
    );
    assert_eq!(impact.summary.pods_disrupted, 3);
    assert_eq!(impact.summary.pdb_violations, 0);
    assert_eq!(
        (impact.pdbs[0].desired_healthy, impact.pdbs[0].healthy_after),
        (0, 0)
    );
}

/// The database with pg-1 and pg-2 running but not ready (the budget, minAvailable 2, is not
/// met), its budget's `unhealthyPodEvictionPolicy` AlwaysAllow or not.
fn database_mostly_unready(always_allow_unhealthy: bool) -> ClusterModel {
    let (mut cluster, sts) = database(Retention::default());
    for name in ["pg-1", "pg-2"] {
        let claim = format!("data-{name}");
        let mut unready = owned_by(
            with_labels(pod("databases", name, "node-a", false), &[("app", "pg")]),
            &sts,
        );
        if let Spec::Pod(spec) = &mut unready.spec {
            spec.claims = [Text::from(claim.as_str())].into();
        }
        cluster.insert(unready);
    }
    let mut budget = pdb_min_available("databases", "pg", "pg", IntOrPercent::Int(2));
    if let Spec::PodDisruptionBudget {
        always_allow_unhealthy: always,
        ..
    } = &mut budget.spec
    {
        *always = always_allow_unhealthy;
    }
    cluster.insert(budget);
    cluster
}

fn evict_pg_1() -> policies_cel::Request {
    review(
        "CREATE",
        ("", "v1", "pods"),
        "Eviction",
        "databases",
        "pg-1",
        json!({"subResource": "eviction",
        "object": {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "pg-1", "namespace": "databases"}}}),
    )
}

#[test]
fn an_eviction_is_named_as_one() {
    let impact = estimate(&evict_pg_1(), &database_mostly_unready(false));
    assert_eq!(impact.action, "evict Pod databases/pg-1");
    assert_eq!(impact.activity, "evicting Pod databases/pg-1");
}

#[test]
fn an_unready_pod_may_not_go_while_its_budget_is_not_met_by_default() {
    // IfHealthyBudget (the default): a running pod that is not ready goes only while the
    // budget is met; here 1 of 2 required pods is healthy.
    let impact = estimate(&evict_pg_1(), &database_mostly_unready(false));
    let pdb = &impact.pdbs[0];
    assert_eq!(
        (
            pdb.desired_healthy,
            pdb.current_healthy,
            pdb.healthy_after,
            pdb.violated
        ),
        (2, 1, 1, true)
    );
    assert_eq!(impact.summary.pdb_violations, 1);
}

#[test]
fn an_unready_pod_may_always_go_when_its_budget_says_always_allow() {
    let impact = estimate(&evict_pg_1(), &database_mostly_unready(true));
    let pdb = &impact.pdbs[0];
    assert_eq!(
        (pdb.current_healthy, pdb.healthy_after, pdb.violated),
        (1, 1, false)
    );
    assert_eq!(impact.summary.pdb_violations, 0);
}

#[test]
fn a_ready_pod_still_breaks_a_budget_that_says_always_allow() {
    // AlwaysAllow concerns pods that are not ready; the healthy pg-0 still counts.
    let cluster = database_mostly_unready(true);
    let impact = estimate(
        &delete(("", "v1", "pods"), "Pod", "databases", "pg-0", None),
        &cluster,
    );
    assert_eq!((impact.pdbs[0].healthy_after, impact.pdbs[0].violated), (0, true));
}

/// A DELETE of pod `name` of the database with `gracePeriodSeconds` `grace`.
fn delete_pod_with_grace(name: &str, grace: i64) -> policies_cel::Request {
    review(
        "DELETE",
        ("", "v1", "pods"),
        "Pod",
        "databases",
        name,
        json!({"options": {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "gracePeriodSeconds": grace}, "object": null}),
    )
}

/// The database, its pods on `node-a`, with the Node `node-a` carrying `taints` (key, effect).
fn database_on_node(taints: &[(&str, &str)]) -> ClusterModel {
    let (mut cluster, _) = database(Retention::default());
    let taints = taints
        .iter()
        .map(|(key, effect)| policies_cel::cluster::object::Taint {
            key: Text::from(*key),
            value: None,
            effect: Text::from(*effect),
        })
        .collect();
    cluster.insert(object(
        "Node",
        "",
        "node-a",
        Spec::Node {
            unschedulable: false,
            taints,
        },
    ));
    cluster
}

#[test]
fn force_deleting_a_statefulset_member_on_an_unreachable_node_lets_it_run_twice() {
    let unreachable = database_on_node(&[
        ("node.kubernetes.io/unreachable", "NoSchedule"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
    ]);
    let impact = estimate(&delete_pod_with_grace("pg-1", 0), &unreachable);
    assert_eq!(impact.unconfirmed_deletions.len(), 1, "{:?}", impact.notes);
    let unconfirmed = &impact.unconfirmed_deletions[0];
    assert_eq!(
        (
            unconfirmed.namespace.as_str(),
            unconfirmed.pod.as_str(),
            unconfirmed.node.as_str(),
            unconfirmed.stateful_set.as_str(),
            unconfirmed.claims.clone()
        ),
        ("databases", "pg-1", "node-a", "pg", vec!["data-pg-1".to_owned()])
    );
    // The figures of the contract are those of any pod deletion.
    assert_eq!(impact.summary.pods_disrupted, 1);
}

#[test]
fn a_graceful_or_confirmed_deletion_is_not_unconfirmed() {
    let unreachable = database_on_node(&[("node.kubernetes.io/unreachable", "NoExecute")]);
    let reachable = database_on_node(&[]);
    let not_ready = database_on_node(&[("node.kubernetes.io/not-ready", "NoExecute")]);
    let (without_node, _) = database(Retention::default());
    for (label, cluster, grace) in [
        ("a grace period on an unreachable node", &unreachable, 30),
        ("grace 0 on a reachable node", &reachable, 0),
        ("grace 0 on a node whose kubelet reports not ready", &not_ready, 0),
        ("grace 0 on a node that no longer exists", &without_node, 0),
    ] {
        let impact = estimate(&delete_pod_with_grace("pg-1", grace), cluster);
        assert!(impact.unconfirmed_deletions.is_empty(), "{label}");
    }
}
