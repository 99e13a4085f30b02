//! The JSON report of `test`: totals, and per suite and case the verdict, the failure reasons and
//! the decision that was compared.

use std::collections::BTreeMap;

use policies_cel::Denial;
use serde::Serialize;

use crate::suite::{CaseResult, RunResult, SuiteResult};

/// The whole report.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report<'a> {
    pub passed: usize,
    pub failed: usize,
    pub total: usize,
    pub filtered_out: usize,
    pub suites: Vec<SuiteReport<'a>>,
}

/// One suite.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SuiteReport<'a> {
    pub name: &'a str,
    pub file: &'a str,
    pub passed: usize,
    pub failed: usize,
    pub cases: Vec<CaseReport<'a>>,
}

/// One case.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseReport<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub passed: bool,
    pub failures: &'a [String],
    pub decision: DecisionSummary<'a>,
}

/// The parts of the decision expectations are written against.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionSummary<'a> {
    pub allowed: bool,
    pub denials: &'a [Denial],
    pub warnings: &'a [String],
    pub audit_annotations: &'a BTreeMap<String, String>,
}

fn case(case: &CaseResult) -> CaseReport<'_> {
    CaseReport {
        name: &case.name,
        line: case.line,
        passed: case.passed(),
        failures: &case.failures,
        decision: DecisionSummary {
            allowed: case.decision.allowed,
            denials: &case.decision.denials,
            warnings: &case.decision.warnings,
            audit_annotations: &case.decision.audit_annotations,
        },
    }
}

fn suite(suite: &SuiteResult) -> SuiteReport<'_> {
    SuiteReport {
        name: &suite.name,
        file: &suite.file,
        passed: suite.cases.len() - suite.failed(),
        failed: suite.failed(),
        cases: suite.cases.iter().map(case).collect(),
    }
}

/// The report as pretty JSON with a trailing newline.
pub fn render(result: &RunResult) -> Result<String, serde_json::Error> {
    let report = Report {
        passed: result.passed(),
        failed: result.failed(),
        total: result.total(),
        filtered_out: result.filtered_out,
        suites: result.suites.iter().map(suite).collect(),
    };
    serde_json::to_string_pretty(&report).map(|text| text + "\n")
}
