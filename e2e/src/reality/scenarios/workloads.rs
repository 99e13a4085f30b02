//! Workload changes: scale-downs (StatefulSet ordinals and claim retention, budgets of each
//! form), and rollouts (Deployment rolling updates with integer and percentage maxSurge and
//! maxUnavailable, Recreate, a paused Deployment; StatefulSet rolling updates, partitions and
//! OnDelete; DaemonSet rolling updates with maxUnavailable and maxSurge), and rollouts of a
//! template the namespace's Pod Security level refuses.

use serde_json::json;

use crate::reality::request::{DAEMON_SET, DEPLOYMENT, Kind, Request, STATEFUL_SET, named};
use crate::reality::scenario::Scenario;
use crate::reality::scenarios::deletes::database;
use crate::reality::scenarios::yaml::{budget, daemon_set, deployment, service, stateful_set};

pub fn scale(kind: Kind, name: &str, replicas: i64) -> Request {
    Request::Scale {
        kind,
        name: named(name),
        replicas,
    }
}

/// A template change (a new annotation): a rollout.
pub fn roll(kind: Kind, name: &str) -> Request {
    Request::Patch {
        kind,
        name: named(name),
        patch: json!({"spec": {"template": {"metadata": {"annotations": {"e2e.suture.dev/revision": "2"}}}}}),
    }
}

/// A Deployment `web` of `replicas` with `strategy` (a spec line), a Service and a budget.
pub fn web_with(ns: &str, replicas: u32, strategy: &str, pdb: &str) -> String {
    format!(
        "{}{}{}",
        deployment(ns, "web", replicas, strategy, ""),
        service(ns, "web", "web"),
        budget(ns, "web", "web", pdb)
    )
}

/// A StatefulSet `cache` of 3 (no claims) with `strategy`, its Service and a budget.
fn cache(ns: &str, strategy: &str) -> String {
    format!(
        "{}{}{}",
        stateful_set(ns, "cache", 3, false, strategy),
        service(ns, "cache", "cache"),
        budget(ns, "cache", "cache", "maxUnavailable: 1")
    )
}

fn agent(ns: &str, strategy: &str) -> String {
    format!(
        "{}{}{}",
        daemon_set(ns, "agent", strategy, ""),
        service(ns, "agent", "agent"),
        budget(ns, "agent", "agent", "minAvailable: 2")
    )
}

/// `ns` enforcing Pod Security level `level` (server-side applied over the scenario's namespace).
fn enforcing(ns: &str, level: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}, labels: {{pod-security.kubernetes.io/enforce: {level}}}}}\n"
    )
}

/// A template change the baseline level refuses (the host's PID namespace): PodSecurity warns
/// about the workload and refuses every pod of the new template.
fn roll_refused(kind: Kind, name: &str) -> Request {
    Request::Patch {
        kind,
        name: named(name),
        patch: json!({"spec": {"template": {"spec": {"hostPID": true}}}}),
    }
}

/// The scale and rollout scenarios.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "scale/statefulset-down-quorum",
            "scale StatefulSet 3 → 1: the highest ordinals go, claims retained, quorum lost",
            scale(STATEFUL_SET, "db", 1),
        )
        .stage(|ns| database(ns, 3, "")),
        Scenario::new(
            "scale/statefulset-down-claims-deleted",
            "scale StatefulSet 3 → 2 with whenScaled: Delete: the removed member's claim goes",
            scale(STATEFUL_SET, "db", 2),
        )
        .stage(|ns| database(ns, 3, "{whenDeleted: Retain, whenScaled: Delete}")),
        Scenario::new(
            "scale/deployment-down-min-available",
            "scale Deployment 4 → 2 under minAvailable 3: desiredHealthy stays, the budget breaks",
            scale(DEPLOYMENT, "web", 2),
        )
        .stage(|ns| web_with(ns, 4, "", "minAvailable: 3")),
        Scenario::new(
            "scale/deployment-down-max-unavailable",
            "scale Deployment 4 → 2 under maxUnavailable 1: desiredHealthy follows the scale",
            scale(DEPLOYMENT, "web", 2),
        )
        .stage(|ns| web_with(ns, 4, "", "maxUnavailable: 1")),
        Scenario::new(
            "scale/deployment-down-percent",
            "scale Deployment 4 → 1 under minAvailable 50%: desiredHealthy follows the scale",
            scale(DEPLOYMENT, "web", 1),
        )
        .stage(|ns| web_with(ns, 4, "", "minAvailable: 50%")),
        Scenario::new(
            "scale/deployment-to-zero",
            "scale Deployment to 0: its Service goes dark",
            scale(DEPLOYMENT, "web", 0),
        )
        .stage(|ns| web_with(ns, 2, "", "maxUnavailable: 1")),
        Scenario::new(
            "scale/deployment-up",
            "scale Deployment 2 → 4: nothing stops",
            scale(DEPLOYMENT, "web", 4),
        )
        .stage(|ns| web_with(ns, 2, "", "minAvailable: 1")),
        Scenario::new(
            "rollout/deployment-default",
            "Deployment rollout, default 25%/25%: every pod replaced, never all at once",
            roll(DEPLOYMENT, "web"),
        )
        .stage(|ns| web_with(ns, 4, "", "minAvailable: 3")),
        Scenario::new(
            "rollout/deployment-surge-0-unavailable-1",
            "Deployment rollout, maxSurge 0 / maxUnavailable 1",
            roll(DEPLOYMENT, "web"),
        )
        .stage(|ns| {
            web_with(
                ns,
                3,
                "strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}",
                "minAvailable: 2",
            )
        }),
        Scenario::new(
            "rollout/deployment-unavailable-100-percent",
            "Deployment rollout, maxUnavailable 100%: all pods down at once",
            roll(DEPLOYMENT, "web"),
        )
        .stage(|ns| {
            web_with(
                ns,
                3,
                "strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 100%}}",
                "minAvailable: 1",
            )
        }),
        Scenario::new(
            "rollout/deployment-surge-100-percent",
            "Deployment rollout, maxSurge 100% / maxUnavailable 0: new pods first",
            roll(DEPLOYMENT, "web"),
        )
        .stage(|ns| {
            web_with(
                ns,
                2,
                "strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 100%, maxUnavailable: 0}}",
                "minAvailable: 2",
            )
        }),
        Scenario::new(
            "rollout/deployment-recreate",
            "Deployment rollout, Recreate: every pod down before the new ones start",
            roll(DEPLOYMENT, "web"),
        )
        .stage(|ns| web_with(ns, 3, "strategy: {type: Recreate}", "minAvailable: 1")),
        Scenario::new(
            "rollout/deployment-paused",
            "template change on a paused Deployment: nothing rolls",
            roll(DEPLOYMENT, "web"),
        )
        .stage(|ns| web_with(ns, 3, "", "minAvailable: 2"))
        // Paused after creation: a Deployment created paused never makes its first ReplicaSet.
        .prepare(Request::Patch {
            kind: DEPLOYMENT,
            name: named("web"),
            patch: json!({"spec": {"paused": true}}),
        }),
        Scenario::new(
            "rollout/statefulset-rolling",
            "StatefulSet rolling update: every member replaced, one at a time",
            roll(STATEFUL_SET, "cache"),
        )
        .stage(|ns| cache(ns, "")),
        Scenario::new(
            "rollout/statefulset-partition",
            "StatefulSet rolling update with partition 2: only ordinal 2 is replaced",
            roll(STATEFUL_SET, "cache"),
        )
        .stage(|ns| {
            cache(
                ns,
                "updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 2}}",
            )
        }),
        Scenario::new(
            "rollout/statefulset-on-delete",
            "StatefulSet template change under OnDelete: nothing is replaced",
            roll(STATEFUL_SET, "cache"),
        )
        .stage(|ns| cache(ns, "updateStrategy: {type: OnDelete}")),
        Scenario::new(
            "rollout/daemonset-max-unavailable",
            "DaemonSet rolling update, maxUnavailable 1: one node's pod at a time",
            roll(DAEMON_SET, "agent"),
        )
        .stage(|ns| agent(ns, "")),
        Scenario::new(
            "rollout/daemonset-surge",
            "DaemonSet rolling update, maxSurge 1 / maxUnavailable 0: the new pod first",
            roll(DAEMON_SET, "agent"),
        )
        .stage(|ns| {
            agent(
                ns,
                "updateStrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}",
            )
        }),
        Scenario::new(
            "rollout/deployment-refused-by-pod-security",
            "Deployment rollout to a template the namespace's baseline level refuses: the old ReplicaSet goes down by maxUnavailable, no new pod comes",
            roll_refused(DEPLOYMENT, "web"),
        )
        .stage(|ns| format!("{}{}", enforcing(ns, "baseline"), web_with(ns, 4, "", "maxUnavailable: 1"))),
        Scenario::new(
            "rollout/deployment-recreate-refused-by-pod-security",
            "Recreate rollout to a template the namespace's baseline level refuses: every pod goes, none comes back",
            roll_refused(DEPLOYMENT, "web"),
        )
        .stage(|ns| {
            format!(
                "{}{}",
                enforcing(ns, "baseline"),
                web_with(ns, 3, "strategy: {type: Recreate}", "minAvailable: 1")
            )
        }),
        Scenario::new(
            "rollout/statefulset-refused-by-pod-security",
            "StatefulSet rolling update to a template the namespace's baseline level refuses: the highest ordinal goes and is not recreated",
            roll_refused(STATEFUL_SET, "cache"),
        )
        .stage(|ns| format!("{}{}", enforcing(ns, "baseline"), cache(ns, ""))),
        Scenario::new(
            "rollout/daemonset-refused-by-pod-security",
            "DaemonSet rolling update to a template the namespace's baseline level refuses: one node's pod goes, none replaces it",
            roll_refused(DAEMON_SET, "agent"),
        )
        .stage(|ns| format!("{}{}", enforcing(ns, "baseline"), agent(ns, ""))),
    ]
}
