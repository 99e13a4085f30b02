//! Running suites: load each suite's policies once, judge every selected case with `evaluate()`
//! and compare the decision with the case's expectations.

use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use policies_cel::impact::estimate_with;
use policies_cel::{ClusterView, Decision, KubernetesVersion, evaluate, evaluate_in};
use regex::Regex;

use crate::exit::Failure;
use crate::policies;
use crate::suite::Suite;

/// The result of one case.
#[derive(Debug, Clone)]
pub struct CaseResult {
    pub name: String,
    pub line: Option<usize>,
    /// Why the case failed; empty when it passed.
    pub failures: Vec<String>,
    pub decision: Decision,
    pub duration: Duration,
}

impl CaseResult {
    /// True when the decision met every expectation.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// The results of one suite.
#[derive(Debug, Clone)]
pub struct SuiteResult {
    pub file: String,
    pub name: String,
    pub cases: Vec<CaseResult>,
    pub duration: Duration,
}

impl SuiteResult {
    /// The number of failed cases.
    pub fn failed(&self) -> usize {
        self.cases.iter().filter(|c| !c.passed()).count()
    }
}

/// The results of a whole run.
#[derive(Debug, Clone, Default)]
pub struct RunResult {
    pub suites: Vec<SuiteResult>,
    /// Cases not run because `--run` did not select them.
    pub filtered_out: usize,
    pub duration: Duration,
}

impl RunResult {
    /// Cases run.
    pub fn total(&self) -> usize {
        self.suites.iter().map(|s| s.cases.len()).sum()
    }

    /// Cases failed.
    pub fn failed(&self) -> usize {
        self.suites.iter().map(SuiteResult::failed).sum()
    }

    /// Cases passed.
    pub fn passed(&self) -> usize {
        self.total() - self.failed()
    }
}

/// True when `--run` selects the case (its name, or `<suite>/<case>`, matches).
pub fn selected(filter: Option<&Regex>, suite: &Suite, case: &str) -> bool {
    filter.is_none_or(|re| re.is_match(case) || re.is_match(&format!("{}/{case}", suite.name)))
}

/// Runs the cases of `suites` selected by `filter`. A suite whose policies fail to load stops the
/// run (exit 3).
/// `live` judges the suites that name no `cluster:` (`test --live`); without it they get an
/// empty cluster. Policies compile for Kubernetes `version`.
pub fn run(
    suites: &[Suite],
    filter: Option<&Regex>,
    live: Option<&dyn ClusterView>,
    version: KubernetesVersion,
    progress: &ProgressBar,
) -> Result<RunResult, Failure> {
    let started = Instant::now();
    let mut result = RunResult::default();
    for suite in suites {
        let selected_cases: Vec<_> = suite
            .cases
            .iter()
            .filter(|c| selected(filter, suite, &c.name))
            .collect();
        result.filtered_out += suite.cases.len() - selected_cases.len();
        if selected_cases.is_empty() {
            continue;
        }
        let suite_started = Instant::now();
        let set = policies::load(&suite.policies, &suite.params, version).map_err(|failure| {
            let exit = failure.exit();
            let error =
                anyhow::anyhow!("{:#}", failure.error()).context(format!("suite {}", suite.file.display()));
            Failure::new(exit, error)
        })?;
        let own = match (suite.cluster.is_empty(), live) {
            (true, Some(_)) => None,
            _ => Some(
                crate::cluster::load(&suite.cluster, &set.profiles).map_err(|failure| {
                    let exit = failure.exit();
                    let error = anyhow::anyhow!("{:#}", failure.error())
                        .context(format!("suite {}", suite.file.display()));
                    Failure::new(exit, error)
                })?,
            ),
        };
        let cluster: &dyn ClusterView = match (&own, live) {
            (Some(own), _) => own.as_ref(),
            (None, Some(live)) => live,
            (None, None) => &policies_cel::EmptyCluster,
        };
        let mut cases = Vec::with_capacity(selected_cases.len());
        for case in selected_cases {
            progress.set_message(case.name.clone());
            let case_started = Instant::now();
            let mut decision = match case.history.as_ref().or(suite.history.as_ref()) {
                Some(history) => evaluate_in(&set, &case.request, cluster, &history.context()),
                None => evaluate(&set, &case.request, cluster),
            };
            if decision.impact.is_none() && case.expect.reads_impact() {
                decision.impact = Some(estimate_with(&case.request, cluster, &set.profiles));
            }
            let failures = case.expect.mismatches(&decision);
            cases.push(CaseResult {
                name: case.name.clone(),
                line: case.line,
                failures,
                decision,
                duration: case_started.elapsed(),
            });
            progress.inc(1);
        }
        result.suites.push(SuiteResult {
            file: suite.file.display().to_string(),
            name: suite.name.clone(),
            cases,
            duration: suite_started.elapsed(),
        });
    }
    result.duration = started.elapsed();
    Ok(result)
}
