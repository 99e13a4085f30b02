//! Reading rendered manifests back into their k8s-openapi types, to check they are what
//! Kubernetes would accept: every document must deserialize into its kind's type and serialize
//! back to the same tree (a misspelled or misplaced field would be dropped, and the trees differ).

use k8s_openapi::api::admissionregistration::v1::{
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Secret, Service, ServiceAccount};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why a rendered document is not a valid object.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    #[error("document {index} is not YAML")]
    Yaml {
        index: usize,
        #[source]
        source: serde_yaml_ng::Error,
    },
    #[error("document {index} ({kind}) does not match its type")]
    Type {
        index: usize,
        kind: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("document {index} ({kind}) has fields its type does not know: {differences}")]
    RoundTrip {
        index: usize,
        kind: String,
        differences: String,
    },
    #[error("document {index} has an unexpected kind {kind}")]
    UnknownKind { index: usize, kind: String },
}

/// One rendered object, typed.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // a handful of objects, read once
pub enum Manifest {
    Namespace(Namespace),
    CustomResourceDefinition(CustomResourceDefinition),
    ServiceAccount(ServiceAccount),
    ClusterRole(ClusterRole),
    ClusterRoleBinding(ClusterRoleBinding),
    Role(Role),
    RoleBinding(RoleBinding),
    Secret(Secret),
    Service(Service),
    Deployment(Deployment),
    PodDisruptionBudget(PodDisruptionBudget),
    ValidatingWebhookConfiguration(ValidatingWebhookConfiguration),
    ValidatingAdmissionPolicy(ValidatingAdmissionPolicy),
    ValidatingAdmissionPolicyBinding(ValidatingAdmissionPolicyBinding),
    /// cert-manager's Issuer and Certificate (not k8s-openapi types): kept as JSON.
    CertManager(Value),
}

fn typed<T: DeserializeOwned + serde::Serialize>(
    index: usize,
    kind: &str,
    value: &Value,
) -> Result<T, ParseError> {
    let object: T = serde_json::from_value(value.clone()).map_err(|source| ParseError::Type {
        index,
        kind: kind.to_owned(),
        source,
    })?;
    let back = serde_json::to_value(&object).map_err(|source| ParseError::Type {
        index,
        kind: kind.to_owned(),
        source,
    })?;
    if &back != value {
        let mut differences = Vec::new();
        diff("", value, &back, &mut differences);
        return Err(ParseError::RoundTrip {
            index,
            kind: kind.to_owned(),
            differences: differences.join(", "),
        });
    }
    Ok(object)
}

/// Paths present in `original` that the typed round trip lost or changed.
fn diff(path: &str, original: &Value, back: &Value, out: &mut Vec<String>) {
    match (original, back) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                let child = format!("{path}.{key}");
                match b.get(key) {
                    Some(other) => diff(&child, value, other, out),
                    None => out.push(child),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}[{i}]"), x, y, out);
            }
        }
        _ if original != back => out.push(path.to_owned()),
        _ => {}
    }
}

/// Every document of a rendered stream, typed. Comment-only documents are skipped.
pub fn parse_stream(yaml: &str) -> Result<Vec<Manifest>, ParseError> {
    let mut manifests = Vec::new();
    for (index, document) in serde_yaml_ng::Deserializer::from_str(yaml).enumerate() {
        let value = Value::deserialize(document).map_err(|source| ParseError::Yaml { index, source })?;
        if value.is_null() {
            continue;
        }
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or("").to_owned();
        let group = value
            .get("apiVersion")
            .and_then(Value::as_str)
            .and_then(|v| v.split_once('/'))
            .map_or("", |(group, _)| group);
        let manifest = match kind.as_str() {
            "Namespace" => Manifest::Namespace(typed(index, &kind, &value)?),
            "CustomResourceDefinition" => Manifest::CustomResourceDefinition(typed(index, &kind, &value)?),
            "ServiceAccount" => Manifest::ServiceAccount(typed(index, &kind, &value)?),
            "ClusterRole" => Manifest::ClusterRole(typed(index, &kind, &value)?),
            "ClusterRoleBinding" => Manifest::ClusterRoleBinding(typed(index, &kind, &value)?),
            "Role" => Manifest::Role(typed(index, &kind, &value)?),
            "RoleBinding" => Manifest::RoleBinding(typed(index, &kind, &value)?),
            "Secret" => Manifest::Secret(typed(index, &kind, &value)?),
            "Service" => Manifest::Service(typed(index, &kind, &value)?),
            "Deployment" => Manifest::Deployment(typed(index, &kind, &value)?),
            "PodDisruptionBudget" => Manifest::PodDisruptionBudget(typed(index, &kind, &value)?),
            "ValidatingWebhookConfiguration" => {
                Manifest::ValidatingWebhookConfiguration(typed(index, &kind, &value)?)
            }
            "ValidatingAdmissionPolicy" => Manifest::ValidatingAdmissionPolicy(typed(index, &kind, &value)?),
            "ValidatingAdmissionPolicyBinding" => {
                Manifest::ValidatingAdmissionPolicyBinding(typed(index, &kind, &value)?)
            }
            "Issuer" | "Certificate" if group == "cert-manager.io" => Manifest::CertManager(value),
            _ => return Err(ParseError::UnknownKind { index, kind }),
        };
        manifests.push(manifest);
    }
    Ok(manifests)
}
