//! The built-in pack's suites (`testdata/suites/pack`): every case passes, and every pack policy
//! has at least three harmful cases (denied by it) and three routine cases (allowed by the whole
//! pack) in its own suite — the bar the pack is held to.

use crate::common;

use std::collections::BTreeMap;

use common::{json, stderr, suture};

const PACK_SUITES: &str = "testdata/suites/pack";

#[test]
fn every_pack_case_passes() {
    let out = suture()
        .args(["test", PACK_SUITES, "-o", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    assert_eq!(report["failed"], 0, "{report}");
    assert!(report["passed"].as_u64().unwrap() >= 60, "{report}");
}

#[test]
fn every_policy_has_three_harmful_and_three_routine_cases() {
    let (mut harmful, mut routine) = (BTreeMap::<String, usize>::new(), BTreeMap::<String, usize>::new());
    let mut stems: Vec<String> = std::fs::read_dir(common::root().join("policies-cel/pack"))
        .unwrap()
        .map(|entry| {
            entry
                .unwrap()
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".yaml")
                .to_owned()
        })
        .collect();
    stems.sort();
    assert_eq!(stems.len(), 10, "{stems:?}");
    for stem in stems {
        let policy = format!("suture-{stem}");
        let suite = common::root().join(PACK_SUITES).join(format!("{stem}.test.yaml"));
        let text = std::fs::read_to_string(&suite).unwrap_or_else(|e| panic!("{}: {e}", suite.display()));
        let doc: serde_json::Value = serde_yaml_ng::from_str(&text).unwrap();
        for case in doc["cases"].as_array().unwrap() {
            let expect = &case["expect"];
            let denies_by_policy = expect["allowed"] == false
                && expect["policies"]
                    .as_array()
                    .is_some_and(|p| p.iter().any(|n| n == policy.as_str()));
            if denies_by_policy {
                *harmful.entry(policy.clone()).or_default() += 1;
            } else if expect["allowed"] == true {
                *routine.entry(policy.clone()).or_default() += 1;
            }
        }
        let (h, r) = (
            harmful.get(&policy).copied().unwrap_or(0),
            routine.get(&policy).copied().unwrap_or(0),
        );
        assert!(
            h >= 3 && r >= 3,
            "{policy}: {h} harmful and {r} routine cases in {}",
            suite.display()
        );
    }
}
