//! Kubernetes label selectors (`matchLabels` + `matchExpressions`), as admission matching uses them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// Why a selector cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error("invalid label selector operator `{0}` (expected In, NotIn, Exists or DoesNotExist)")]
    Operator(String),
    #[error("label selector operator `{operator}` on key `{key}` needs values")]
    MissingValues { operator: String, key: String },
}

/// True when `labels` satisfy `selector`. An empty selector matches everything.
pub fn matches(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> Result<bool, SelectorError> {
    if let Some(required) = &selector.match_labels
        && !required.iter().all(|(k, v)| labels.get(k) == Some(v))
    {
        return Ok(false);
    }
    for requirement in selector.match_expressions.iter().flatten() {
        let values = requirement.values.as_deref().unwrap_or_default();
        let present = labels.get(&requirement.key);
        let needs_values = || {
            if values.is_empty() {
                Err(SelectorError::MissingValues {
                    operator: requirement.operator.clone(),
                    key: requirement.key.clone(),
                })
            } else {
                Ok(())
            }
        };
        let ok = match requirement.operator.as_str() {
            "In" => {
                needs_values()?;
                present.is_some_and(|v| values.contains(v))
            }
            "NotIn" => {
                needs_values()?;
                present.is_none_or(|v| !values.contains(v))
            }
            "Exists" => present.is_some(),
            "DoesNotExist" => present.is_none(),
            other => return Err(SelectorError::Operator(other.to_owned())),
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The `metadata.labels` of a JSON object.
pub fn labels_of(object: &serde_json::Value) -> BTreeMap<String, String> {
    object
        .get("metadata")
        .and_then(|metadata| metadata.get("labels"))
        .and_then(serde_json::Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn expression(key: &str, operator: &str, values: &[&str]) -> LabelSelector {
        LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: key.into(),
                operator: operator.into(),
                values: Some(values.iter().map(|v| v.to_string()).collect()),
            }]),
        }
    }

    #[test]
    fn empty_selector_matches_everything() {
        assert_eq!(matches(&LabelSelector::default(), &labels(&[])), Ok(true));
    }

    #[test]
    fn match_labels_need_every_pair() {
        let selector = LabelSelector {
            match_labels: Some([("app".to_string(), "db".to_string())].into()),
            match_expressions: None,
        };
        assert_eq!(
            matches(&selector, &labels(&[("app", "db"), ("tier", "x")])),
            Ok(true)
        );
        assert_eq!(matches(&selector, &labels(&[("app", "web")])), Ok(false));
    }

    #[test]
    fn operators_follow_kubernetes() {
        let env = labels(&[("env", "prod")]);
        assert_eq!(
            matches(&expression("env", "In", &["prod", "staging"]), &env),
            Ok(true)
        );
        assert_eq!(matches(&expression("env", "NotIn", &["prod"]), &env), Ok(false));
        assert_eq!(matches(&expression("team", "NotIn", &["a"]), &env), Ok(true));
        assert_eq!(matches(&expression("env", "Exists", &[]), &env), Ok(true));
        assert_eq!(matches(&expression("env", "DoesNotExist", &[]), &env), Ok(false));
    }

    #[test]
    fn invalid_operator_is_an_error() {
        assert_eq!(
            matches(&expression("env", "Equals", &["prod"]), &labels(&[])),
            Err(SelectorError::Operator("Equals".into()))
        );
        assert!(matches!(
            matches(&expression("env", "In", &[]), &labels(&[])),
            Err(SelectorError::MissingValues { .. })
        ));
    }
}
