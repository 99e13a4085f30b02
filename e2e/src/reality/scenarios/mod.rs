//! The catalogue of the reality harness: every rule of the estimate — deletes with each
//! propagation policy and the per-kind defaults, Namespace and CRD deletion, ownerReference
//! chains through namespaced and cluster-scoped custom resources, scale-downs with each claim
//! retention, rollouts of every strategy, evictions, Node taints and deletion, Service selector
//! and pod label changes, finalizer removal, PV reclaim changes, operators' custom resources
//! whose deletions go by ownerReferences — and seeded random variants.

pub mod deletes;
pub mod disruptions;
pub mod operators;
pub mod updates;
pub mod variants;
pub mod workloads;
pub mod yaml;

use crate::reality::scenario::Scenario;

/// Every scenario, in report order.
pub fn catalogue() -> Vec<Scenario> {
    let mut all = deletes::scenarios();
    all.extend(workloads::scenarios());
    all.extend(disruptions::scenarios());
    all.extend(updates::scenarios());
    all.extend(operators::scenarios());
    all.extend(variants::scenarios());
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn the_catalogue_has_forty_scenarios_with_distinct_valid_namespaces() {
        let all = catalogue();
        assert!(all.len() >= 40, "{} scenarios", all.len());
        let namespaces: BTreeSet<&str> = all.iter().map(|s| s.namespace.as_str()).collect();
        assert_eq!(namespaces.len(), all.len(), "two scenarios share a namespace");
        for scenario in &all {
            assert!(scenario.namespace.len() <= 63, "{}", scenario.namespace);
            for stage in &scenario.stages[1..] {
                for document in stage.split("\n---\n") {
                    let parsed: Result<serde_yaml_ng::Value, _> = serde_yaml_ng::from_str(document);
                    assert!(
                        parsed.is_ok(),
                        "{}: {:?}\n{document}",
                        scenario.name,
                        parsed.err()
                    );
                }
            }
        }
    }

    #[test]
    fn a_dedicated_node_is_named_after_its_scenario() {
        for scenario in catalogue().iter().filter(|s| s.exclusive()) {
            assert_eq!(scenario.node_name(), format!("{}-node", scenario.namespace));
            let request = scenario.request.describe();
            if request.contains(" Node ") {
                assert!(request.contains(scenario.node_name()), "{request}");
            }
        }
    }
}
