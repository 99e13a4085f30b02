//! The selectors of a `deletecollection` — `labelSelector` and `fieldSelector` in its request
//! URI, or `-l`/`--field-selector` of a what-if — read as kube-apiserver reads them, so that
//! replay and `check delete TYPE -l ...` find the objects of the collection in their model.
//!
//! Label selectors take the whole grammar of `k8s.io/apimachinery/pkg/labels` but the numeric
//! `gt`/`lt` comparisons: `k=v`, `k==v`, `k!=v` (also true without the label), `k in (a,b)`,
//! `k notin (a,b)` (also true without the label), `k` and `!k`. Field selectors are read for the
//! fields every kind has, `metadata.name` and `metadata.namespace`; the model does not keep the
//! kind-specific ones (a pod's `status.phase`), so a selector naming one cannot be evaluated.

use policies_cel::cluster::Object;

/// Why a collection's selectors cannot be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error("label selector {selector:?}: {message}")]
    Label { selector: String, message: String },
    #[error("field selector {selector:?} names {field}, which the model does not keep")]
    Field { selector: String, field: String },
}

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// One requirement of a field selector, on the object's name or namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldRequirement {
    namespace: bool,
    value: String,
    equal: bool,
}

/// A collection's selectors: an object is in the collection when it satisfies all of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selectors {
    labels: Vec<Requirement>,
    fields: Vec<FieldRequirement>,
}

impl Selectors {
    /// The selectors of a request URI's query (none: every object).
    pub fn of_uri(uri: &str) -> Result<Self, SelectorError> {
        let query = uri.split_once('?').map_or("", |(_, query)| query);
        let mut selectors = Self::default();
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            match &*key {
                "labelSelector" => selectors.labels.extend(labels(&value)?),
                "fieldSelector" => selectors.fields.extend(fields(&value)?),
                _ => {}
            }
        }
        Ok(selectors)
    }

    /// The selectors of kubectl's `-l/--selector` and `--field-selector` (none: every object).
    pub fn of_flags(label: Option<&str>, field: Option<&str>) -> Result<Self, SelectorError> {
        Ok(Self {
            labels: label.map(labels).transpose()?.unwrap_or_default(),
            fields: field.map(fields).transpose()?.unwrap_or_default(),
        })
    }

    /// Whether `object` is in the collection.
    pub fn matches(&self, object: &Object) -> bool {
        let label = |key: &str| object.label(key);
        let labelled = self.labels.iter().all(|requirement| match requirement {
            Requirement::In(key, values) => label(key).is_some_and(|v| values.iter().any(|x| x == v)),
            Requirement::NotIn(key, values) => label(key).is_none_or(|v| values.iter().all(|x| x != v)),
            Requirement::Exists(key) => label(key).is_some(),
            Requirement::DoesNotExist(key) => label(key).is_none(),
        });
        labelled
            && self.fields.iter().all(|field| {
                let actual = if field.namespace {
                    &object.key.namespace
                } else {
                    &object.key.name
                };
                (**actual == *field.value) == field.equal
            })
    }
}

/// The objects of `group`/`kind` in `cluster` (in `namespace`, when given) that `selectors`
/// select, in name order, as kube-apiserver lists a collection.
pub fn select<'a>(
    cluster: &'a dyn policies_cel::ClusterView,
    (group, kind): (&str, &str),
    namespace: Option<&str>,
    selectors: &Selectors,
) -> Vec<&'a Object> {
    let mut selected: Vec<&Object> = cluster
        .of_kind(group, kind)
        .into_iter()
        .filter(|o| namespace.is_none_or(|ns| *o.key.namespace == *ns))
        .filter(|o| selectors.matches(o))
        .collect();
    selected.sort_by(|a, b| a.key.name.cmp(&b.key.name));
    selected
}

/// The terms of a selector: split at the commas outside parentheses.
fn terms(selector: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in selector.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                terms.push(&selector[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&selector[start..]);
    terms
        .into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn labels(selector: &str) -> Result<Vec<Requirement>, SelectorError> {
    let fail = |message: String| SelectorError::Label {
        selector: selector.to_owned(),
        message,
    };
    let mut requirements = Vec::new();
    for term in terms(selector) {
        let requirement = if let Some(key) = term.strip_prefix('!') {
            Requirement::DoesNotExist(key.trim().to_owned())
        } else if let Some((key, values)) = set_term(term, " notin ") {
            Requirement::NotIn(key, values.map_err(fail)?)
        } else if let Some((key, values)) = set_term(term, " in ") {
            Requirement::In(key, values.map_err(fail)?)
        } else if let Some((key, value)) = term.split_once("!=") {
            Requirement::NotIn(key.trim().to_owned(), vec![value.trim().to_owned()])
        } else if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
            Requirement::In(key.trim().to_owned(), vec![value.trim().to_owned()])
        } else if term.contains(['<', '>', '(', ')', ' ']) {
            return Err(fail(format!(
                "cannot read {term:?} (gt and lt are not supported)"
            )));
        } else {
            Requirement::Exists(term.to_owned())
        };
        requirements.push(requirement);
    }
    Ok(requirements)
}

/// `key in (a, b)` / `key notin (a, b)`: the key and the values, when `term` is one.
fn set_term(term: &str, operator: &str) -> Option<(String, Result<Vec<String>, String>)> {
    let (key, rest) = term.split_once(operator)?;
    let values = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .map(|inner| inner.split(',').map(|v| v.trim().to_owned()).collect())
        .ok_or_else(|| format!("{term:?}: the values of `{}` go in parentheses", operator.trim()));
    Some((key.trim().to_owned(), values))
}

fn fields(selector: &str) -> Result<Vec<FieldRequirement>, SelectorError> {
    let mut requirements = Vec::new();
    for term in terms(selector) {
        let (field, value, equal) = if let Some((field, value)) = term.split_once("!=") {
            (field, value, false)
        } else if let Some((field, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
            (field, value, true)
        } else {
            (term, "", true)
        };
        let namespace = match field.trim() {
            "metadata.name" => false,
            "metadata.namespace" => true,
            other => {
                return Err(SelectorError::Field {
                    selector: selector.to_owned(),
                    field: other.to_owned(),
                });
            }
        };
        requirements.push(FieldRequirement {
            namespace,
            value: value.trim().to_owned(),
            equal,
        });
    }
    Ok(requirements)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use policies_cel::cluster::{ClusterModel, project};
    use serde_json::json;

    use super::*;

    fn pod(name: &str, labels: serde_json::Value) -> Object {
        let value = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop", "labels": labels}});
        project(&value, &mut ClusterModel::new()).unwrap()
    }

    fn selects(uri: &str, object: &Object) -> bool {
        Selectors::of_uri(uri).unwrap().matches(object)
    }

    #[test]
    fn label_selectors_read_as_kubernetes_reads_them() {
        let web = pod("web-1", json!({"app": "web", "tier": "front"}));
        let bare = pod("tmp", json!({}));
        let uri = |selector: &str| format!("/api/v1/namespaces/shop/pods?labelSelector={selector}");
        assert!(
            selects("/api/v1/namespaces/shop/pods", &bare),
            "no selector: every object"
        );
        assert!(selects(&uri("app%3Dweb"), &web));
        assert!(selects(&uri("app%3D%3Dweb,tier"), &web));
        assert!(!selects(&uri("app%3Dweb"), &bare));
        assert!(selects(&uri("app!%3Ddb"), &bare), "!= holds without the label");
        assert!(selects(&uri("app+in+(web,+db)"), &web));
        assert!(!selects(&uri("app%20notin%20(web)"), &web));
        assert!(selects(&uri("app%20notin%20(web)"), &bare));
        assert!(selects(&uri("!app"), &bare) && !selects(&uri("!app"), &web));
        assert!(Selectors::of_uri(&uri("replicas%3E2")).is_err());
    }

    #[test]
    fn kubectl_flags_read_as_the_query_does() {
        let web = pod("web-1", json!({"app": "web"}));
        let both = Selectors::of_flags(Some("app in (web, db)"), Some("metadata.name=web-1")).unwrap();
        assert_eq!(
            both,
            Selectors::of_uri(
                "/api/v1/pods?labelSelector=app+in+(web,db)&fieldSelector=metadata.name%3Dweb-1"
            )
            .unwrap()
        );
        assert!(both.matches(&web));
        assert!(
            !Selectors::of_flags(None, Some("metadata.name!=web-1"))
                .unwrap()
                .matches(&web)
        );
        assert!(
            Selectors::of_flags(None, None).unwrap().matches(&web),
            "none: every object"
        );
        assert!(Selectors::of_flags(Some("a<1"), None).is_err());
    }

    #[test]
    fn field_selectors_on_name_and_namespace() {
        let web = pod("web-1", json!({}));
        let uri = |selector: &str| format!("/api/v1/pods?fieldSelector={selector}");
        assert!(selects(&uri("metadata.name%3Dweb-1"), &web));
        assert!(!selects(&uri("metadata.name!%3Dweb-1"), &web));
        assert!(selects(
            &uri("metadata.namespace%3D%3Dshop,metadata.name!%3Dother"),
            &web
        ));
        assert_eq!(
            Selectors::of_uri(&uri("status.phase%3DSucceeded")),
            Err(SelectorError::Field {
                selector: "status.phase=Succeeded".into(),
                field: "status.phase".into()
            })
        );
    }
}
