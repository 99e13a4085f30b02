//! A report as the object sent to the API server: `wgpolicyk8s.io/v1alpha2` `PolicyReport` for a
//! namespace, `ClusterPolicyReport` for cluster-scoped objects, with the summary counts and
//! one result per [`ResultKey`] (the wg-policy result: `source`, `policy`, `rule`, `result`,
//! `message`, `scored`, `severity`, `timestamp`, `resources`, and string `properties`: the
//! requester, the operation, the actions, the binding, how often and since when, and the
//! impact's non-zero headline figures as `impact.<figure>`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::reports::book::{Entry, Outcome, ReportBook, ResultKey};

/// The group/version of both report kinds.
pub const API_VERSION: &str = "wgpolicyk8s.io/v1alpha2";
/// The namespaced report's kind.
pub const KIND: &str = "PolicyReport";
/// The cluster report's kind.
pub const CLUSTER_KIND: &str = "ClusterPolicyReport";
/// Every result's `source`: the engine that produced it.
pub const SOURCE: &str = "suture";

/// The prefix of the impact's figures among a result's properties.
pub(crate) const IMPACT_PREFIX: &str = "impact.";

/// The report of `scope` (a namespace, `""` for the cluster report) named `name`, labelled as
/// managed by `manager`; `None` when it has no results (to be deleted).
pub fn render(book: &ReportBook, scope: &str, name: &str, manager: &str) -> Option<Value> {
    let results = book.results(scope)?;
    let mut metadata = json!({
        "name": name,
        "labels": {"app.kubernetes.io/managed-by": manager},
    });
    let kind = if scope.is_empty() {
        CLUSTER_KIND
    } else {
        metadata["namespace"] = json!(scope);
        KIND
    };
    let count = |outcome: Outcome| results.values().filter(|e| e.outcome == outcome).count();
    Some(json!({
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": metadata,
        "summary": {
            "pass": 0,
            "fail": count(Outcome::Fail),
            "warn": count(Outcome::Warn),
            "error": 0,
            "skip": 0,
        },
        "results": results.iter().map(|(key, entry)| result(key, entry)).collect::<Vec<_>>(),
    }))
}

fn result(key: &ResultKey, entry: &Entry) -> Value {
    let subject = &key.subject;
    let mut resource = json!({
        "apiVersion": subject.api_version,
        "kind": subject.kind,
        "name": subject.name,
    });
    if !subject.namespace.is_empty() {
        resource["namespace"] = json!(subject.namespace);
    }
    let mut result = json!({
        "source": SOURCE,
        "policy": key.policy,
        "rule": key.rule,
        "result": entry.outcome.as_str(),
        "message": entry.message,
        "scored": true,
        "timestamp": {"seconds": entry.last.timestamp(), "nanos": 0},
        "resources": [resource],
        "properties": properties(key, entry),
    });
    if let Some(severity) = &entry.severity {
        result["severity"] = json!(severity);
    }
    result
}

fn properties(key: &ResultKey, entry: &Entry) -> Map<String, Value> {
    let mut properties: BTreeMap<String, String> = BTreeMap::new();
    properties.insert("requester".into(), key.requester.clone());
    properties.insert("operation".into(), entry.operation.clone());
    let actions: Vec<String> = entry.actions.iter().map(|a| format!("{a:?}")).collect();
    properties.insert("actions".into(), actions.join(","));
    if let Some(binding) = &entry.binding {
        properties.insert("binding".into(), binding.clone());
    }
    properties.insert("count".into(), entry.count.to_string());
    properties.insert(
        "firstSeen".into(),
        entry.first.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    );
    properties.insert(
        "lastSeen".into(),
        entry.last.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    );
    for (figure, value) in &entry.impact {
        properties.insert(format!("{IMPACT_PREFIX}{figure}"), value.to_string());
    }
    properties
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use chrono::{DateTime, Duration};

    use super::*;
    use crate::eval::Failure;
    use crate::impact::Summary;
    use crate::policy::Action;
    use crate::reports::{Seen, Subject};

    #[test]
    fn a_namespaced_and_a_cluster_report_carry_the_wg_policy_fields() {
        let mut book = ReportBook::new(Duration::hours(1), 10);
        let time = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let impact = Summary {
            pods_disrupted: 3,
            data_loss: 1,
            ..Summary::default()
        };
        let failures = [Failure {
            policy: "protect-quorum".into(),
            binding: Some("everyone".into()),
            validation: Some(1),
            message: "would break quorum".into(),
            actions: vec![Action::Warn, Action::Audit],
        }];
        for (namespace, kind) in [("db", "StatefulSet"), ("", "Node")] {
            let subject = Subject {
                api_version: "v1".into(),
                kind: kind.into(),
                namespace: namespace.into(),
                name: "x".into(),
            };
            let seen = Seen {
                subject: &subject,
                requester: "system:serviceaccount:db:op",
                operation: "DELETE",
                time,
                failures: &failures,
                impact: Some(&impact),
            };
            book.observe(&seen, |_| Some("critical".into()));
        }
        let report = render(&book, "db", "suture", "suture-gateway").unwrap();
        assert_eq!(report["kind"], KIND);
        assert_eq!(report["metadata"]["namespace"], "db");
        assert_eq!(report["summary"]["fail"], 1);
        let result = &report["results"][0];
        assert_eq!(result["rule"], "validations[1]");
        assert_eq!(result["result"], "fail");
        assert_eq!(result["severity"], "critical");
        assert_eq!(result["timestamp"]["seconds"], 1_800_000_000);
        assert_eq!(result["resources"][0]["namespace"], "db");
        let properties = &result["properties"];
        assert_eq!(properties["impact.podsDisrupted"], "3");
        assert_eq!(properties["impact.dataLoss"], "1");
        assert!(
            properties.get("impact.deleted").is_none(),
            "zero figures are left out"
        );
        assert_eq!(properties["actions"], "Warn,Audit");
        assert_eq!(properties["requester"], "system:serviceaccount:db:op");
        let cluster = render(&book, "", "suture", "suture-gateway").unwrap();
        assert_eq!(cluster["kind"], CLUSTER_KIND);
        assert!(cluster["metadata"].get("namespace").is_none());
        assert!(cluster["results"][0]["resources"][0].get("namespace").is_none());
        assert!(render(&book, "web", "suture", "suture-gateway").is_none());
    }
}
