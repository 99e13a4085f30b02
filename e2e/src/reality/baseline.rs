//! The baseline (`testdata/reality/baseline.yaml`): for every scenario, the figures on which the
//! estimate is known to disagree with the controllers and why. Against it a run fails on a
//! regression (a figure that agreed and no longer does), on a disagreement nobody explained, and
//! on a scenario the baseline does not know; a figure that now agrees is reported, so the
//! baseline can be tightened. `SUTURE_REALITY_UPDATE=1` rewrites it from the run, keeping the
//! explanations and marking new disagreements `why: TODO`, which still fails.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::reality::figure::Figure;
use crate::reality::report::disagreements;
use crate::reality::run::Outcome;

/// What is known about one scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Known {
    /// Figures (contract names) on which the estimate disagrees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disagrees: Vec<String>,
    /// Why: a controller timing the estimate cannot know, or a modelling choice.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
}

/// The baseline file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    pub scenarios: BTreeMap<String, Known>,
}

/// Where the baseline lives in the repository.
pub fn path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/reality/baseline.yaml")
}

const HEADER: &str = "\
# The reality harness's baseline (e2e/src/reality): for each scenario, the figures of the impact
# estimate that disagree with what the real controllers did, and why. A figure not listed must
# agree object by object; `cargo test -p suture-e2e -- reality` fails on a regression. Rewrite
# with SUTURE_REALITY_UPDATE=1 (explanations are kept; new disagreements get `why: TODO`).
";

impl Baseline {
    /// Reads the baseline (an absent file is an empty baseline).
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_yaml_ng::from_str(&text).with_context(|| format!("{}", path.display())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(error) => Err(error).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Writes the baseline.
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        let text = format!("{HEADER}{}", serde_yaml_ng::to_string(self)?);
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
    }

    /// This baseline updated from `outcomes` (explanations kept).
    pub fn updated(&self, outcomes: &[Outcome]) -> Self {
        let mut next = Baseline::default();
        for outcome in outcomes {
            let disagrees: Vec<String> = disagreements(outcome)
                .iter()
                .map(|f| f.name().to_owned())
                .collect();
            let known = self.scenarios.get(&outcome.name);
            let why = match known {
                _ if disagrees.is_empty() => String::new(),
                Some(k) if !k.why.is_empty() => k.why.clone(),
                _ => "TODO".to_owned(),
            };
            next.scenarios
                .insert(outcome.name.clone(), Known { disagrees, why });
        }
        next
    }

    /// What `outcomes` break: regressions, unexplained disagreements and unknown scenarios
    /// (empty when the run holds); and the figures that now agree though listed.
    pub fn check(&self, outcomes: &[Outcome]) -> (Vec<String>, Vec<String>) {
        let mut failures = Vec::new();
        let mut improved = Vec::new();
        for outcome in outcomes {
            let Some(known) = self.scenarios.get(&outcome.name) else {
                failures.push(format!(
                    "{}: not in the baseline (run with SUTURE_REALITY_UPDATE=1)",
                    outcome.name
                ));
                continue;
            };
            let now: Vec<Figure> = disagreements(outcome);
            for figure in &now {
                if !known.disagrees.iter().any(|d| d == figure.name()) {
                    failures.push(format!(
                        "{}: {} no longer agrees with reality",
                        outcome.name,
                        figure.name()
                    ));
                }
            }
            if !known.disagrees.is_empty() && (known.why.is_empty() || known.why == "TODO") {
                failures.push(format!(
                    "{}: its disagreement is not explained in the baseline",
                    outcome.name
                ));
            }
            for listed in &known.disagrees {
                if Figure::parse(listed).is_none() {
                    failures.push(format!("{}: `{listed}` is not a figure", outcome.name));
                } else if !now.iter().any(|f| f.name() == listed) {
                    improved.push(format!("{}: {listed} now agrees", outcome.name));
                }
            }
        }
        (failures, improved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reality::figure::{Figure, Figures};

    fn outcome(name: &str, agrees: bool) -> Outcome {
        let mut estimate = Figures::new();
        let mut reality = Figures::new();
        estimate.insert(Figure::Deleted, [("1".to_owned(), "Pod x/a".to_owned())].into());
        let seen = if agrees { "1" } else { "2" };
        reality.insert(Figure::Deleted, [(seen.to_owned(), "Pod x/b".to_owned())].into());
        Outcome {
            name: name.to_owned(),
            rule: String::new(),
            request: String::new(),
            estimate,
            reality,
            notes: Vec::new(),
            seconds: 0.0,
        }
    }

    fn known(disagrees: &[&str], why: &str) -> Known {
        Known {
            disagrees: disagrees.iter().map(|d| (*d).to_owned()).collect(),
            why: why.to_owned(),
        }
    }

    #[test]
    fn a_regression_an_unexplained_disagreement_and_an_unknown_scenario_fail() {
        let baseline = Baseline {
            scenarios: [
                ("agreed".to_owned(), Known::default()),
                (
                    "explained".to_owned(),
                    known(&["deleted"], "a controller's timing"),
                ),
                ("todo".to_owned(), known(&["deleted"], "TODO")),
                ("improved".to_owned(), known(&["deleted"], "a modelling choice")),
            ]
            .into(),
        };
        let outcomes = [
            outcome("agreed", false),
            outcome("explained", false),
            outcome("todo", false),
            outcome("improved", true),
            outcome("new", true),
        ];
        let (failures, improved) = baseline.check(&outcomes);
        assert_eq!(failures.len(), 3, "{failures:?}");
        assert!(failures[0].starts_with("agreed: deleted no longer agrees"));
        assert!(failures[1].starts_with("todo: its disagreement is not explained"));
        assert!(failures[2].starts_with("new: not in the baseline"));
        assert_eq!(improved, ["improved: deleted now agrees"]);
    }

    #[test]
    fn an_update_keeps_explanations_and_marks_new_disagreements() {
        let baseline = Baseline {
            scenarios: [("explained".to_owned(), known(&["deleted"], "why"))].into(),
        };
        let next = baseline.updated(&[
            outcome("explained", false),
            outcome("new", false),
            outcome("fine", true),
        ]);
        assert_eq!(next.scenarios["explained"], known(&["deleted"], "why"));
        assert_eq!(next.scenarios["new"], known(&["deleted"], "TODO"));
        assert_eq!(next.scenarios["fine"], Known::default());
        let text = serde_yaml_ng::to_string(&next).unwrap_or_default();
        assert_eq!(serde_yaml_ng::from_str::<Baseline>(&text).ok(), Some(next));
    }
}
