//! The `wgpolicyk8s.io/v1alpha2` PolicyReport and ClusterPolicyReport CustomResourceDefinitions
//! the gateway writes its reports into, rendered only with `--policy-report-crds`: Kyverno,
//! Kubewarden and Policy Reporter install the same kinds, and applying a second definition over
//! theirs would fight over its fields. Written here from the wg-policy API's fields (a
//! structural schema of what reports hold; other tools' extra fields are preserved).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

use crate::install::names;

/// The reports' API group.
pub const GROUP: &str = "wgpolicyk8s.io";

/// Both definitions: the namespaced PolicyReport, then the ClusterPolicyReport.
pub fn crds() -> Result<Vec<CustomResourceDefinition>, serde_json::Error> {
    [
        ("PolicyReport", "policyreports", "polr", "Namespaced"),
        ("ClusterPolicyReport", "clusterpolicyreports", "cpolr", "Cluster"),
    ]
    .into_iter()
    .map(|(kind, plural, short, scope)| serde_json::from_value(crd(kind, plural, short, scope)))
    .collect()
}

fn crd(kind: &str, plural: &str, short: &str, scope: &str) -> Value {
    let columns: Vec<Value> = ["Pass", "Fail", "Warn", "Error", "Skip"]
        .iter()
        .map(|name| {
            json!({"name": name, "type": "integer", "jsonPath": format!(".summary.{}", name.to_lowercase())})
        })
        .chain([json!({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})])
        .collect();
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}"), "labels": names::labels()},
        "spec": {
            "group": GROUP,
            "names": {
                "kind": kind,
                "listKind": format!("{kind}List"),
                "plural": plural,
                "singular": kind.to_lowercase(),
                "shortNames": [short],
                "categories": ["all"],
            },
            "scope": scope,
            "versions": [{
                "name": "v1alpha2",
                "served": true,
                "storage": true,
                "additionalPrinterColumns": columns,
                "schema": {"openAPIV3Schema": schema()},
            }],
        },
    })
}

fn preserved() -> Value {
    json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
}

fn schema() -> Value {
    let count = json!({"type": "integer"});
    let result = json!({
        "type": "object",
        "required": ["policy"],
        "x-kubernetes-preserve-unknown-fields": true,
        "properties": {
            "source": {"type": "string"},
            "policy": {"type": "string"},
            "rule": {"type": "string"},
            "category": {"type": "string"},
            "severity": {"type": "string", "enum": ["critical", "high", "low", "medium", "info"]},
            "timestamp": {
                "type": "object",
                "properties": {"seconds": {"type": "integer", "format": "int64"}, "nanos": {"type": "integer", "format": "int32"}},
            },
            "result": {"type": "string", "enum": ["pass", "fail", "warn", "error", "skip"]},
            "scored": {"type": "boolean"},
            "message": {"type": "string"},
            "resources": {"type": "array", "items": preserved()},
            "resourceSelector": preserved(),
            "properties": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    });
    json!({
        "type": "object",
        "description": "A report of policy results (wgpolicyk8s.io/v1alpha2).",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "scope": preserved(),
            "scopeSelector": preserved(),
            "summary": {
                "type": "object",
                "properties": {"pass": count, "fail": count, "warn": count, "error": count, "skip": count},
            },
            "results": {"type": "array", "items": result},
        },
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;

    #[test]
    fn both_kinds_are_typed_definitions_of_the_v1alpha2_api() {
        let crds = crds().unwrap();
        let names: Vec<_> = crds.iter().map(|c| c.metadata.name.clone().unwrap()).collect();
        assert_eq!(
            names,
            [
                "policyreports.wgpolicyk8s.io",
                "clusterpolicyreports.wgpolicyk8s.io"
            ]
        );
        assert_eq!(crds[1].spec.scope, "Cluster");
        let version = &crds[0].spec.versions[0];
        assert_eq!(version.name, "v1alpha2");
        let schema = version
            .schema
            .as_ref()
            .unwrap()
            .open_api_v3_schema
            .as_ref()
            .unwrap();
        let results = &schema.properties.as_ref().unwrap()["results"];
        let item = match results.items.as_ref().unwrap() {
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray::Schema(s) => s,
            other => panic!("{other:?}"),
        };
        assert!(item.properties.as_ref().unwrap().contains_key("properties"));
    }
}
