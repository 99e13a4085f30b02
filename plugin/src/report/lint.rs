//! The findings of `lint`: as a compiler prints them (`file:line:column: error[code]: message`,
//! the source line with a caret under the problem, the field and a help line), or as a JSON/YAML
//! document (`findings` and a `summary`).

use std::fmt::Write as _;

use policies_cel::lint::{Finding, LintReport, Severity};
use serde::Serialize;

use crate::style::Style;

/// The `-o json|yaml` document.
#[derive(Debug, Serialize)]
pub struct LintDocument<'a> {
    pub findings: &'a [Finding],
    pub summary: Summary,
}

/// Counts of a lint run.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub files: usize,
    pub policies: usize,
    pub bindings: usize,
    pub profiles: usize,
    pub expressions: usize,
}

impl<'a> LintDocument<'a> {
    pub fn new(report: &'a LintReport) -> Self {
        Self {
            findings: &report.findings,
            summary: Summary {
                errors: report.count(Severity::Error),
                warnings: report.count(Severity::Warning),
                files: report.files,
                policies: report.policies,
                bindings: report.bindings,
                profiles: report.profiles,
                expressions: report.expressions,
            },
        }
    }
}

/// Every finding with its source line and caret, then a summary line.
pub fn text(report: &LintReport, style: Style) -> String {
    let mut out = String::new();
    for finding in &report.findings {
        finding_text(&mut out, finding, style);
        out.push('\n');
    }
    let summary = LintDocument::new(report).summary;
    // Operator profiles are named only where there are some.
    let profiles = match summary.profiles {
        0 => String::new(),
        n => format!(", {n} {}", plural(n, "operator profile", "operator profiles")),
    };
    let scope = format!(
        "{} {}, {} {}{profiles}, {} {} in {} {}",
        summary.policies,
        plural(summary.policies, "policy", "policies"),
        summary.bindings,
        plural(summary.bindings, "binding", "bindings"),
        summary.expressions,
        plural(summary.expressions, "expression", "expressions"),
        summary.files,
        plural(summary.files, "file", "files"),
    );
    if report.findings.is_empty() {
        let _ = writeln!(out, "{}: {scope}", style.good("clean"));
    } else {
        let counts = format!(
            "{} {}, {} {}",
            summary.errors,
            plural(summary.errors, "error", "errors"),
            summary.warnings,
            plural(summary.warnings, "warning", "warnings")
        );
        let counts = if summary.errors > 0 {
            style.bad(&counts)
        } else {
            style.warn(&counts)
        };
        let _ = writeln!(out, "{counts}: {scope}");
    }
    out
}

fn finding_text(out: &mut String, finding: &Finding, style: Style) {
    let severity = match finding.severity {
        Severity::Error => style.bad(&format!("error[{}]", finding.code)),
        Severity::Warning => style.warn(&format!("warning[{}]", finding.code)),
    };
    let _ = writeln!(
        out,
        "{}: {severity}: {}",
        style.bold(&format!("{}:{}:{}", finding.file, finding.line, finding.column)),
        finding.message
    );
    let number = finding.line.to_string();
    let gutter = " ".repeat(number.len());
    if let Some(line) = &finding.source_line {
        let line = line.replace('\t', " ");
        let _ = writeln!(out, "{gutter} {}", style.dim("|"));
        let _ = writeln!(out, "{} {} {line}", style.dim(&number), style.dim("|"));
        let pad = " ".repeat(finding.column.saturating_sub(1));
        let caret = match finding.severity {
            Severity::Error => style.bad("^"),
            Severity::Warning => style.warn("^"),
        };
        let _ = writeln!(out, "{gutter} {} {pad}{caret}", style.dim("|"));
    }
    let context = match (&finding.field, &finding.policy) {
        (Some(field), Some(name)) => Some(format!("{field} of {name}")),
        (Some(field), None) => Some(field.clone()),
        (None, Some(name)) => Some(name.clone()),
        (None, None) => None,
    };
    if let Some(context) = context {
        let _ = writeln!(out, "{gutter} = {} {context}", style.dim("in:"));
    }
    if let Some(help) = &finding.help {
        let _ = writeln!(out, "{gutter} = {} {help}", style.dim("help:"));
    }
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policies_cel::lint::{Linter, NoCatalog};

    #[test]
    fn a_caret_under_the_column() {
        let mut linter = Linter::new();
        linter.add_str(
            "p.yaml",
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec:\n  validations:\n  - expression: 'object.a == 1 && 1 > 2'\n",
        );
        let text = text(&linter.run(&NoCatalog), Style::plain());
        let expected = "\
p.yaml:6:37: error[never-true]: validation can never be true: every request the policy judges fails it
  |
6 |   - expression: 'object.a == 1 && 1 > 2'
  |                                     ^
  = in: spec.validations[0].expression of p
";
        assert!(text.starts_with(expected), "{text}");
        assert!(
            text.ends_with("1 error, 0 warnings: 1 policy, 0 bindings, 1 expression in 1 file\n"),
            "{text}"
        );
    }
}
