//! Randomised variants drawn with a fixed seed ([`SEED`]): replica counts, rollout parameters,
//! budgets, claim retention, propagation policies and readiness, so the estimate's arithmetic
//! is checked beyond the hand-picked cases. The same seed draws the same catalogue every run.

use serde_json::json;

use crate::reality::request::{DEPLOYMENT, POD, Request, STATEFUL_SET, first_with, named};
use crate::reality::scenario::Scenario;
use crate::reality::scenarios::workloads::{roll, scale, web_with};
use crate::reality::scenarios::yaml::{budget, service, stateful_set};
use crate::reality::seed::{SEED, Seeded};
use crate::simulator::READY_ANNOTATION;

fn unready_first(app: &str) -> Request {
    Request::Patch {
        kind: POD,
        name: first_with(&format!("app={app}")),
        patch: json!({"metadata": {"annotations": {READY_ANNOTATION: "false"}}}),
    }
}

fn rollouts(seed: &mut Seeded, count: usize) -> Vec<Scenario> {
    (0..count)
        .map(|index| {
            let replicas = seed.between(2, 6);
            let surge = *seed.pick(&["0", "1", "2", "25%", "50%"]);
            let mut unavailable = *seed.pick(&["0", "1", "25%", "50%", "100%"]);
            if surge == "0" && unavailable == "0" {
                unavailable = "1";
            }
            let min = seed.between(1, replicas);
            let strategy =
                format!("strategy: {{type: RollingUpdate, rollingUpdate: {{maxSurge: {surge}, maxUnavailable: {unavailable}}}}}");
            Scenario::new(
                &format!("variant/rollout-{index}"),
                &format!("Deployment rollout of {replicas}, maxSurge {surge} / maxUnavailable {unavailable}, minAvailable {min}"),
                roll(DEPLOYMENT, "web"),
            )
            .stage(move |ns| web_with(ns, replicas, &strategy, &format!("minAvailable: {min}")))
        })
        .collect()
}

fn scale_downs(seed: &mut Seeded, count: usize) -> Vec<Scenario> {
    (0..count)
        .map(|index| {
            let from = seed.between(3, 5);
            let to = seed.between(0, from - 1);
            let when_scaled = *seed.pick(&["Retain", "Delete"]);
            let pdb = if seed.between(0, 1) == 0 {
                "maxUnavailable: 1".to_owned()
            } else {
                format!("minAvailable: {}", seed.between(1, from))
            };
            Scenario::new(
                &format!("variant/statefulset-scale-{index}"),
                &format!("scale StatefulSet {from} → {to}, whenScaled {when_scaled}, {pdb}"),
                scale(STATEFUL_SET, "db", i64::from(to)),
            )
            .stage(move |ns| {
                format!(
                    "{}{}{}",
                    stateful_set(
                        ns,
                        "db",
                        from,
                        true,
                        &format!("persistentVolumeClaimRetentionPolicy: {{whenDeleted: Retain, whenScaled: {when_scaled}}}")
                    ),
                    service(ns, "db", "db"),
                    budget(ns, "db", "db", &pdb)
                )
            })
        })
        .collect()
}

fn evictions(seed: &mut Seeded, count: usize) -> Vec<Scenario> {
    (0..count)
        .map(|index| {
            let replicas = seed.between(3, 5);
            let unready = seed.between(0, 1) == 1;
            let healthy = if unready { replicas - 1 } else { replicas };
            let min = seed.between(1, healthy - 1);
            let scenario = Scenario::new(
                &format!("variant/eviction-{index}"),
                &format!(
                    "eviction among {replicas} pods{}, minAvailable {min}",
                    if unready {
                        " (the evicted one not Ready)"
                    } else {
                        ""
                    }
                ),
                Request::Evict {
                    pod: first_with("app=web"),
                },
            )
            .stage(move |ns| web_with(ns, replicas, "", &format!("minAvailable: {min}")));
            if unready {
                scenario.prepare(unready_first("web"))
            } else {
                scenario
            }
        })
        .collect()
}

fn deletes(seed: &mut Seeded, count: usize) -> Vec<Scenario> {
    (0..count)
        .map(|index| {
            let replicas = seed.between(1, 4);
            let propagation = *seed.pick(&[None, Some("Background"), Some("Foreground"), Some("Orphan")]);
            Scenario::new(
                &format!("variant/delete-deployment-{index}"),
                &format!(
                    "DELETE Deployment of {replicas} ({})",
                    propagation.unwrap_or("default")
                ),
                Request::Delete {
                    kind: DEPLOYMENT,
                    name: named("web"),
                    propagation,
                },
            )
            .stage(move |ns| web_with(ns, replicas, "", "maxUnavailable: 1"))
        })
        .collect()
}

/// The seeded variants.
pub fn scenarios() -> Vec<Scenario> {
    let mut seed = Seeded::new(SEED);
    let mut all = rollouts(&mut seed, 5);
    all.extend(scale_downs(&mut seed, 4));
    all.extend(evictions(&mut seed, 3));
    all.extend(deletes(&mut seed, 3));
    all
}
