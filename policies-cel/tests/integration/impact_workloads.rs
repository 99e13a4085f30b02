//! The impact of workload UPDATEs (and `scale` subresource writes), rule by rule: scale-downs
//! (ReplicaSet ranking, StatefulSet ordinals and claim retention), template rollouts (Deployment
//! RollingUpdate arithmetic and Recreate, paused Deployments, StatefulSet partitions and OnDelete,
//! DaemonSet maxUnavailable/maxSurge), each on a small hand-built cluster model.

use policies_cel::Request;
use policies_cel::cluster::object::{
    DeploymentStrategy, IntOrPercent, Labels, OwnerRef, Phase, PodSpec, Retention, Selector,
    StatefulSetStrategy,
};
use policies_cel::cluster::{ClusterModel, Object, ObjectKey, Spec};
use policies_cel::impact::{Impact, estimate};
use serde_json::{Value as Json, json};

const NS: &str = "prod";

// ---------------------------------------------------------------------------------------------
// Cluster builders
// ---------------------------------------------------------------------------------------------

fn labels(pairs: &[(&str, &str)]) -> Labels {
    let mut labels: Vec<_> = pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
    labels.sort();
    labels.into()
}

fn app(name: &str) -> Selector {
    Selector {
        match_labels: labels(&[("app", name)]),
        expressions: Box::default(),
    }
}

fn object(group: &str, kind: &str, name: &str, spec: Spec) -> Object {
    let namespace = if kind == "PersistentVolume" { "" } else { NS };
    Object {
        key: ObjectKey::new(group, kind, namespace, name),
        api_version: if group.is_empty() {
            "v1".into()
        } else {
            format!("{group}/v1").into()
        },
        uid: Some(format!("uid-{kind}-{name}").into()),
        labels: Labels::default(),
        annotations: Labels::default(),
        owners: Default::default(),
        deletion_timestamp: None,
        spec,
    }
}

fn controlled_by(mut object: Object, owner: &Object) -> Object {
    let mut owners = object.owners.to_vec();
    owners.push(OwnerRef {
        uid: owner.uid.clone().unwrap(),
        api_version: owner.api_version.clone(),
        kind: owner.key.kind.clone(),
        name: owner.key.name.clone(),
        controller: true,
        block_owner_deletion: true,
    });
    object.owners = owners.into();
    object
}

/// A Running pod of `owner` labelled `app=<app>`, on a node of its own.
fn pod(name: &str, owner: &Object, app: &str, ready: bool) -> Object {
    let spec = PodSpec {
        node: Some(format!("node-{name}").into()),
        phase: Phase::Running,
        ready,
        ..PodSpec::default()
    };
    let mut pod = controlled_by(object("", "Pod", name, Spec::Pod(spec)), owner);
    pod.labels = labels(&[("app", app)]);
    pod
}

fn rolling(max_unavailable: IntOrPercent, max_surge: IntOrPercent) -> DeploymentStrategy {
    DeploymentStrategy::RollingUpdate {
        max_unavailable,
        max_surge,
    }
}

/// A Deployment `name` with one ReplicaSet running `pods` (name, ready), all labelled `app=name`.
fn deployment(model: &mut ClusterModel, name: &str, strategy: DeploymentStrategy, pods: &[(&str, bool)]) {
    let replicas = pods.len() as i64;
    let deployment = object(
        "apps",
        "Deployment",
        name,
        Spec::Deployment {
            replicas,
            selector: app(name),
            strategy,
            paused: false,
        },
    );
    let rs = controlled_by(
        object(
            "apps",
            "ReplicaSet",
            &format!("{name}-5d8f"),
            Spec::ReplicaSet {
                replicas,
                selector: app(name),
            },
        ),
        &deployment,
    );
    for (pod_name, ready) in pods {
        model.insert(pod(pod_name, &rs, name, *ready));
    }
    model.insert(rs);
    model.insert(deployment);
}

/// A StatefulSet `name` with `replicas` ready pods `name-0..`.
fn stateful_set(
    model: &mut ClusterModel,
    name: &str,
    replicas: i64,
    strategy: StatefulSetStrategy,
    claim_templates: &[&str],
    retention: Retention,
) {
    let set = object(
        "apps",
        "StatefulSet",
        name,
        Spec::StatefulSet {
            replicas,
            selector: app(name),
            strategy,
            parallel: false,
            claim_templates: claim_templates.iter().map(|t| (*t).into()).collect(),
            retention,
        },
    );
    for ordinal in 0..replicas {
        model.insert(pod(&format!("{name}-{ordinal}"), &set, name, true));
    }
    model.insert(set);
}

/// A DaemonSet `name` with `count` ready pods.
fn daemon_set(
    model: &mut ClusterModel,
    name: &str,
    count: usize,
    max_unavailable: IntOrPercent,
    max_surge: IntOrPercent,
) {
    let set = object(
        "apps",
        "DaemonSet",
        name,
        Spec::DaemonSet {
            selector: app(name),
            max_unavailable,
            max_surge,
            placement: Box::default(),
        },
    );
    for n in 0..count {
        model.insert(pod(&format!("{name}-{n:02}"), &set, name, true));
    }
    model.insert(set);
}

fn service(model: &mut ClusterModel, name: &str, app: &str) {
    model.insert(object(
        "",
        "Service",
        name,
        Spec::Service {
            selector: Some(labels(&[("app", app)])),
            external: Box::default(),
            ports: Box::default(),
        },
    ));
}

fn pdb(
    model: &mut ClusterModel,
    name: &str,
    app_name: &str,
    min: Option<IntOrPercent>,
    max: Option<IntOrPercent>,
) {
    let spec = Spec::PodDisruptionBudget {
        selector: app(app_name),
        min_available: min,
        max_unavailable: max,
        always_allow_unhealthy: false,
    };
    model.insert(object("policy", "PodDisruptionBudget", name, spec));
}

/// A claim bound to a volume of its own.
fn claim(model: &mut ClusterModel, name: &str, volume: &str, reclaim_delete: bool) {
    model.insert(object(
        "",
        "PersistentVolumeClaim",
        name,
        Spec::PersistentVolumeClaim {
            volume: Some(volume.into()),
        },
    ));
    let claim = Some((NS.into(), name.into()));
    model.insert(object(
        "",
        "PersistentVolume",
        volume,
        Spec::PersistentVolume {
            reclaim_delete,
            claim,
            node: None,
        },
    ));
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

fn plural(kind: &str) -> String {
    format!("{}s", kind.to_ascii_lowercase())
}

/// The request as the gateway reads it: from the review's text, its objects kept as text until
/// read (so an `oldObject` the estimate only compares is never parsed).
fn review(kind: &str, name: &str, sub_resource: Option<&str>, old: Json, new: Json) -> Request {
    let review = review_json(kind, name, sub_resource, old, new);
    Request::from_wire(&serde_json::to_vec(&review).unwrap()).unwrap()
}

fn review_json(kind: &str, name: &str, sub_resource: Option<&str>, old: Json, new: Json) -> Json {
    let (request_kind, request_group) = if sub_resource.is_some() {
        ("Scale", "autoscaling")
    } else {
        (kind, "apps")
    };
    let mut request = json!({
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": request_group, "version": "v1", "kind": request_kind},
        "resource": {"group": "apps", "version": "v1", "resource": plural(kind)},
        "requestKind": {"group": request_group, "version": "v1", "kind": request_kind},
        "requestResource": {"group": "apps", "version": "v1", "resource": plural(kind)},
        "name": name,
        "namespace": NS,
        "operation": "UPDATE",
        "userInfo": {"username": "system:serviceaccount:ops:operator"},
        "object": new,
        "oldObject": old,
        "dryRun": false,
        "options": {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"},
    });
    if let Some(sub) = sub_resource {
        request["subResource"] = json!(sub);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

fn workload_json(kind: &str, name: &str, spec: Json) -> Json {
    json!({
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": NS, "uid": format!("uid-{kind}-{name}")},
        "spec": spec,
    })
}

/// A pod template labelled `app=<app>` running `image`.
fn template(app: &str, image: &str) -> Json {
    json!({
        "metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": app, "image": image}]},
    })
}

/// UPDATE of `kind/name` from `old` to `new` spec.
fn update(kind: &str, name: &str, old: Json, new: Json) -> Request {
    review(
        kind,
        name,
        None,
        workload_json(kind, name, old),
        workload_json(kind, name, new),
    )
}

/// UPDATE of `kind/name`'s `scale` subresource with the Scale's `spec`.
fn scale(kind: &str, name: &str, old_replicas: i64, spec: Json) -> Request {
    let scale = |spec: Json| {
        json!({
            "apiVersion": "autoscaling/v1",
            "kind": "Scale",
            "metadata": {"name": name, "namespace": NS},
            "spec": spec,
        })
    };
    review(
        kind,
        name,
        Some("scale"),
        scale(json!({"replicas": old_replicas})),
        scale(spec),
    )
}

fn deployment_spec(name: &str, replicas: i64, image: &str, strategy: Json) -> Json {
    json!({
        "replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": template(name, image),
        "strategy": strategy,
    })
}

fn rolling_json(max_unavailable: Json, max_surge: Json) -> Json {
    json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable, "maxSurge": max_surge}})
}

fn stateful_spec(name: &str, replicas: i64, image: &str, extra: Json) -> Json {
    let mut spec = json!({
        "replicas": replicas,
        "serviceName": name,
        "selector": {"matchLabels": {"app": name}},
        "template": template(name, image),
        "podManagementPolicy": "OrderedReady",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    spec
}

/// A `volumeClaimTemplates` entry.
fn claim_template(name: &str) -> Json {
    json!({
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    })
}

fn daemon_spec(name: &str, image: &str, max_unavailable: Json, max_surge: Json) -> Json {
    json!({
        "selector": {"matchLabels": {"app": name}},
        "template": template(name, image),
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable, "maxSurge": max_surge}},
    })
}

// ---------------------------------------------------------------------------------------------
// Reading the estimate
// ---------------------------------------------------------------------------------------------

/// `[deleted, podsDisrupted, dataLoss, servicesWithoutEndpoints, pdbViolations, workloadsDown, quorumLost]`.
fn figures(impact: &Impact) -> [usize; 7] {
    let s = &impact.summary;
    [
        s.deleted,
        s.pods_disrupted,
        s.data_loss,
        s.services_without_endpoints,
        s.pdb_violations,
        s.workloads_down,
        s.quorum_lost,
    ]
}

/// `(name, replaced)` of each stopped pod, in the estimate's order.
fn stopped(impact: &Impact) -> Vec<(&str, bool)> {
    impact
        .pods
        .iter()
        .map(|p| (p.name.as_str(), p.replaced))
        .collect()
}

/// `(kind name, before, after, worst)` of each workload.
fn workloads(impact: &Impact) -> Vec<(String, usize, usize, usize)> {
    impact
        .workloads
        .iter()
        .map(|w| {
            (
                format!("{} {}", w.workload.kind, w.workload.name),
                w.ready_before,
                w.ready_after,
                w.ready_worst,
            )
        })
        .collect()
}

/// `(name, before, after, majority, lost)` of each quorum.
fn quorum(impact: &Impact) -> Vec<(&str, usize, usize, usize, bool)> {
    impact
        .quorum
        .iter()
        .map(|q| (q.name.as_str(), q.ready_before, q.ready_after, q.majority, q.lost))
        .collect()
}

/// `(name, desired, current, after, violated)` of each PDB.
fn pdbs(impact: &Impact) -> Vec<(&str, usize, usize, usize, bool)> {
    impact
        .pdbs
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                p.desired_healthy,
                p.current_healthy,
                p.healthy_after,
                p.violated,
            )
        })
        .collect()
}

/// `(name, before, after)` of each Service.
fn services(impact: &Impact) -> Vec<(&str, usize, usize)> {
    impact
        .services
        .iter()
        .map(|s| (s.name.as_str(), s.ready_before, s.ready_after))
        .collect()
}

fn deleted(impact: &Impact) -> Vec<String> {
    impact
        .deleted
        .iter()
        .map(|d| format!("{} {}", d.object.kind, d.object.name))
        .collect()
}

#[track_caller]
fn has_note(impact: &Impact, fragment: &str) {
    assert!(
        impact.notes.iter().any(|n| n.contains(fragment)),
        "no note with {fragment:?} in {:#?}",
        impact.notes
    );
}

fn no_retention() -> Retention {
    Retention::default()
}

fn sts_rolling(partition: i64) -> StatefulSetStrategy {
    StatefulSetStrategy::RollingUpdate {
        partition,
        max_unavailable: IntOrPercent::Int(1),
    }
}

// ---------------------------------------------------------------------------------------------
// StatefulSet scale-down
// ---------------------------------------------------------------------------------------------

#[test]
fn statefulset_5_to_2_removes_the_highest_ordinals_and_loses_quorum() {
    let mut model = ClusterModel::new();
    stateful_set(&mut model, "db", 5, sts_rolling(0), &["data"], no_retention());
    let claims = json!({"volumeClaimTemplates": [claim_template("data")]});
    let request = update(
        "StatefulSet",
        "db",
        stateful_spec("db", 5, "pg:16", claims.clone()),
        stateful_spec("db", 2, "pg:16", claims),
    );

    let impact = estimate(&request, &model);

    assert_eq!(figures(&impact), [3, 3, 0, 0, 0, 0, 1]);
    assert_eq!(
        stopped(&impact),
        [("db-4", false), ("db-3", false), ("db-2", false)]
    );
    assert!(
        impact
            .pods
            .iter()
            .all(|p| p.reason == "scaled down: replicas 5 → 2"),
        "{:?}",
        impact.pods
    );
    assert_eq!(deleted(&impact), ["Pod db-4", "Pod db-3", "Pod db-2"]);
    assert_eq!(workloads(&impact), [("StatefulSet db".to_owned(), 5, 2, 2)]);
    assert_eq!(quorum(&impact), [("db", 5, 2, 3, true)]);
    assert!(impact.volumes.is_empty());
    has_note(
        &impact,
        "keeps the claims of removed ordinals (whenScaled: Retain)",
    );
}

/// The first ordinal is the one the request's object states (`spec.ordinals.start`; absent: 0),
/// whatever the old object said: pods outside `[start, start + replicas)` are removed.
#[test]
fn statefulset_scale_down_keeps_the_ordinals_from_the_objects_start() {
    let mut model = ClusterModel::new();
    stateful_set(&mut model, "db", 5, sts_rolling(0), &[], no_retention());
    let from_one = json!({"ordinals": {"start": 1}});
    let starting_at_one = update(
        "StatefulSet",
        "db",
        stateful_spec("db", 5, "pg:16", from_one.clone()),
        stateful_spec("db", 3, "pg:16", from_one.clone()),
    );
    let impact = estimate(&starting_at_one, &model);
    assert_eq!(stopped(&impact), [("db-4", false), ("db-0", false)]);

    let start_dropped = update(
        "StatefulSet",
        "db",
        stateful_spec("db", 5, "pg:16", from_one),
        stateful_spec("db", 3, "pg:16", json!({})),
    );
    let impact = estimate(&start_dropped, &model);
    assert_eq!(stopped(&impact), [("db-4", false), ("db-3", false)]);
}

#[test]
fn statefulset_5_to_4_removes_one_pod_and_keeps_quorum() {
    let mut model = ClusterModel::new();
    stateful_set(&mut model, "db", 5, sts_rolling(0), &[], no_retention());
    let request = update(
        "StatefulSet",
        "db",
        stateful_spec("db", 5, "pg:16", json!({})),
        stateful_spec("db", 4, "pg:16", json!({})),
    );

    let impact = estimate(&request, &model);

    assert_eq!(figures(&impact), [1, 1, 0, 0, 0, 0, 0]);
    assert_eq!(stopped(&impact), [("db-4", false)]);
    assert_eq!(workloads(&impact), [("StatefulSet db".to_owned(), 5, 4, 4)]);
    assert_eq!(quorum(&impact), [("db", 5, 4, 3, false)]);
}

#[test]
fn statefulset_3_to_0_through_the_scale_subresource_takes_the_workload_down() {
    let mut model = ClusterModel::new();
    stateful_set(&mut model, "zk", 3, sts_rolling(0), &[], no_retention());
    service(&mut model, "zk", "zk");
    // A Scale without spec.replicas asks for 0.
    let request = scale("StatefulSet", "zk", 3, json!({}));

    let impact = estimate(&request, &model);

    assert_eq!(impact.action, "update scale of StatefulSet prod/zk");
    assert_eq!(impact.activity, "updating scale of StatefulSet prod/zk");
    assert_eq!(figures(&impact), [3, 3, 0, 1, 0, 1, 1]);
    assert_eq!(
        stopped(&impact),
        [("zk-2", false), ("zk-1", false), ("zk-0", false)]
    );
    assert_eq!(impact.pods[0].reason, "scaled down: replicas 3 → 0");
    assert_eq!(workloads(&impact), [("StatefulSet zk".to_owned(), 3, 0, 0)]);
    assert_eq!(services(&impact), [("zk", 3, 0)]);
    assert_eq!(quorum(&impact), [("zk", 3, 0, 2, true)]);
}

#[test]
fn statefulset_when_scaled_delete_deletes_the_claims_of_removed_ordinals() {
    let mut model = ClusterModel::new();
    let retention = Retention {
        delete_when_deleted: false,
        delete_when_scaled: true,
    };
    stateful_set(&mut model, "db", 3, sts_rolling(0), &["data"], retention);
    claim(&mut model, "data-db-0", "pv-0", true);
    claim(&mut model, "data-db-1", "pv-1", false);
    claim(&mut model, "data-db-2", "pv-2", true);
    let policy = json!({
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Delete"},
        "volumeClaimTemplates": [claim_template("data")],
    });
    let request = update(
        "StatefulSet",
        "db",
        stateful_spec("db", 3, "pg:16", policy.clone()),
        stateful_spec("db", 1, "pg:16", policy),
    );

    let impact = estimate(&request, &model);

    // Pods db-2 and db-1, their claims, and pv-2 (reclaimPolicy Delete); pv-1 is Retain.
    assert_eq!(figures(&impact), [5, 2, 1, 0, 0, 0, 1]);
    assert_eq!(
        deleted(&impact),
        [
            "Pod db-2",
            "Pod db-1",
            "PersistentVolumeClaim data-db-1",
            "PersistentVolumeClaim data-db-2",
            "PersistentVolume pv-2"
        ]
    );
    assert_eq!(impact.volumes.len(), 1);
    assert_eq!(
        (
            impact.volumes[0].claim.as_str(),
            impact.volumes[0].volume.as_deref()
        ),
        ("data-db-2", Some("pv-2"))
    );
    assert!(
        impact.deleted[2].reason.contains("whenScaled: Delete"),
        "{:?}",
        impact.deleted[2]
    );
    has_note(&impact, "PersistentVolume pv-1 reclaims with Retain");
    assert_eq!(quorum(&impact), [("db", 3, 1, 2, true)]);
}

#[test]
fn statefulset_scale_down_with_a_template_change_rolls_the_remaining_pods() {
    let mut model = ClusterModel::new();
    stateful_set(&mut model, "db", 5, sts_rolling(0), &[], no_retention());
    let request = update(
        "StatefulSet",
        "db",
        stateful_spec("db", 5, "pg:16", json!({})),
        stateful_spec("db", 3, "pg:17", json!({})),
    );

    let impact = estimate(&request, &model);

    // db-4 and db-3 go for good; db-2, db-1, db-0 are replaced one at a time (db-2 first).
    assert_eq!(figures(&impact), [5, 5, 0, 0, 0, 0, 1]);
    assert_eq!(
        stopped(&impact),
        [
            ("db-4", false),
            ("db-3", false),
            ("db-2", true),
            ("db-1", true),
            ("db-0", true)
        ]
    );
    assert_eq!(workloads(&impact), [("StatefulSet db".to_owned(), 5, 3, 2)]);
    assert_eq!(quorum(&impact), [("db", 5, 2, 3, true)]);
}

// ---------------------------------------------------------------------------------------------
// StatefulSet rollouts
// ---------------------------------------------------------------------------------------------

#[test]
fn statefulset_partition_2_of_4_replaces_ordinals_2_and_3_one_at_a_time() {
    let mut model = ClusterModel::new();
    stateful_set(&mut model, "db", 4, sts_rolling(2), &[], no_retention());
    let partition = json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}});
    let request = update(
        "StatefulSet",
        "db",
        stateful_spec("db", 4, "pg:16", partition.clone()),
        stateful_spec("db", 4, "pg:17", partition),
    );

    let impact = estimate(&request, &model);

    assert_eq!(figures(&impact), [2, 2, 0, 0, 0, 0, 0]);
    assert_eq!(stopped(&impact), [("db-3", true), ("db-2", true)]);
    assert_eq!(workloads(&impact), [("StatefulSet db".to_owned(), 4, 4, 3)]);
    assert_eq!(quorum(&impact), [("db", 4, 3, 3, false)]);
    has_note(&impact, "partition 2 keeps ordinals below 2 on the old template");
}

#[test]
fn statefulset_on_delete_changes_nothing_until_pods_are_deleted() {
    let mut model = ClusterModel::new();
    stateful_set(
        &mut model,
        "db",
        3,
        StatefulSetStrategy::OnDelete,
        &[],
        no_retention(),
    );
    let on_delete = json!({"updateStrategy": {"type": "OnDelete"}});
    let request = update(
        "StatefulSet",
        "db",
        stateful_spec("db", 3, "pg:16", on_delete.clone()),
        stateful_spec("db", 3, "pg:17", on_delete),
    );

    let impact = estimate(&request, &model);

    assert_eq!(figures(&impact), [0; 7]);
    assert!(impact.pods.is_empty());
    assert_eq!(workloads(&impact), [("StatefulSet db".to_owned(), 3, 3, 3)]);
    has_note(&impact, "OnDelete");
}

// ---------------------------------------------------------------------------------------------
// Deployment rollouts
// ---------------------------------------------------------------------------------------------

const WEB4: [(&str, bool); 4] = [("web-a", true), ("web-b", true), ("web-c", true), ("web-d", true)];

fn rollout_of_web(replicas: i64, strategy: Json) -> Request {
    update(
        "Deployment",
        "web",
        deployment_spec("web", replicas, "nginx:1.27", strategy.clone()),
        deployment_spec("web", replicas, "nginx:1.28", strategy),
    )
}

#[test]
fn deployment_rollout_with_max_unavailable_25_percent_has_one_pod_down_at_worst() {
    let mut model = ClusterModel::new();
    let strategy = rolling(IntOrPercent::Percent(25), IntOrPercent::Percent(25));
    deployment(&mut model, "web", strategy, &WEB4);
    service(&mut model, "web", "web");
    pdb(&mut model, "web", "web", Some(IntOrPercent::Int(3)), None);

    let impact = estimate(
        &rollout_of_web(4, rolling_json(json!("25%"), json!("25%"))),
        &model,
    );

    assert_eq!(figures(&impact), [4, 4, 0, 0, 0, 0, 0]);
    assert_eq!(
        stopped(&impact),
        [("web-a", true), ("web-b", true), ("web-c", true), ("web-d", true)]
    );
    assert_eq!(
        impact.pods[0].reason,
        "rollout of a new pod template (RollingUpdate: maxUnavailable 1, maxSurge 1 of 4)"
    );
    assert_eq!(workloads(&impact), [("Deployment web".to_owned(), 4, 4, 3)]);
    assert_eq!(services(&impact), [("web", 4, 3)]);
    assert_eq!(pdbs(&impact), [("web", 3, 4, 3, false)]);
}

#[test]
fn deployment_rollout_with_surge_only_keeps_every_ready_pod_until_replaced() {
    let mut model = ClusterModel::new();
    deployment(
        &mut model,
        "web",
        rolling(IntOrPercent::Int(0), IntOrPercent::Int(1)),
        &WEB4,
    );
    pdb(&mut model, "web", "web", None, Some(IntOrPercent::Int(0)));

    let impact = estimate(&rollout_of_web(4, rolling_json(json!(0), json!(1))), &model);

    // Every pod is replaced, none is down before its replacement is ready: even a budget that
    // allows no disruption holds.
    assert_eq!(figures(&impact), [4, 4, 0, 0, 0, 0, 0]);
    assert_eq!(
        stopped(&impact),
        [("web-a", true), ("web-b", true), ("web-c", true), ("web-d", true)]
    );
    assert_eq!(
        impact.pods[0].reason,
        "rollout of a new pod template (RollingUpdate: maxUnavailable 0, maxSurge 1 of 4)"
    );
    assert_eq!(workloads(&impact), [("Deployment web".to_owned(), 4, 4, 4)]);
    assert_eq!(pdbs(&impact), [("web", 4, 4, 4, false)]);
}

#[test]
fn deployment_rollout_rounds_max_unavailable_down_and_max_surge_up() {
    let mut model = ClusterModel::new();
    let pods: Vec<(String, bool)> = (0..10).map(|n| (format!("web-{n}"), true)).collect();
    let pods: Vec<(&str, bool)> = pods.iter().map(|(n, r)| (n.as_str(), *r)).collect();
    deployment(
        &mut model,
        "web",
        rolling(IntOrPercent::Percent(25), IntOrPercent::Percent(25)),
        &pods,
    );
    pdb(&mut model, "web", "web", None, Some(IntOrPercent::Int(1)));

    let impact = estimate(
        &rollout_of_web(10, rolling_json(json!("25%"), json!("25%"))),
        &model,
    );

    // 25% of 10: maxUnavailable 2 (2.5 down), maxSurge 3 (2.5 up); the budget allows only 1.
    assert_eq!(figures(&impact), [10, 10, 0, 0, 1, 0, 0]);
    assert_eq!(
        impact.pods[0].reason,
        "rollout of a new pod template (RollingUpdate: maxUnavailable 2, maxSurge 3 of 10)"
    );
    assert_eq!(workloads(&impact), [("Deployment web".to_owned(), 10, 10, 8)]);
    assert_eq!(pdbs(&impact), [("web", 9, 10, 8, true)]);
}

#[test]
fn deployment_recreate_takes_every_pod_down_at_once() {
    let mut model = ClusterModel::new();
    deployment(
        &mut model,
        "web",
        DeploymentStrategy::Recreate,
        &[("web-a", true), ("web-b", true), ("web-c", true)],
    );
    service(&mut model, "web", "web");
    pdb(&mut model, "web", "web", Some(IntOrPercent::Int(1)), None);
    let recreate = json!({"type": "Recreate"});

    let impact = estimate(&rollout_of_web(3, recreate), &model);

    assert_eq!(figures(&impact), [3, 3, 0, 1, 1, 1, 0]);
    assert_eq!(
        stopped(&impact),
        [("web-a", true), ("web-b", true), ("web-c", true)]
    );
    assert_eq!(workloads(&impact), [("Deployment web".to_owned(), 3, 3, 0)]);
    assert_eq!(services(&impact), [("web", 3, 0)]);
    assert_eq!(pdbs(&impact), [("web", 1, 3, 0, true)]);
}

#[test]
fn paused_deployment_rolls_nothing_out() {
    let mut model = ClusterModel::new();
    deployment(
        &mut model,
        "web",
        rolling(IntOrPercent::Percent(25), IntOrPercent::Percent(25)),
        &WEB4,
    );
    let mut old = deployment_spec("web", 4, "nginx:1.27", rolling_json(json!("25%"), json!("25%")));
    old["paused"] = json!(true);
    let mut new = deployment_spec("web", 4, "nginx:1.28", rolling_json(json!("25%"), json!("25%")));
    new["paused"] = json!(true);

    let impact = estimate(&update("Deployment", "web", old, new), &model);

    assert_eq!(figures(&impact), [0; 7]);
    assert!(impact.pods.is_empty());
    assert_eq!(workloads(&impact), [("Deployment web".to_owned(), 4, 4, 4)]);
    has_note(
        &impact,
        "is paused: its new pod template rolls out only once it is resumed",
    );
}

// ---------------------------------------------------------------------------------------------
// Deployment and ReplicaSet scale-down
// ---------------------------------------------------------------------------------------------

#[test]
fn deployment_4_to_1_removes_the_not_ready_pod_first() {
    let mut model = ClusterModel::new();
    let pods = [
        ("web-a", true),
        ("web-b", false),
        ("web-c", true),
        ("web-d", true),
    ];
    deployment(
        &mut model,
        "web",
        rolling(IntOrPercent::Percent(25), IntOrPercent::Percent(25)),
        &pods,
    );
    let strategy = rolling_json(json!("25%"), json!("25%"));
    let request = update(
        "Deployment",
        "web",
        deployment_spec("web", 4, "nginx:1.27", strategy.clone()),
        deployment_spec("web", 1, "nginx:1.27", strategy),
    );

    let impact = estimate(&request, &model);

    // web-b (not ready) goes first, then the ready ones by name; web-d stays.
    assert_eq!(figures(&impact), [3, 3, 0, 0, 0, 0, 0]);
    assert_eq!(
        stopped(&impact),
        [("web-b", false), ("web-a", false), ("web-c", false)]
    );
    assert_eq!(impact.pods[0].reason, "scaled down: replicas 4 → 1");
    assert_eq!(workloads(&impact), [("Deployment web".to_owned(), 3, 1, 1)]);
}

#[test]
fn replicaset_ranking_prefers_unassigned_then_pending_pods() {
    let mut model = ClusterModel::new();
    let rs = object(
        "apps",
        "ReplicaSet",
        "api",
        Spec::ReplicaSet {
            replicas: 4,
            selector: app("api"),
        },
    );
    let mut unassigned = pod("api-z", &rs, "api", false);
    if let Spec::Pod(spec) = &mut unassigned.spec {
        spec.node = None;
        spec.phase = Phase::Pending;
    }
    let mut pending = pod("api-y", &rs, "api", false);
    if let Spec::Pod(spec) = &mut pending.spec {
        spec.phase = Phase::Pending;
    }
    for p in [
        unassigned,
        pending,
        pod("api-a", &rs, "api", true),
        pod("api-b", &rs, "api", false),
    ] {
        model.insert(p);
    }
    model.insert(rs);

    let impact = estimate(&scale("ReplicaSet", "api", 4, json!({"replicas": 1})), &model);

    assert_eq!(
        stopped(&impact),
        [("api-z", false), ("api-y", false), ("api-b", false)]
    );
    assert_eq!(figures(&impact), [3, 3, 0, 0, 0, 0, 0]);
    assert_eq!(workloads(&impact), [("ReplicaSet api".to_owned(), 1, 1, 1)]);
}

#[test]
fn replicaset_template_change_affects_no_existing_pod() {
    let mut model = ClusterModel::new();
    let rs = object(
        "apps",
        "ReplicaSet",
        "api",
        Spec::ReplicaSet {
            replicas: 2,
            selector: app("api"),
        },
    );
    model.insert(pod("api-a", &rs, "api", true));
    model.insert(pod("api-b", &rs, "api", true));
    model.insert(rs);
    let spec = |image: &str| json!({"replicas": 2, "selector": {"matchLabels": {"app": "api"}}, "template": template("api", image)});

    let impact = estimate(&update("ReplicaSet", "api", spec("api:1"), spec("api:2")), &model);

    assert_eq!(figures(&impact), [0; 7]);
    assert_eq!(workloads(&impact), [("ReplicaSet api".to_owned(), 2, 2, 2)]);
    has_note(&impact, "does not replace its pods when its template changes");
}

#[test]
fn scale_up_disrupts_nothing() {
    let mut model = ClusterModel::new();
    deployment(
        &mut model,
        "web",
        rolling(IntOrPercent::Percent(25), IntOrPercent::Percent(25)),
        &WEB4,
    );

    let impact = estimate(&scale("Deployment", "web", 4, json!({"replicas": 8})), &model);

    assert_eq!(figures(&impact), [0; 7]);
    assert_eq!(workloads(&impact), [("Deployment web".to_owned(), 4, 4, 4)]);
    has_note(&impact, "scales up (replicas 4 → 8)");
}

// ---------------------------------------------------------------------------------------------
// DaemonSet rollouts
// ---------------------------------------------------------------------------------------------

fn daemon_rollout(max_unavailable: Json, max_surge: Json) -> Request {
    update(
        "DaemonSet",
        "agent",
        daemon_spec("agent", "agent:1", max_unavailable.clone(), max_surge.clone()),
        daemon_spec("agent", "agent:2", max_unavailable, max_surge),
    )
}

#[test]
fn daemonset_rollout_with_max_unavailable_1_has_one_node_down_at_worst() {
    let mut model = ClusterModel::new();
    daemon_set(
        &mut model,
        "agent",
        15,
        IntOrPercent::Int(1),
        IntOrPercent::Int(0),
    );

    let impact = estimate(&daemon_rollout(json!(1), json!(0)), &model);

    assert_eq!(figures(&impact), [15, 15, 0, 0, 0, 0, 0]);
    assert!(impact.pods.iter().all(|p| p.replaced));
    assert_eq!(
        impact.pods[0].reason,
        "rollout of a new pod template (RollingUpdate: maxUnavailable 1 of 15 scheduled)"
    );
    assert_eq!(workloads(&impact), [("DaemonSet agent".to_owned(), 15, 15, 14)]);
}

#[test]
fn daemonset_rollout_with_max_unavailable_10_percent_rounds_up() {
    let mut model = ClusterModel::new();
    daemon_set(
        &mut model,
        "agent",
        15,
        IntOrPercent::Percent(10),
        IntOrPercent::Int(0),
    );
    pdb(&mut model, "agent", "agent", None, Some(IntOrPercent::Int(1)));

    let impact = estimate(&daemon_rollout(json!("10%"), json!(0)), &model);

    // 10% of 15 = 1.5, rounded up to 2: more than the budget's 1.
    assert_eq!(figures(&impact), [15, 15, 0, 0, 1, 0, 0]);
    assert_eq!(
        impact.pods[0].reason,
        "rollout of a new pod template (RollingUpdate: maxUnavailable 2 of 15 scheduled)"
    );
    assert_eq!(workloads(&impact), [("DaemonSet agent".to_owned(), 15, 15, 13)]);
    assert_eq!(pdbs(&impact), [("agent", 14, 15, 13, true)]);
}

#[test]
fn daemonset_rollout_with_a_surge_keeps_every_node_covered() {
    let mut model = ClusterModel::new();
    daemon_set(&mut model, "agent", 3, IntOrPercent::Int(0), IntOrPercent::Int(1));

    let impact = estimate(&daemon_rollout(json!(0), json!(1)), &model);

    assert_eq!(figures(&impact), [3, 3, 0, 0, 0, 0, 0]);
    assert_eq!(workloads(&impact), [("DaemonSet agent".to_owned(), 3, 3, 3)]);
}

// ---------------------------------------------------------------------------------------------
// What the estimate cannot see
// ---------------------------------------------------------------------------------------------

#[test]
fn a_workload_the_model_has_never_seen_is_a_note() {
    let model = ClusterModel::new();
    let strategy = rolling_json(json!("25%"), json!("25%"));
    // A stand-in without a uid (what a what-if sends for an object it does not know) is not a
    // stored object: nothing is known of the Deployment.
    let mut old = workload_json(
        "Deployment",
        "ghost",
        deployment_spec("ghost", 3, "nginx:1.27", strategy.clone()),
    );
    old["metadata"]
        .as_object_mut()
        .map(|metadata| metadata.remove("uid"));
    let new = workload_json(
        "Deployment",
        "ghost",
        deployment_spec("ghost", 0, "nginx:1.28", strategy),
    );
    let request = review("Deployment", "ghost", None, old, new);

    let impact = estimate(&request, &model);

    assert_eq!(figures(&impact), [0; 7]);
    assert!(impact.workloads.is_empty());
    has_note(&impact, "Deployment prod/ghost is not in the cluster model");
}

#[test]
fn a_workload_the_model_has_not_caught_up_with_is_judged_from_its_old_object() {
    // The model holds the StatefulSet's pods but not the set (its watch lags the API server).
    // The UPDATE's oldObject is the stored set, uid included.
    let mut model = ClusterModel::new();
    stateful_set(&mut model, "db", 5, sts_rolling(0), &[], no_retention());
    model.remove(&ObjectKey::new("apps", "StatefulSet", NS, "db"));
    let request = update(
        "StatefulSet",
        "db",
        stateful_spec("db", 5, "pg:16", json!({})),
        stateful_spec("db", 2, "pg:16", json!({})),
    );

    let impact = estimate(&request, &model);

    assert_eq!(workloads(&impact), [("StatefulSet db".to_owned(), 5, 2, 2)]);
    assert_eq!(quorum(&impact), [("db", 5, 2, 3, true)]);
    has_note(
        &impact,
        "not in the cluster model yet: judged with the request's oldObject",
    );
}

#[test]
fn a_replica_count_is_not_changed_by_an_unrelated_update() {
    let mut model = ClusterModel::new();
    deployment(
        &mut model,
        "web",
        rolling(IntOrPercent::Percent(25), IntOrPercent::Percent(25)),
        &WEB4,
    );
    let spec = deployment_spec("web", 4, "nginx:1.27", rolling_json(json!("25%"), json!("25%")));
    let mut old = workload_json("Deployment", "web", spec.clone());
    let mut new = workload_json("Deployment", "web", spec);
    old["metadata"]["labels"] = json!({"team": "a"});
    new["metadata"]["labels"] = json!({"team": "b"});

    let impact = estimate(&review("Deployment", "web", None, old, new), &model);

    assert_eq!(figures(&impact), [0; 7]);
    has_note(&impact, "neither the replica count nor the pod template changes");
}

#[test]
fn an_object_that_cannot_be_projected_is_a_note() {
    let mut model = ClusterModel::new();
    deployment(
        &mut model,
        "web",
        rolling(IntOrPercent::Percent(25), IntOrPercent::Percent(25)),
        &WEB4,
    );
    let strategy = rolling_json(json!("25%"), json!("25%"));
    let mut new = deployment_spec("web", 4, "nginx:1.28", strategy.clone());
    new["replicas"] = json!("three");

    let impact = estimate(
        &update(
            "Deployment",
            "web",
            deployment_spec("web", 4, "nginx:1.27", strategy),
            new,
        ),
        &model,
    );

    assert_eq!(figures(&impact), [0; 7]);
    assert!(impact.pods.is_empty() && impact.workloads.is_empty());
    has_note(
        &impact,
        "the new Deployment prod/web cannot be read (spec.replicas",
    );
}

#[test]
fn daemonset_on_delete_changes_nothing_until_pods_are_deleted() {
    let mut model = ClusterModel::new();
    daemon_set(&mut model, "agent", 3, IntOrPercent::Int(0), IntOrPercent::Int(0));
    let spec = |image: &str| {
        json!({
            "selector": {"matchLabels": {"app": "agent"}},
            "template": template("agent", image),
            "updateStrategy": {"type": "OnDelete"},
        })
    };

    let impact = estimate(
        &update("DaemonSet", "agent", spec("agent:1"), spec("agent:2")),
        &model,
    );

    assert_eq!(figures(&impact), [0; 7]);
    assert_eq!(workloads(&impact), [("DaemonSet agent".to_owned(), 3, 3, 3)]);
    has_note(
        &impact,
        "(updateStrategy OnDelete): pods take the new template only when they are deleted",
    );
}

/// A review read from its text (objects compared and read as text) and one parsed first (objects
/// as trees) estimate alike: template changes, unchanged templates, and a repeated key whose last
/// value is the one that counts.
#[test]
fn reviews_read_from_text_and_from_trees_estimate_alike() {
    let mut model = ClusterModel::new();
    deployment(
        &mut model,
        "web",
        rolling(IntOrPercent::Int(1), IntOrPercent::Int(1)),
        &[("web-a", true), ("web-b", true)],
    );
    let strategy = rolling_json(json!(1), json!(1));
    let cases = [
        (
            deployment_spec("web", 2, "nginx:1", strategy.clone()),
            deployment_spec("web", 2, "nginx:2", strategy.clone()),
        ),
        (
            deployment_spec("web", 2, "nginx:1", strategy.clone()),
            deployment_spec("web", 2, "nginx:1", strategy.clone()),
        ),
        (
            deployment_spec("web", 2, "nginx:1", strategy.clone()),
            deployment_spec("web", 1, "nginx:1", strategy),
        ),
    ];
    for (old, new) in cases {
        let review = review_json(
            "Deployment",
            "web",
            None,
            workload_json("Deployment", "web", old),
            workload_json("Deployment", "web", new),
        );
        let text = serde_json::to_string(&review).unwrap();
        let from_text = Request::from_wire(text.as_bytes()).unwrap();
        let from_tree = Request::from_review(review).unwrap();
        assert_eq!(
            estimate(&from_text, &model),
            estimate(&from_tree, &model),
            "{text}"
        );
    }

    // The old template's text names its image twice; the last one (the new image) counts.
    let spec = deployment_spec("web", 2, "nginx:2", rolling_json(json!(1), json!(1)));
    let old = workload_json("Deployment", "web", spec);
    let review = review_json("Deployment", "web", None, old.clone(), old);
    let mut text = serde_json::to_string(&review).unwrap();
    let image = r#""image":"nginx:2""#;
    let last = text.rfind(image).unwrap();
    assert!(
        last > text.find(r#""oldObject""#).unwrap(),
        "the last image is oldObject's"
    );
    text.insert_str(last, r#""image":"nginx:1","#);
    let impact = estimate(&Request::from_wire(text.as_bytes()).unwrap(), &model);
    assert!(
        impact.pods.is_empty(),
        "the templates are equal: {:?}",
        impact.pods
    );
}

// ---------------------------------------------------------------------------------------------
// Budgets that follow the scale, and the ReplicaSet controller's co-location ranking (found by
// the reality harness, e2e/src/reality)
// ---------------------------------------------------------------------------------------------

fn web_of_four(model: &mut ClusterModel) {
    deployment(
        model,
        "web",
        rolling(IntOrPercent::Percent(25), IntOrPercent::Percent(25)),
        &[("web-a", true), ("web-b", true), ("web-c", true), ("web-d", true)],
    );
}

#[test]
fn scale_down_under_max_unavailable_moves_desired_healthy_with_the_scale() {
    let mut model = ClusterModel::default();
    web_of_four(&mut model);
    pdb(&mut model, "web", "web", None, Some(IntOrPercent::Int(1)));
    let impact = estimate(&scale("Deployment", "web", 4, json!({"replicas": 2})), &model);
    // Expected pods follow the Deployment's scale (2): desiredHealthy 1, 2 stay healthy.
    assert_eq!(pdbs(&impact), [("web", 1, 4, 2, false)]);
    assert_eq!(figures(&impact)[4], 0);
}

#[test]
fn scale_down_under_a_percentage_min_available_moves_desired_healthy_with_the_scale() {
    let mut model = ClusterModel::default();
    web_of_four(&mut model);
    pdb(&mut model, "web", "web", Some(IntOrPercent::Percent(50)), None);
    let impact = estimate(&scale("Deployment", "web", 4, json!({"replicas": 1})), &model);
    assert_eq!(pdbs(&impact), [("web", 1, 4, 1, false)]);
}

#[test]
fn scale_down_under_an_integer_min_available_still_breaks_the_budget() {
    let mut model = ClusterModel::default();
    web_of_four(&mut model);
    pdb(&mut model, "web", "web", Some(IntOrPercent::Int(3)), None);
    let impact = estimate(&scale("Deployment", "web", 4, json!({"replicas": 2})), &model);
    assert_eq!(pdbs(&impact), [("web", 3, 4, 2, true)]);
    assert_eq!(figures(&impact)[4], 1);
}

#[test]
fn a_rollout_under_max_unavailable_keeps_the_expected_count() {
    let mut model = ClusterModel::default();
    web_of_four(&mut model);
    pdb(&mut model, "web", "web", None, Some(IntOrPercent::Int(0)));
    let impact = estimate(
        &rollout_of_web(4, rolling_json(json!("25%"), json!("25%"))),
        &model,
    );
    // Replaced pods are not removed replicas: the budget still expects 4.
    assert_eq!(pdbs(&impact), [("web", 4, 4, 3, true)]);
}

#[test]
fn scale_down_removes_pods_doubled_up_on_a_node_first() {
    use policies_cel::cluster::ClusterView as _;
    let mut model = ClusterModel::default();
    web_of_four(&mut model);
    // web-c and web-d share node-shared; web-a and web-b have a node each.
    for name in ["web-c", "web-d"] {
        let key = ObjectKey::new("", "Pod", NS, name);
        let mut pod = model.get(&key).cloned().unwrap();
        if let Spec::Pod(spec) = &mut pod.spec {
            spec.node = Some("node-shared".into());
        }
        model.insert(pod);
    }
    let impact = estimate(&scale("Deployment", "web", 4, json!({"replicas": 2})), &model);
    let mut gone: Vec<&str> = impact.pods.iter().map(|p| p.name.as_str()).collect();
    gone.sort();
    assert_eq!(gone, ["web-c", "web-d"]);
}
