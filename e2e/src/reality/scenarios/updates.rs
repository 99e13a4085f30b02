//! Updates of objects other than workloads: Service selectors and ports (and the rollout that
//! renames the container port a Service targets), pod labels, finalizers removed from an object
//! being deleted, a PersistentVolume's reclaim policy, and ownerReferences that name no existing
//! owner (the garbage collector deletes the object), and the hand-made endpoints of a Service
//! without a selector (its Endpoints, mirrored; an EndpointSlice).

use serde_json::json;

use crate::reality::request::{
    CONFIG_MAP, DEPLOYMENT, ENDPOINT_SLICE, ENDPOINTS, Kind, POD, Request, SERVICE, VOLUME, first_with, named,
};
use crate::reality::scenario::Scenario;
use crate::reality::scenarios::deletes::{mirrored_endpoints, selectorless_service, web};
use crate::reality::scenarios::yaml::{config_map, deployment, named_port, pod, service};
use crate::simulator::PROVISIONER;

fn patch(kind: Kind, name: &str, patch: serde_json::Value) -> Request {
    Request::Patch {
        kind,
        name: named(name),
        patch,
    }
}

const HOLD: &str = "e2e.suture.dev/hold";

/// ownerReferences naming a ConfigMap `gone` by a uid no object has.
fn dangling_owner() -> serde_json::Value {
    json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "gone",
        "uid": "0badc0de-0000-4000-8000-000000000000"}]}})
}

/// A PersistentVolume `name` (as the simulation provisions: it reclaims it) with `policy`,
/// pre-bound to claim `claim` in `ns` when given.
fn volume(ns: &str, name: &str, policy: &str, claim: Option<&str>) -> String {
    let claim_ref = claim.map_or_else(String::new, |c| {
        format!(", claimRef: {{apiVersion: v1, kind: PersistentVolumeClaim, namespace: {ns}, name: {c}}}")
    });
    format!(
        "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: {name}, labels: {{{PROVISIONER}: \"true\"}}, \
         annotations: {{pv.kubernetes.io/provisioned-by: {PROVISIONER}}}}}\nspec: {{capacity: {{storage: 1Gi}}, \
         accessModes: [ReadWriteOnce], persistentVolumeReclaimPolicy: {policy}, hostPath: {{path: /var/lib/{name}}}\
         {claim_ref}}}\n"
    )
}

fn bound_claim(ns: &str, name: &str, volume: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}, namespace: {ns}}}\n\
         spec: {{accessModes: [ReadWriteOnce], storageClassName: \"\", volumeName: {volume}, \
         resources: {{requests: {{storage: 1Gi}}}}}}\n"
    )
}

/// The update scenarios.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "service/selector-matches-nothing",
            "Service selector changed to match no pod: it goes dark",
            patch(SERVICE, "web", json!({"spec": {"selector": {"app": "nothing"}}})),
        )
        .stage(web),
        Scenario::new(
            "service/selector-moves",
            "Service selector moved to another ready Deployment: it keeps endpoints",
            patch(SERVICE, "web", json!({"spec": {"selector": {"app": "web2"}}})),
        )
        .stage(|ns| format!("{}{}", web(ns), deployment(ns, "web2", 2, "", ""))),
        Scenario::new(
            "service/port-retargeted-to-undeclared-name",
            "Service port pointed at a container port name its pods do not declare: the pods stay ready, the port has no endpoints",
            patch(SERVICE, "named", json!({"spec": {"ports": [{"port": 80, "targetPort": "web-http"}]}})),
        )
        .stage(|ns| named_port(ns, "named", "http")),
        Scenario::new(
            "service/port-renamed-by-rollout",
            "rollout renaming the container port a Service targets by name: once through, the port has no endpoints",
            patch(
                DEPLOYMENT,
                "named",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.27",
                    "ports": [{"name": "web-http", "containerPort": 8080}]}]}}}}),
            ),
        )
        .stage(|ns| named_port(ns, "named", "http")),
        Scenario::new(
            "pod/label-leaves-service",
            "a bare pod's label changed: it leaves its Service, keeps running",
            patch(POD, "solo", json!({"metadata": {"labels": {"app": "debug"}}})),
        )
        .stage(|ns| format!("{}{}", pod(ns, "solo", "solo", ""), service(ns, "solo", "solo"))),
        Scenario::new(
            "pod/label-leaves-replicaset",
            "a Deployment's only pod relabelled: released and replaced, it keeps running",
            Request::Patch {
                kind: POD,
                name: first_with("app=one"),
                patch: json!({"metadata": {"labels": {"app": "debug"}}}),
            },
        )
        .stage(|ns| format!("{}{}", deployment(ns, "one", 1, "", ""), service(ns, "one", "one"))),
        Scenario::new(
            "pod/label-added",
            "a label added to a pod: it stays behind its Service and controller",
            Request::Patch {
                kind: POD,
                name: first_with("app=web"),
                patch: json!({"metadata": {"labels": {"e2e.suture.dev/inspected": "true"}}}),
            },
        )
        .stage(web),
        Scenario::new(
            "finalizer/removed-from-terminating",
            "last finalizer removed from a ConfigMap being deleted: it goes, with what it owns",
            patch(CONFIG_MAP, "held", json!({"metadata": {"finalizers": null}})),
        )
        .stage(|ns| config_map(ns, "held", &format!("finalizers: [{HOLD}]")))
        .stage(|ns| {
            config_map(
                ns,
                "held-part",
                "ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: held, uid: \"$UID(configmaps/held)\"}]",
            )
        })
        .prepare(Request::Delete {
            kind: CONFIG_MAP,
            name: named("held"),
            propagation: Some("Background"),
        }),
        Scenario::new(
            "finalizer/removed-not-terminating",
            "a finalizer removed from an object not being deleted: nothing goes",
            patch(CONFIG_MAP, "held", json!({"metadata": {"finalizers": null}})),
        )
        .stage(|ns| config_map(ns, "held", &format!("finalizers: [{HOLD}]"))),
        Scenario::new(
            "owner/dangling-set-on-deployment",
            "a Deployment given an ownerReference to an owner that does not exist: the garbage collector deletes it, its ReplicaSet and pods",
            patch(DEPLOYMENT, "web", dangling_owner()),
        )
        .stage(web),
        Scenario::new(
            "owner/dangling-set-on-config-map",
            "a ConfigMap given an ownerReference to an owner that does not exist: collected with what it owns",
            patch(CONFIG_MAP, "settings", dangling_owner()),
        )
        .stage(|ns| config_map(ns, "settings", ""))
        .stage(|ns| {
            config_map(
                ns,
                "settings-part",
                "ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: settings, uid: \"$UID(configmaps/settings)\"}]",
            )
        }),
        Scenario::new(
            "volume/retain-to-delete-released",
            "reclaim policy Retain → Delete on a Released volume: it is deleted",
            patch(VOLUME, "rl-volume-released", json!({"spec": {"persistentVolumeReclaimPolicy": "Delete"}})),
        )
        .stage(|ns| {
            format!(
                "{}{}",
                volume(ns, "rl-volume-released", "Retain", Some("data")),
                bound_claim(ns, "data", "rl-volume-released")
            )
        })
        .prepare(Request::Delete {
            kind: crate::reality::request::CLAIM,
            name: named("data"),
            propagation: None,
        })
        .owns(VOLUME, "rl-volume-released"),
        Scenario::new(
            "volume/retain-to-delete-available",
            "reclaim policy Retain → Delete on a volume never bound: nothing is lost",
            patch(VOLUME, "rl-volume-available", json!({"spec": {"persistentVolumeReclaimPolicy": "Delete"}})),
        )
        .stage(|ns| volume(ns, "rl-volume-available", "Retain", None))
        .owns(VOLUME, "rl-volume-available"),
            Scenario::new(
            "endpoints/selectorless-emptied",
            "the Endpoints of a Service without a selector emptied: the mirroring controller empties its slices",
            patch(ENDPOINTS, "leader", json!({"subsets": null})),
        )
        .stage(mirrored_endpoints),
        Scenario::new(
            "endpoints/selectorless-moved",
            "the Endpoints of a Service without a selector moved to another address: still one endpoint",
            patch(
                ENDPOINTS,
                "leader",
                json!({"subsets": [{"addresses": [{"ip": "192.0.2.21"}], "ports": [{"name": "pg", "port": 5432, "protocol": "TCP"}]}]}),
            ),
        )
        .stage(mirrored_endpoints),
        Scenario::new(
            "endpointslice/selectorless-emptied",
            "the hand-made EndpointSlice of a Service without a selector emptied: nothing refills it",
            patch(ENDPOINT_SLICE, "ext-1", json!({"endpoints": []})),
        )
        .stage(selectorless_service),
    ]
}
