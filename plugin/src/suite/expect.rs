//! Expectations of a case, compiled (regular expressions checked when the suite loads), and the
//! comparison with a decision that explains every mismatch.

use policies_cel::Decision;
use regex::Regex;

use crate::suite::model::ExpectDoc;

/// A case's compiled expectations.
#[derive(Debug, Clone)]
pub struct Expect {
    pub allowed: bool,
    pub denials: Option<usize>,
    pub message: Option<Regex>,
    pub warnings: Option<Vec<Regex>>,
    pub policies: Vec<String>,
    pub audit_annotations: Vec<(String, Regex)>,
    /// What the estimate must show.
    pub impact: ImpactExpect,
}

/// The summary fields a suite may expect (the `impact` contract).
const SUMMARY_FIELDS: &[&str] = &[
    "deleted",
    "podsDisrupted",
    "dataLoss",
    "servicesWithoutEndpoints",
    "pdbViolations",
    "workloadsDown",
    "quorumLost",
    "brokenReferences",
    "externalDataLoss",
];

/// A list of regular expressions under `expect.impact.<field>`.
fn patterns(
    object: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Option<Vec<Regex>>, String> {
    let Some(value) = object.get(field) else {
        return Ok(None);
    };
    let Some(list) = value.as_array() else {
        return Err(format!(
            "expect.impact.{field} must be a list of regular expressions"
        ));
    };
    list.iter()
        .map(|item| {
            let text = item
                .as_str()
                .ok_or_else(|| format!("expect.impact.{field}: expected strings (regular expressions)"))?;
            regex(&format!("impact.{field}"), text)
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// `expect.impact`: `{summary: {field: count, ...}, modelled: bool, notes: [regex], intendedBy:
/// [regex]}`, each part optional.
fn impact_expectations(doc: &serde_json::Value) -> Result<ImpactExpect, String> {
    let Some(object) = doc.as_object() else {
        return Err("expect.impact must be a map".into());
    };
    if let Some(other) = object
        .keys()
        .find(|k| !matches!(k.as_str(), "summary" | "modelled" | "notes" | "intendedBy"))
    {
        return Err(format!(
            "expect.impact.{other}: only `summary`, `modelled`, `notes` and `intendedBy` can be expected"
        ));
    }
    let notes = patterns(object, "notes")?;
    let intended_by = patterns(object, "intendedBy")?;
    let modelled = match object.get("modelled") {
        None => None,
        Some(value) => Some(
            value
                .as_bool()
                .ok_or("expect.impact.modelled: expected true or false")?,
        ),
    };
    let summary = match object.get("summary") {
        None if modelled.is_some() || notes.is_some() || intended_by.is_some() => Vec::new(),
        None => {
            return Err(
                "expect.impact needs `summary` (a map of figures), `modelled`, `notes` or `intendedBy`"
                    .into(),
            );
        }
        Some(summary) => {
            let Some(summary) = summary.as_object() else {
                return Err("expect.impact.summary must be a map of figures".into());
            };
            summary
                .iter()
                .map(|(field, value)| {
                    if !SUMMARY_FIELDS.contains(&field.as_str()) {
                        return Err(format!(
                            "expect.impact.summary.{field}: unknown figure (expected one of {})",
                            SUMMARY_FIELDS.join(", ")
                        ));
                    }
                    let count = value.as_u64().ok_or_else(|| {
                        format!("expect.impact.summary.{field}: expected a non-negative integer")
                    })?;
                    Ok((field.clone(), count))
                })
                .collect::<Result<_, String>>()?
        }
    };
    Ok(ImpactExpect {
        summary,
        modelled,
        notes,
        intended_by,
    })
}

/// What a case expects of the estimate.
#[derive(Debug, Clone, Default)]
pub struct ImpactExpect {
    /// `impact.summary` figures, by contract name.
    pub summary: Vec<(String, u64)>,
    /// `impact.modelled`: whether a rule of the estimate covers the request.
    pub modelled: Option<bool>,
    /// Each matches at least one of `impact.notes`.
    pub notes: Option<Vec<Regex>>,
    /// Each matches the `by` of at least one of `impact.intended`; empty: nothing is intended.
    pub intended_by: Option<Vec<Regex>>,
}

fn regex(field: &str, pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| format!("expect.{field}: invalid regular expression {pattern:?}: {e}"))
}

impl Expect {
    /// Compiles the written expectations.
    pub fn compile(doc: &ExpectDoc) -> Result<Self, String> {
        if doc.allowed && doc.denials.is_some_and(|n| n > 0) {
            return Err("expect.allowed is true but expect.denials is not 0".into());
        }
        Ok(Self {
            allowed: doc.allowed,
            denials: doc.denials,
            message: doc.message.as_deref().map(|m| regex("message", m)).transpose()?,
            warnings: doc
                .warnings
                .as_ref()
                .map(|list| {
                    list.iter()
                        .map(|w| regex("warnings", w))
                        .collect::<Result<Vec<_>, _>>()
                })
                .transpose()?,
            policies: doc.policies.clone().unwrap_or_default(),
            audit_annotations: doc
                .audit_annotations
                .iter()
                .flatten()
                .map(|(key, value)| Ok((key.clone(), regex(&format!("auditAnnotations[{key:?}]"), value)?)))
                .collect::<Result<Vec<_>, String>>()?,
            impact: doc
                .impact
                .as_ref()
                .map(impact_expectations)
                .transpose()?
                .unwrap_or_default(),
        })
    }

    /// True when the expectations read the impact estimate.
    pub fn reads_impact(&self) -> bool {
        !self.impact.summary.is_empty()
            || self.impact.modelled.is_some()
            || self.impact.notes.is_some()
            || self.impact.intended_by.is_some()
    }

    /// Every way `decision` differs from the expectation; empty when the case passes.
    pub fn mismatches(&self, decision: &Decision) -> Vec<String> {
        let mut out = Vec::new();
        let messages: Vec<&str> = decision.denials.iter().map(|d| d.message.as_str()).collect();
        if decision.allowed != self.allowed {
            out.push(if self.allowed {
                format!(
                    "expected the request to be allowed, but it was denied: {}",
                    denials_summary(decision)
                )
            } else {
                "expected the request to be denied, but it was allowed".to_owned()
            });
        }
        if let Some(count) = self.denials
            && decision.denials.len() != count
        {
            out.push(format!(
                "expected {count} denial(s), got {}",
                decision.denials.len()
            ));
        }
        if let Some(pattern) = &self.message
            && !messages.iter().any(|m| pattern.is_match(m))
        {
            out.push(format!(
                "no denial message matches /{pattern}/ (messages: {})",
                quoted_list(&messages)
            ));
        }
        self.check_warnings(decision, &mut out);
        let denying: Vec<&str> = decision.denials.iter().map(|d| d.policy.as_str()).collect();
        for policy in &self.policies {
            if !denying.contains(&policy.as_str()) {
                out.push(format!(
                    "expected policy {policy:?} to deny (denied by: {})",
                    quoted_list(&denying)
                ));
            }
        }
        for (key, pattern) in &self.audit_annotations {
            match decision.audit_annotations.get(key) {
                None => {
                    let keys: Vec<&str> = decision.audit_annotations.keys().map(String::as_str).collect();
                    out.push(format!(
                        "audit annotation {key:?} is missing (present: {})",
                        quoted_list(&keys)
                    ));
                }
                Some(value) if !pattern.is_match(value) => {
                    out.push(format!(
                        "audit annotation {key:?} = {value:?} does not match /{pattern}/"
                    ));
                }
                Some(_) => {}
            }
        }
        self.check_impact(decision, &mut out);
        out
    }

    fn check_impact(&self, decision: &Decision, out: &mut Vec<String>) {
        if !self.reads_impact() {
            return;
        }
        let Some(impact) = &decision.impact else {
            out.push("expected impact figures, but no estimate was made".to_owned());
            return;
        };
        if let Some(expected) = self.impact.modelled
            && impact.modelled != expected
        {
            out.push(format!(
                "expected impact.modelled = {expected}, got {}",
                impact.modelled
            ));
        }
        for pattern in self.impact.notes.iter().flatten() {
            if !impact.notes.iter().any(|n| pattern.is_match(n)) {
                out.push(format!(
                    "no impact note matches /{pattern}/ (notes: {})",
                    quoted_list(&impact.notes.iter().map(String::as_str).collect::<Vec<_>>())
                ));
            }
        }
        if let Some(patterns) = &self.impact.intended_by {
            let by: Vec<&str> = impact.intended.iter().map(|i| i.by.as_str()).collect();
            if patterns.is_empty() && !by.is_empty() {
                out.push(format!("expected nothing intended, got {}", quoted_list(&by)));
            }
            for pattern in patterns {
                if !by.iter().any(|b| pattern.is_match(b)) {
                    out.push(format!(
                        "no impact.intended entry is by /{pattern}/ (intended by: {})",
                        quoted_list(&by)
                    ));
                }
            }
        }
        let summary = serde_json::to_value(impact.summary).unwrap_or_default();
        for (field, expected) in &self.impact.summary {
            let actual = summary
                .get(field)
                .and_then(serde_json::Value::as_u64)
                .unwrap_or_default();
            if actual != *expected {
                out.push(format!(
                    "expected impact.summary.{field} = {expected}, got {actual}"
                ));
            }
        }
    }

    fn check_warnings(&self, decision: &Decision, out: &mut Vec<String>) {
        let Some(patterns) = &self.warnings else { return };
        let warnings: Vec<&str> = decision.warnings.iter().map(String::as_str).collect();
        if patterns.is_empty() && !warnings.is_empty() {
            out.push(format!("expected no warnings, got {}", quoted_list(&warnings)));
        }
        for pattern in patterns {
            if !warnings.iter().any(|w| pattern.is_match(w)) {
                out.push(format!(
                    "no warning matches /{pattern}/ (warnings: {})",
                    quoted_list(&warnings)
                ));
            }
        }
    }
}

fn denials_summary(decision: &Decision) -> String {
    let parts: Vec<String> = decision
        .denials
        .iter()
        .map(|d| format!("{}: {:?}", d.policy, d.message))
        .collect();
    if parts.is_empty() {
        "no denials recorded".to_owned()
    } else {
        parts.join("; ")
    }
}

fn quoted_list(items: &[&str]) -> String {
    if items.is_empty() {
        return "none".to_owned();
    }
    items
        .iter()
        .map(|item| format!("{item:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use policies_cel::Denial;
    use std::collections::BTreeMap;

    fn doc(yaml: &str) -> ExpectDoc {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    fn denied(policy: &str, message: &str) -> Decision {
        Decision {
            allowed: false,
            denials: vec![Denial {
                policy: policy.into(),
                binding: None,
                validation: Some(0),
                message: message.into(),
                reason: "Forbidden".into(),
            }],
            warnings: vec!["replicas are high".into()],
            audit_annotations: BTreeMap::from([("p/why".to_owned(), "scale-down".to_owned())]),
            ..Decision::default()
        }
    }

    #[test]
    fn a_matching_decision_has_no_mismatches() {
        let expect = Expect::compile(&doc(
            "allowed: false\ndenials: 1\nmessage: 'quorum'\nwarnings: ['high$']\npolicies: [sts]\nauditAnnotations: {p/why: '^scale'}",
        ))
        .unwrap();
        assert_eq!(
            expect.mismatches(&denied("sts", "would lose quorum")),
            Vec::<String>::new()
        );
    }

    #[test]
    fn every_mismatch_is_explained() {
        let expect = Expect::compile(&doc(
            "allowed: true\nmessage: nope\nwarnings: []\npolicies: [other]\nauditAnnotations: {x: y}",
        ))
        .unwrap();
        let found = expect.mismatches(&denied("sts", "would lose quorum"));
        assert_eq!(
            found,
            vec![
                "expected the request to be allowed, but it was denied: sts: \"would lose quorum\"",
                "no denial message matches /nope/ (messages: \"would lose quorum\")",
                "expected no warnings, got \"replicas are high\"",
                "expected policy \"other\" to deny (denied by: \"sts\")",
                "audit annotation \"x\" is missing (present: \"p/why\")",
            ]
        );
    }

    #[test]
    fn a_modelled_expectation_is_compared_with_the_estimate() {
        let expect = Expect::compile(&doc("allowed: true\nimpact: {modelled: false}")).unwrap();
        let mut decision = Decision {
            allowed: true,
            ..Decision::default()
        };
        assert_eq!(
            expect.mismatches(&decision),
            ["expected impact figures, but no estimate was made"]
        );
        decision.impact = Some(policies_cel::impact::Impact {
            modelled: true,
            ..Default::default()
        });
        assert_eq!(
            expect.mismatches(&decision),
            ["expected impact.modelled = false, got true"]
        );
        decision.impact = Some(policies_cel::impact::Impact::default());
        assert!(expect.mismatches(&decision).is_empty());
    }

    #[test]
    fn bad_expectations_are_rejected_when_loading() {
        assert!(Expect::compile(&doc("allowed: false\nmessage: '('")).is_err());
        assert!(Expect::compile(&doc("allowed: true\ndenials: 2")).is_err());
        assert!(Expect::compile(&doc("allowed: true\nimpact: {summary: {podsDisrupted: 3}}")).is_ok());
        assert!(Expect::compile(&doc("allowed: true\nimpact: {modelled: false}")).is_ok());
        assert!(Expect::compile(&doc("allowed: true\nimpact: {modelled: 'no'}")).is_err());
        assert!(Expect::compile(&doc("allowed: true\nimpact: {}")).is_err());
        assert!(Expect::compile(&doc("allowed: true\nimpact: {summary: {podsKilled: 3}}")).is_err());
        assert!(Expect::compile(&doc("allowed: true\nimpact: {deleted: []}")).is_err());
    }
}
