//! Workloads and disruption budgets: replicas, label selectors and rollout settings, with the
//! API server's defaults (`apps/v1`, `batch/v1`, `policy/v1`).

use crate::cluster::ClusterModel;
use crate::cluster::object::{
    DeploymentStrategy, IntOrPercent, Labels, Operator, Requirement, Retention, Selector, Spec,
    StatefulSetStrategy,
};

use super::ProjectError;
use super::fields::{Fields, Result};

/// `spec.replicas`: 1 when unset, never negative.
fn replicas(spec: Fields<'_>) -> Result<i64> {
    match spec.int("replicas")? {
        None => Ok(1),
        Some(n) if n < 0 => Err(ProjectError::field_error(
            "replicas",
            format!("Invalid value: {n}: must be greater than or equal to 0"),
        )),
        Some(n) => Ok(n),
    }
}

/// A `metav1.LabelSelector`.
pub(super) fn selector(fields: Fields<'_>, model: &mut ClusterModel) -> Result<Selector> {
    let match_labels = fields.labels("matchLabels", model)?;
    let expressions = requirements(fields, model, &[])?;
    Ok(Selector {
        match_labels,
        expressions: expressions.into_boxed_slice(),
    })
}

/// The `matchExpressions` of `fields` as label requirements. Operators in `skipped` (a node
/// selector term's `Gt`/`Lt`) are left out rather than refused.
fn requirements(fields: Fields<'_>, model: &mut ClusterModel, skipped: &[&str]) -> Result<Vec<Requirement>> {
    let mut expressions = Vec::new();
    fields.each("matchExpressions", |expression| {
        let operator = match expression.required_str("operator")? {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            other if skipped.contains(&other) => return Ok(()),
            other => {
                let supported = ["In", "NotIn", "Exists", "DoesNotExist"];
                return Err(ProjectError::unsupported("operator", other, &supported));
            }
        };
        let key = model.intern(expression.required_str("key")?);
        let values = expression.strings("values")?;
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                return Err(ProjectError::field_error(
                    "values",
                    "Required value: must be specified when `operator` is 'In' or 'NotIn'",
                ));
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                return Err(ProjectError::field_error(
                    "values",
                    "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                ));
            }
            _ => {}
        }
        let values = values.into_iter().map(|v| model.intern(v)).collect();
        expressions.push(Requirement {
            key,
            operator,
            values,
        });
        Ok(())
    })?;
    Ok(expressions)
}

/// The selector an `apps/v1` workload must have (and which may not be empty).
fn workload_selector(spec: Fields<'_>, model: &mut ClusterModel) -> Result<Selector> {
    if !spec.has("selector") {
        return Err(ProjectError::required("selector"));
    }
    let selector = spec.nested("selector", |s| selector(s, model))?;
    if selector.is_empty() {
        return Err(ProjectError::field_error(
            "selector",
            "Invalid value: an empty selector would select every pod of the namespace, which apps/v1 refuses",
        ));
    }
    Ok(selector)
}

pub(super) fn deployment(root: Fields<'_>, model: &mut ClusterModel) -> Result<Spec> {
    root.nested("spec", |spec| {
        let strategy = spec.nested("strategy", |strategy| match strategy.non_empty("type")? {
            None | Some("RollingUpdate") => strategy.nested("rollingUpdate", |rolling| {
                Ok(DeploymentStrategy::RollingUpdate {
                    max_unavailable: rolling
                        .int_or_percent("maxUnavailable")?
                        .unwrap_or(IntOrPercent::Percent(25)),
                    max_surge: rolling
                        .int_or_percent("maxSurge")?
                        .unwrap_or(IntOrPercent::Percent(25)),
                })
            }),
            Some("Recreate") => Ok(DeploymentStrategy::Recreate),
            Some(other) => Err(ProjectError::unsupported(
                "type",
                other,
                &["Recreate", "RollingUpdate"],
            )),
        })?;
        Ok(Spec::Deployment {
            replicas: replicas(spec)?,
            selector: workload_selector(spec, model)?,
            strategy,
            paused: spec.bool("paused")?.unwrap_or(false),
        })
    })
}

pub(super) fn replica_set(root: Fields<'_>, model: &mut ClusterModel) -> Result<Spec> {
    root.nested("spec", |spec| {
        Ok(Spec::ReplicaSet {
            replicas: replicas(spec)?,
            selector: workload_selector(spec, model)?,
        })
    })
}

pub(super) fn stateful_set(root: Fields<'_>, model: &mut ClusterModel) -> Result<Spec> {
    root.nested("spec", |spec| {
        let strategy = spec.nested("updateStrategy", |strategy| match strategy.non_empty("type")? {
            None | Some("RollingUpdate") => strategy.nested("rollingUpdate", |rolling| {
                Ok(StatefulSetStrategy::RollingUpdate {
                    partition: rolling.int("partition")?.unwrap_or(0),
                    max_unavailable: rolling
                        .int_or_percent("maxUnavailable")?
                        .unwrap_or(IntOrPercent::Int(1)),
                })
            }),
            Some("OnDelete") => Ok(StatefulSetStrategy::OnDelete),
            Some(other) => Err(ProjectError::unsupported(
                "type",
                other,
                &["OnDelete", "RollingUpdate"],
            )),
        })?;
        let parallel = match spec.non_empty("podManagementPolicy")? {
            None | Some("OrderedReady") => false,
            Some("Parallel") => true,
            Some(other) => {
                return Err(ProjectError::unsupported(
                    "podManagementPolicy",
                    other,
                    &["OrderedReady", "Parallel"],
                ));
            }
        };
        let mut claim_templates = Vec::new();
        spec.each("volumeClaimTemplates", |template| {
            let name = template.nested("metadata", |meta| meta.required_str("name"))?;
            claim_templates.push(model.intern(name));
            Ok(())
        })?;
        let retention = spec.nested("persistentVolumeClaimRetentionPolicy", |policy| {
            Ok(Retention {
                delete_when_deleted: deletes(policy, "whenDeleted")?,
                delete_when_scaled: deletes(policy, "whenScaled")?,
            })
        })?;
        Ok(Spec::StatefulSet {
            replicas: replicas(spec)?,
            selector: workload_selector(spec, model)?,
            strategy,
            parallel,
            claim_templates: claim_templates.into_boxed_slice(),
            retention,
        })
    })
}

/// One rule of a StatefulSet's retention policy: `Retain` (the default) or `Delete`.
fn deletes(policy: Fields<'_>, key: &str) -> Result<bool> {
    match policy.non_empty(key)? {
        None | Some("Retain") => Ok(false),
        Some("Delete") => Ok(true),
        Some(other) => Err(ProjectError::unsupported(key, other, &["Delete", "Retain"])),
    }
}

/// A DaemonSet. `OnDelete` replaces no pod on a template change; the slim spec has no field
/// for the strategy, so it is recorded as `maxUnavailable: 0, maxSurge: 0`, a pair the API
/// server refuses for `RollingUpdate` and which therefore cannot be mistaken for one.
pub(super) fn daemon_set(root: Fields<'_>, model: &mut ClusterModel) -> Result<Spec> {
    root.nested("spec", |spec| {
        let (max_unavailable, max_surge) =
            spec.nested("updateStrategy", |strategy| match strategy.non_empty("type")? {
                None | Some("RollingUpdate") => strategy.nested("rollingUpdate", |rolling| {
                    Ok((
                        rolling
                            .int_or_percent("maxUnavailable")?
                            .unwrap_or(IntOrPercent::Int(1)),
                        rolling
                            .int_or_percent("maxSurge")?
                            .unwrap_or(IntOrPercent::Int(0)),
                    ))
                }),
                Some("OnDelete") => Ok((IntOrPercent::Int(0), IntOrPercent::Int(0))),
                Some(other) => Err(ProjectError::unsupported(
                    "type",
                    other,
                    &["OnDelete", "RollingUpdate"],
                )),
            })?;
        let placement = spec.nested("template", |template| {
            template.nested("spec", |pod| placement(pod, model))
        })?;
        Ok(Spec::DaemonSet {
            selector: workload_selector(spec, model)?,
            max_unavailable,
            max_surge,
            placement,
        })
    })
}

/// The nodes a pod spec may run on (`nodeSelector` and the required node affinity's terms), as
/// node-label selectors any of which must match. `Gt`/`Lt` requirements and `matchFields` are
/// left out (the estimate then takes the term as matching: a pod is never thought to leave a
/// node for a requirement it cannot read).
fn placement(pod: Fields<'_>, model: &mut ClusterModel) -> Result<Box<[Selector]>> {
    let node_selector = pod.labels("nodeSelector", model)?;
    let mut terms = Vec::new();
    pod.nested("affinity", |affinity| {
        affinity.nested("nodeAffinity", |node| {
            node.nested("requiredDuringSchedulingIgnoredDuringExecution", |required| {
                required.each("nodeSelectorTerms", |term| {
                    let expressions = requirements(term, model, &["Gt", "Lt"])?;
                    terms.push(Selector {
                        match_labels: node_selector.clone(),
                        expressions: expressions.into(),
                    });
                    Ok(())
                })
            })
        })
    })?;
    if terms.is_empty() && !node_selector.is_empty() {
        terms.push(Selector {
            match_labels: node_selector,
            expressions: Box::default(),
        });
    }
    Ok(terms.into())
}

pub(super) fn job(root: Fields<'_>, model: &mut ClusterModel) -> Result<Spec> {
    root.nested("spec", |spec| {
        let selector = if spec.has("selector") {
            Some(spec.nested("selector", |s| selector(s, model))?)
        } else {
            None
        };
        Ok(Spec::Job { selector })
    })
}

/// A selector no pod satisfies (`In` with no values, which the API server never accepts).
fn selects_nothing() -> Selector {
    let nothing = Requirement {
        key: "".into(),
        operator: Operator::In,
        values: Box::default(),
    };
    Selector {
        match_labels: Labels::default(),
        expressions: Box::new([nothing]),
    }
}

/// A `policy/v1` PodDisruptionBudget: a null selector selects no pod, an empty one (`{}`) every
/// pod of the namespace.
pub(super) fn disruption_budget(root: Fields<'_>, model: &mut ClusterModel) -> Result<Spec> {
    root.nested("spec", |spec| {
        let selector = if spec.has("selector") {
            spec.nested("selector", |s| selector(s, model))?
        } else {
            selects_nothing()
        };
        let min_available = spec.int_or_percent("minAvailable")?;
        let max_unavailable = spec.int_or_percent("maxUnavailable")?;
        let always_allow_unhealthy = match spec.non_empty("unhealthyPodEvictionPolicy")? {
            None | Some("IfHealthyBudget") => false,
            Some("AlwaysAllow") => true,
            Some(other) => {
                let supported = ["AlwaysAllow", "IfHealthyBudget"];
                return Err(ProjectError::unsupported(
                    "unhealthyPodEvictionPolicy",
                    other,
                    &supported,
                ));
            }
        };
        Ok(Spec::PodDisruptionBudget {
            selector,
            min_available,
            max_unavailable,
            always_allow_unhealthy,
        })
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::cluster::project::project;
    use serde_json::json;

    fn spec_of(api_version: &str, kind: &str, spec: serde_json::Value) -> Spec {
        let mut model = ClusterModel::new();
        let value = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "ns"}, "spec": spec});
        project(&value, &mut model).unwrap().spec
    }

    fn error_of(api_version: &str, kind: &str, spec: serde_json::Value) -> String {
        let mut model = ClusterModel::new();
        let value = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, "spec": spec});
        project(&value, &mut model).unwrap_err().to_string()
    }

    fn app_selector() -> Selector {
        Selector {
            match_labels: vec![("app".into(), "x".into())].into(),
            expressions: Box::default(),
        }
    }

    #[test]
    fn deployment_defaults() {
        let spec = spec_of(
            "apps/v1",
            "Deployment",
            json!({"selector": {"matchLabels": {"app": "x"}}}),
        );
        let expected = Spec::Deployment {
            replicas: 1,
            selector: app_selector(),
            strategy: DeploymentStrategy::RollingUpdate {
                max_unavailable: IntOrPercent::Percent(25),
                max_surge: IntOrPercent::Percent(25),
            },
            paused: false,
        };
        assert_eq!(spec, expected);
        let spec = spec_of(
            "apps/v1",
            "Deployment",
            json!({"replicas": 0, "paused": true, "selector": {"matchLabels": {"app": "x"}}, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}),
        );
        let expected = Spec::Deployment {
            replicas: 0,
            selector: app_selector(),
            strategy: DeploymentStrategy::RollingUpdate {
                max_unavailable: IntOrPercent::Percent(25),
                max_surge: IntOrPercent::Int(1),
            },
            paused: true,
        };
        assert_eq!(spec, expected);
        let spec = spec_of(
            "apps/v1",
            "Deployment",
            json!({"selector": {"matchLabels": {"app": "x"}}, "strategy": {"type": "Recreate"}}),
        );
        assert!(matches!(
            spec,
            Spec::Deployment {
                strategy: DeploymentStrategy::Recreate,
                ..
            }
        ));
    }

    #[test]
    fn stateful_set_defaults_and_settings() {
        let spec = spec_of(
            "apps/v1",
            "StatefulSet",
            json!({"selector": {"matchLabels": {"app": "x"}}}),
        );
        let expected = Spec::StatefulSet {
            replicas: 1,
            selector: app_selector(),
            strategy: StatefulSetStrategy::RollingUpdate {
                partition: 0,
                max_unavailable: IntOrPercent::Int(1),
            },
            parallel: false,
            claim_templates: Box::default(),
            retention: Retention::default(),
        };
        assert_eq!(spec, expected);
        let spec = spec_of(
            "apps/v1",
            "StatefulSet",
            json!({
                "replicas": 5, "selector": {"matchLabels": {"app": "x"}}, "podManagementPolicy": "Parallel",
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2, "maxUnavailable": "50%"}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"}}, {"metadata": {"name": "wal"}}],
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"}
            }),
        );
        let expected = Spec::StatefulSet {
            replicas: 5,
            selector: app_selector(),
            strategy: StatefulSetStrategy::RollingUpdate {
                partition: 2,
                max_unavailable: IntOrPercent::Percent(50),
            },
            parallel: true,
            claim_templates: vec!["data".into(), "wal".into()].into_boxed_slice(),
            retention: Retention {
                delete_when_deleted: true,
                delete_when_scaled: false,
            },
        };
        assert_eq!(spec, expected);
        let spec = spec_of(
            "apps/v1",
            "StatefulSet",
            json!({"selector": {"matchLabels": {"app": "x"}}, "updateStrategy": {"type": "OnDelete"}}),
        );
        assert!(matches!(
            spec,
            Spec::StatefulSet {
                strategy: StatefulSetStrategy::OnDelete,
                ..
            }
        ));
    }

    #[test]
    fn a_daemon_sets_placement_joins_its_node_selector_to_each_required_affinity_term() {
        let spec = spec_of(
            "apps/v1",
            "DaemonSet",
            json!({"selector": {"matchLabels": {"app": "x"}}, "template": {"spec": {
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["gpu"]},
                                          {"key": "cores", "operator": "Gt", "values": ["8"]}]},
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]}}}}}}),
        );
        let Spec::DaemonSet { placement, .. } = spec else {
            panic!("not a DaemonSet: {spec:?}");
        };
        assert_eq!(placement.len(), 2);
        let os = |pairs: &[(&str, &str)]| {
            let mut labels: Vec<_> = pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
            labels.sort();
            crate::cluster::object::Labels::from(labels)
        };
        // Term 1: linux and pool=gpu (Gt is left out); term 2 (matchFields only): linux.
        assert!(placement[0].matches(&os(&[("kubernetes.io/os", "linux"), ("pool", "gpu")])));
        assert!(!placement[0].matches(&os(&[("kubernetes.io/os", "linux"), ("pool", "cpu")])));
        assert!(placement[1].matches(&os(&[("kubernetes.io/os", "linux")])));
        assert!(!placement[1].matches(&os(&[("kubernetes.io/os", "windows")])));
        // A nodeSelector alone is one term.
        let spec = spec_of(
            "apps/v1",
            "DaemonSet",
            json!({"selector": {"matchLabels": {"app": "x"}},
                   "template": {"spec": {"nodeSelector": {"agent": "yes"}}}}),
        );
        assert!(matches!(spec, Spec::DaemonSet { placement, .. } if placement.len() == 1));
    }

    #[test]
    fn daemon_set_and_job() {
        let spec = spec_of(
            "apps/v1",
            "DaemonSet",
            json!({"selector": {"matchLabels": {"app": "x"}}}),
        );
        let expected = Spec::DaemonSet {
            selector: app_selector(),
            max_unavailable: IntOrPercent::Int(1),
            max_surge: IntOrPercent::Int(0),
            placement: Box::default(),
        };
        assert_eq!(spec, expected);
        assert_eq!(
            spec_of("batch/v1", "Job", json!({})),
            Spec::Job { selector: None }
        );
    }

    #[test]
    fn disruption_budgets() {
        let spec = spec_of(
            "policy/v1",
            "PodDisruptionBudget",
            json!({"minAvailable": "50%", "selector": {}}),
        );
        let expected = Spec::PodDisruptionBudget {
            selector: Selector::default(),
            min_available: Some(IntOrPercent::Percent(50)),
            max_unavailable: None,
            always_allow_unhealthy: false,
        };
        assert_eq!(spec, expected);
        let always = |policy: &str| match spec_of(
            "policy/v1",
            "PodDisruptionBudget",
            json!({"maxUnavailable": 1, "unhealthyPodEvictionPolicy": policy}),
        ) {
            Spec::PodDisruptionBudget {
                always_allow_unhealthy,
                ..
            } => always_allow_unhealthy,
            other => panic!("not a PDB: {other:?}"),
        };
        assert!(always("AlwaysAllow"));
        assert!(!always("IfHealthyBudget"));
        let Spec::PodDisruptionBudget { selector, .. } =
            spec_of("policy/v1", "PodDisruptionBudget", json!({"maxUnavailable": 1}))
        else {
            panic!("not a PDB");
        };
        assert!(
            !selector.matches(&crate::cluster::object::Labels::default()),
            "a null selector selects no pod"
        );
    }

    #[test]
    fn selector_errors() {
        assert_eq!(
            error_of(
                "apps/v1",
                "StatefulSet",
                json!({"replicas": "three", "selector": {"matchLabels": {"app": "x"}}})
            ),
            "spec.replicas: expected an integer, found \"three\""
        );
        assert_eq!(
            error_of("apps/v1", "ReplicaSet", json!({})),
            "spec.selector: Required value"
        );
        assert_eq!(
            error_of(
                "apps/v1",
                "Deployment",
                json!({"selector": {"matchExpressions": [{"key": "app", "operator": "Contains", "values": ["x"]}]}})
            ),
            "spec.selector.matchExpressions[0].operator: Unsupported value: \"Contains\": supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\""
        );
        assert_eq!(
            error_of(
                "apps/v1",
                "Deployment",
                json!({"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}})
            ),
            "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
        );
        assert_eq!(
            error_of(
                "policy/v1",
                "PodDisruptionBudget",
                json!({"minAvailable": "half"})
            ),
            "spec.minAvailable: expected an integer or a percentage such as \"25%\", found \"half\""
        );
    }
}
