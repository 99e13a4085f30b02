//! Deletes: each propagationPolicy and the per-kind defaults (Orphan for core/v1
//! ReplicationControllers and batch/v1 Jobs), StatefulSet claim retention, claims under
//! pvc-protection, Services, a Namespace, a CRD, and ownerReference chains through namespaced
//! and cluster-scoped custom resources.

use std::time::Duration;

use crate::reality::request::{
    CLAIM, CRD, DAEMON_SET, DEPLOYMENT, ENDPOINT_SLICE, ENDPOINTS, GIZMO, JOB, NAMESPACE, NODE, POD,
    REPLICA_SET, REPLICATION_CONTROLLER, Request, SERVICE, STATEFUL_SET, TENANT, WIDGET, first_with, named,
};
use crate::reality::scenario::Scenario;
use crate::reality::scenarios::yaml::{
    budget, claim, config_map, daemon_set, deployment, job, mounting, on_node, pod, replica_set,
    replication_controller, service, stateful_set,
};
use crate::scenes::WIDGET_CRD;

/// How long the garbage collector takes to learn a resource whose CRD was just created: it
/// rediscovers resources every 30 s (kube-controller-manager), and until then cannot look up an
/// owner of that kind. In a cluster CRDs are long known; a scene waits this long to be alike.
pub(super) const GC_DISCOVERY: Duration = Duration::from_secs(35);

fn delete(kind: crate::reality::request::Kind, name: &str, propagation: Option<&'static str>) -> Request {
    Request::Delete {
        kind,
        name: named(name),
        propagation,
    }
}

/// A Deployment `web` of 3 behind a Service, with a budget of minAvailable 2.
pub fn web(ns: &str) -> String {
    format!(
        "{}{}{}",
        deployment(ns, "web", 3, "", ""),
        service(ns, "web", "web"),
        budget(ns, "web", "web", "minAvailable: 2")
    )
}

/// A StatefulSet `db` of 3 with claims, its Service and a budget of maxUnavailable 1;
/// `retention` is its persistentVolumeClaimRetentionPolicy (empty for the default).
pub fn database(ns: &str, replicas: u32, retention: &str) -> String {
    let spec = if retention.is_empty() {
        String::new()
    } else {
        format!("persistentVolumeClaimRetentionPolicy: {retention}")
    };
    format!(
        "{}{}{}",
        stateful_set(ns, "db", replicas, true, &spec),
        service(ns, "db", "db"),
        budget(ns, "db", "db", "maxUnavailable: 1")
    )
}

/// A Service `ext` without a selector and the EndpointSlice its owner wrote by hand (an address
/// outside the cluster), which the EndpointSlice controller leaves alone.
pub(super) fn selectorless_service(ns: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: ext, namespace: {ns}}}\nspec:\n  ports: [{{name: pg, port: 5432}}]\n---\n\
         apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: ext-1\n  namespace: {ns}\n  labels:\n    \
         kubernetes.io/service-name: ext\n    endpointslice.kubernetes.io/managed-by: reality.suture.dev\n\
         addressType: IPv4\nendpoints:\n- addresses: [\"192.0.2.10\"]\n  conditions: {{ready: true}}\n\
         ports: [{{name: pg, port: 5432, protocol: TCP}}]\n---\n"
    )
}

/// A Service `leader` without a selector and its Endpoints (written by hand, as Patroni writes
/// its leader's), which the EndpointSlice mirroring controller mirrors into a slice.
pub(super) fn mirrored_endpoints(ns: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: leader, namespace: {ns}}}\nspec:\n  ports: [{{name: pg, port: 5432}}]\n---\n\
         apiVersion: v1\nkind: Endpoints\nmetadata: {{name: leader, namespace: {ns}}}\n\
         subsets:\n- addresses: [{{ip: 192.0.2.20}}]\n  ports: [{{name: pg, port: 5432, protocol: TCP}}]\n---\n"
    )
}

const TENANT_CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
metadata: {name: tenants.reality.suture.dev}\nspec:\n  group: reality.suture.dev\n  scope: Cluster\n  \
names: {plural: tenants, singular: tenant, kind: Tenant}\n  versions:\n  - name: v1\n    served: true\n    \
storage: true\n    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n";

const GIZMO_CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
metadata: {name: gizmos.crd.reality.suture.dev}\nspec:\n  group: crd.reality.suture.dev\n  scope: Namespaced\n  \
names: {plural: gizmos, singular: gizmo, kind: Gizmo}\n  versions:\n  - name: v1\n    served: true\n    \
storage: true\n    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n";

pub(super) fn owned_by(api_version: &str, kind: &str, name: &str, plural: &str) -> String {
    format!(
        "ownerReferences: [{{apiVersion: {api_version}, kind: {kind}, name: {name}, uid: \"$UID({plural}/{name})\", \
         controller: true, blockOwnerDeletion: true}}]"
    )
}

/// The delete scenarios.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "delete/deployment-default",
            "DELETE Deployment, apps/v1 default (Background): ReplicaSets and pods cascade",
            delete(DEPLOYMENT, "web", None),
        )
        .stage(web),
        Scenario::new(
            "delete/deployment-orphan",
            "DELETE Deployment with Orphan: the cascade stops, pods keep running",
            delete(DEPLOYMENT, "web", Some("Orphan")),
        )
        .stage(web),
        Scenario::new(
            "delete/deployment-foreground",
            "DELETE Deployment with Foreground: dependents first, then the owner",
            delete(DEPLOYMENT, "web", Some("Foreground")),
        )
        .stage(web),
        Scenario::new(
            "delete/replicaset-standalone",
            "DELETE a ReplicaSet no Deployment controls",
            delete(REPLICA_SET, "rs", Some("Background")),
        )
        .stage(|ns| format!("{}{}", replica_set(ns, "rs", 3), service(ns, "rs", "rs"))),
        Scenario::new(
            "delete/replicationcontroller-default",
            "DELETE ReplicationController, core/v1 default (Orphan)",
            delete(REPLICATION_CONTROLLER, "rc", None),
        )
        .stage(|ns| format!("{}{}", replication_controller(ns, "rc", 2), service(ns, "rc", "rc"))),
        Scenario::new(
            "delete/job-default",
            "DELETE Job, batch/v1 default (Orphan): its pods keep running",
            delete(JOB, "batch", None),
        )
        .stage(|ns| job(ns, "batch", 2)),
        Scenario::new(
            "delete/job-background",
            "DELETE Job with Background: its pods go",
            delete(JOB, "batch", Some("Background")),
        )
        .stage(|ns| job(ns, "batch", 2)),
        Scenario::new(
            "delete/statefulset-claims-retained",
            "DELETE StatefulSet, default claim retention (Retain): pods go, claims and data stay",
            delete(STATEFUL_SET, "db", None),
        )
        .stage(|ns| database(ns, 3, "")),
        Scenario::new(
            "delete/statefulset-claims-deleted",
            "DELETE StatefulSet with whenDeleted: Delete: claims cascade, volumes reclaimed",
            delete(STATEFUL_SET, "db", None),
        )
        .stage(|ns| database(ns, 3, "{whenDeleted: Delete, whenScaled: Retain}")),
        Scenario::new(
            "delete/statefulset-orphan",
            "DELETE StatefulSet with Orphan: members keep running",
            delete(STATEFUL_SET, "db", Some("Orphan")),
        )
        .stage(|ns| database(ns, 3, "")),
        Scenario::new(
            "delete/daemonset",
            "DELETE DaemonSet: its pod on every node goes",
            delete(DAEMON_SET, "agent", None),
        )
        .stage(|ns| format!("{}{}", daemon_set(ns, "agent", "", ""), service(ns, "agent", "agent"))),
        Scenario::new(
            "delete/pod-of-deployment",
            "DELETE a Deployment's pod: replaced, the budget and Service see one fewer",
            Request::Delete {
                kind: POD,
                name: first_with("app=web"),
                propagation: None,
            },
        )
        .stage(web),
        Scenario::new(
            "delete/bare-pod",
            "DELETE a pod no controller replaces, the only one behind its Service",
            delete(POD, "solo", None),
        )
        .stage(|ns| format!("{}{}", pod(ns, "solo", "solo", ""), service(ns, "solo", "solo"))),
        Scenario::new(
            "delete/claim-in-use",
            "DELETE a claim a running pod mounts: pvc-protection holds it, loss scheduled",
            delete(CLAIM, "data", None),
        )
        .stage(|ns| format!("{}{}", claim(ns, "data"), pod(ns, "user", "user", &mounting("data")))),
        Scenario::new(
            "delete/claim-unused",
            "DELETE a bound claim no pod mounts: its volume is reclaimed (Delete)",
            delete(CLAIM, "data", None),
        )
        .stage(|ns| claim(ns, "data")),
        Scenario::new(
            "delete/service",
            "DELETE Service: its EndpointSlices cascade, clients lose it",
            delete(SERVICE, "web", None),
        )
        .stage(web),
        Scenario::new(
            "delete/endpointslice-of-selector",
            "DELETE the EndpointSlice of a Service with a selector: the controller rebuilds it",
            Request::Delete {
                kind: ENDPOINT_SLICE,
                name: first_with("kubernetes.io/service-name=web"),
                propagation: None,
            },
        )
        .stage(web),
        Scenario::new(
            "delete/endpointslice-selectorless",
            "DELETE the hand-made EndpointSlice of a Service without a selector: nothing rebuilds it",
            delete(ENDPOINT_SLICE, "ext-1", None),
        )
        .stage(selectorless_service),
        Scenario::new(
            "delete/endpoints-selectorless",
            "DELETE the Endpoints of a Service without a selector: the mirroring controller deletes the slice mirrored from it",
            delete(ENDPOINTS, "leader", None),
        )
        .stage(mirrored_endpoints),
        Scenario::new(
            "delete/namespace",
            "DELETE Namespace: every object in it, claims and their volumes",
            Request::Delete {
                kind: NAMESPACE,
                name: named("rl-delete-namespace"),
                propagation: None,
            },
        )
        .stage(|ns| format!("{}{}", web(ns), database(ns, 2, ""))),
        Scenario::new(
            "delete/custom-resource-owner-chain",
            "DELETE a custom resource: a StatefulSet it owns, and that StatefulSet's pods",
            delete(WIDGET, "w", None),
        )
        .stage(|_| WIDGET_CRD.to_owned())
        .stage(|ns| format!("apiVersion: e2e.suture.dev/v1\nkind: Widget\nmetadata: {{name: w, namespace: {ns}}}\n"))
        .stage(|ns| {
            stateful_set(ns, "cache", 3, false, "").replace(
                &format!("metadata: {{name: cache, namespace: {ns}}}"),
                &format!(
                    "metadata: {{name: cache, namespace: {ns}, {}}}",
                    owned_by("e2e.suture.dev/v1", "Widget", "w", "widgets")
                ),
            )
        })
        .watch(WIDGET)
        .warm_up(GC_DISCOVERY),
        Scenario::new(
            "delete/cluster-scoped-owner",
            "DELETE a cluster-scoped custom resource owning namespaced objects",
            delete(TENANT, "rl-tenant", None),
        )
        .stage(|_| TENANT_CRD.to_owned())
        .stage(|_| "apiVersion: reality.suture.dev/v1\nkind: Tenant\nmetadata: {name: rl-tenant}\n".to_owned())
        .stage(|ns| {
            let owner = owned_by("reality.suture.dev/v1", "Tenant", "rl-tenant", "tenants");
            format!(
                "{}{}",
                config_map(ns, "tenant-settings", &owner),
                deployment(ns, "portal", 2, "", "").replace(
                    &format!("metadata: {{name: portal, namespace: {ns}}}"),
                    &format!("metadata: {{name: portal, namespace: {ns}, {owner}}}")
                )
            )
        })
        .owns(TENANT, "rl-tenant")
        .owns(CRD, "tenants.reality.suture.dev")
        .watch(TENANT)
        .warm_up(GC_DISCOVERY),
        Scenario::new(
            "delete/crd",
            "DELETE a CRD: its instances, and what they own",
            delete(CRD, "gizmos.crd.reality.suture.dev", None),
        )
        .stage(|_| GIZMO_CRD.to_owned())
        .stage(|ns| {
            format!(
                "apiVersion: crd.reality.suture.dev/v1\nkind: Gizmo\nmetadata: {{name: a, namespace: {ns}}}\n---\n\
                 apiVersion: crd.reality.suture.dev/v1\nkind: Gizmo\nmetadata: {{name: b, namespace: {ns}}}\n"
            )
        })
        .stage(|ns| config_map(ns, "gizmo-a-state", &owned_by("crd.reality.suture.dev/v1", "Gizmo", "a", "gizmos")))
        .owns(CRD, "gizmos.crd.reality.suture.dev")
        .watch(GIZMO)
        .warm_up(GC_DISCOVERY),
        Scenario::new(
            "delete/node",
            "DELETE Node: its pods are gone (the pod garbage collector removes them)",
            delete(NODE, "rl-delete-node-node", None),
        )
        .dedicated_node()
        .stage(|ns| {
            format!(
                "{}{}",
                deployment(ns, "pinned", 2, "", &on_node("rl-delete-node-node")),
                service(ns, "pinned", "pinned")
            )
        })
        // The pod garbage collector looks every 20 s, queues a missing Node for 40 s, and acts on
        // it at its next look after that: up to 80 s and the deletions themselves (75 s fell
        // short in one loaded run).
        .at_least(Duration::from_secs(100)),
    ]
}
