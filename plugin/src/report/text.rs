//! The human report of `test`: one line per case (✓/✗), the reasons under each failure, totals.

use std::fmt::Write as _;

use crate::style::Style;
use crate::suite::RunResult;

/// The report; deterministic (no timings) so it can be compared in CI logs and golden tests.
pub fn render(result: &RunResult, style: Style) -> String {
    let mut out = String::new();
    for suite in &result.suites {
        let _ = writeln!(
            out,
            "{} {}",
            style.bold(&suite.name),
            style.dim(&format!("({})", suite.file))
        );
        for case in &suite.cases {
            if case.passed() {
                let _ = writeln!(out, "  {} {}", style.good("✓"), case.name);
                continue;
            }
            let at = case
                .line
                .map(|line| format!(" ({}:{line})", suite.file))
                .unwrap_or_default();
            let _ = writeln!(out, "  {} {}{}", style.bad("✗"), case.name, style.dim(&at));
            for failure in &case.failures {
                let _ = writeln!(out, "      {failure}");
            }
        }
        out.push('\n');
    }
    let (passed, failed, total) = (result.passed(), result.failed(), result.total());
    let verdict = if failed == 0 {
        style.good("PASS")
    } else {
        style.bad("FAIL")
    };
    let suites = result.suites.len();
    let _ = write!(
        out,
        "{verdict}: {passed} passed, {failed} failed, {total} {} in {suites} {}",
        plural(total, "case", "cases"),
        plural(suites, "suite", "suites")
    );
    if result.filtered_out > 0 {
        let _ = write!(out, " ({} filtered out by --run)", result.filtered_out);
    }
    out.push('\n');
    out
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}
