//! A written report read back into a [`ReportBook`]: the writer that takes over (another
//! replica, or this one restarted) continues the results already in the cluster, and ages them
//! out, instead of overwriting them with what it saw itself or leaving them for ever.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::policy::Action;
use crate::reports::Subject;
use crate::reports::book::{Entry, Outcome, ReportBook, ResultKey};
use crate::reports::render::{CLUSTER_KIND, IMPACT_PREFIX, SOURCE};

/// Adopts every Suture result of `report` (a PolicyReport or ClusterPolicyReport as the API
/// server returns it) into `book`; returns how many. Results of other sources, and results
/// without the fields Suture writes, are left out.
pub fn adopt(book: &mut ReportBook, report: &Value) -> usize {
    let scope = if report["kind"] == CLUSTER_KIND {
        String::new()
    } else {
        report["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let Some(results) = report["results"].as_array() else {
        return 0;
    };
    let mut adopted = 0;
    for result in results.iter().filter(|r| r["source"] == SOURCE) {
        if let Some((key, entry)) = read_result(result) {
            book.adopt(&scope, key, entry);
            adopted += 1;
        }
    }
    adopted
}

fn read_result(result: &Value) -> Option<(ResultKey, Entry)> {
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let properties = &result["properties"];
    let property = |name: &str| properties[name].as_str();
    let time = |name: &str| {
        property(name)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&Utc))
    };
    let resource = &result["resources"][0];
    let subject = Subject {
        api_version: text(&resource["apiVersion"])?,
        kind: text(&resource["kind"])?,
        namespace: text(&resource["namespace"]).unwrap_or_default(),
        name: text(&resource["name"])?,
    };
    let key = ResultKey {
        policy: text(&result["policy"])?,
        rule: text(&result["rule"])?,
        subject,
        requester: property("requester")?.to_owned(),
    };
    let outcome = match result["result"].as_str()? {
        "fail" => Outcome::Fail,
        "warn" => Outcome::Warn,
        _ => return None,
    };
    let last = time("lastSeen")?;
    let actions = property("actions")
        .unwrap_or_default()
        .split(',')
        .filter_map(|a| match a {
            "Deny" => Some(Action::Deny),
            "Warn" => Some(Action::Warn),
            "Audit" => Some(Action::Audit),
            _ => None,
        })
        .collect();
    let impact: BTreeMap<String, u64> = properties
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| {
            let figure = name.strip_prefix(IMPACT_PREFIX)?;
            Some((figure.to_owned(), value.as_str()?.parse().ok()?))
        })
        .collect();
    let entry = Entry {
        outcome,
        message: text(&result["message"]).unwrap_or_default(),
        binding: property("binding").map(str::to_owned),
        actions,
        operation: property("operation").unwrap_or_default().to_owned(),
        severity: text(&result["severity"]),
        impact,
        first: time("firstSeen").unwrap_or(last),
        last,
        count: property("count").and_then(|c| c.parse().ok()).unwrap_or(1),
        unwritten: 0,
    };
    Some((key, entry))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use chrono::Duration;

    use super::*;
    use crate::eval::Failure;
    use crate::impact::Summary;
    use crate::reports::{Seen, render};

    #[test]
    fn a_rendered_report_reads_back_into_the_same_results() {
        let mut book = ReportBook::new(Duration::hours(1), 10);
        let subject = Subject {
            api_version: "apps/v1".into(),
            kind: "StatefulSet".into(),
            namespace: "db".into(),
            name: "pg".into(),
        };
        let failures = [Failure {
            policy: "quorum".into(),
            binding: Some("b".into()),
            validation: None,
            message: "no".into(),
            actions: vec![Action::Deny, Action::Audit],
        }];
        let impact = Summary {
            pods_disrupted: 2,
            ..Summary::default()
        };
        let time = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        for seconds in [0, 30] {
            let seen = Seen {
                subject: &subject,
                requester: "op",
                operation: "DELETE",
                time: time + Duration::seconds(seconds),
                failures: &failures,
                impact: Some(&impact),
            };
            book.observe(&seen, |_| Some("low".into()));
        }
        let mut report = render(&book, "db", "suture", "suture-gateway").unwrap();
        let mut other = report["results"][0].clone();
        other["source"] = "kyverno".into();
        report["results"].as_array_mut().unwrap().push(other);
        let mut read = ReportBook::new(Duration::hours(1), 10);
        assert_eq!(adopt(&mut read, &report), 1);
        book.written("db");
        assert_eq!(read.results("db"), book.results("db"));
        assert!(!read.is_dirty(), "adopted results are already written");
    }
}
