//! The human report of `replay`: what was judged and skipped, the totals per policy and per
//! user, and the findings (newest last, as the log has them).

use std::fmt::Write as _;

use crate::replay::tally::Tally;
use crate::style::Style;

/// The report; `show` caps the findings listed.
pub fn text(tally: &Tally, log: &str, show: usize, style: Style) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} audit events in {log}", tally.events);
    let _ = writeln!(out, "  judged   {} mutating requests", tally.replayed);
    let skipped: usize = tally.skipped.values().sum();
    let reasons: Vec<String> = tally
        .skipped
        .iter()
        .map(|(skip, n)| format!("{n} {}", skip.describe()))
        .collect();
    let _ = writeln!(
        out,
        "  skipped  {skipped}{}",
        if reasons.is_empty() {
            String::new()
        } else {
            format!(": {}", reasons.join(", "))
        }
    );
    if !tally.bad_lines.is_empty() {
        let _ = writeln!(out, "  {} lines were not audit events", tally.bad_lines.len());
    }
    let denied = format!("{} would have been denied", tally.denied);
    let _ = writeln!(
        out,
        "  {}",
        if tally.denied > 0 {
            style.bad(&denied)
        } else {
            style.good(&denied)
        }
    );
    let _ = writeln!(out, "  {} would have been admitted with a warning", tally.warned);

    let policies: Vec<_> = tally
        .by_policy
        .iter()
        .filter(|(_, t)| t.denied + t.warned + t.allowed_by_annotation > 0)
        .collect();
    if !policies.is_empty() {
        let width = policies
            .iter()
            .map(|(name, _)| name.len())
            .max()
            .unwrap_or(6)
            .max(6);
        let _ = writeln!(out, "\nBy policy:");
        let _ = writeln!(
            out,
            "  {:width$}  denied  warned  allowed by annotation",
            "policy"
        );
        for (name, t) in policies {
            let _ = writeln!(
                out,
                "  {name:width$}  {:>6}  {:>6}  {:>21}",
                t.denied, t.warned, t.allowed_by_annotation
            );
        }
    }
    let users: Vec<_> = tally
        .by_user
        .iter()
        .filter(|(_, t)| t.denied + t.warned > 0)
        .collect();
    if !users.is_empty() {
        let width = users.iter().map(|(name, _)| name.len()).max().unwrap_or(4).max(4);
        let _ = writeln!(out, "\nBy user (with denials or warnings):");
        let _ = writeln!(out, "  {:width$}  requests  denied  warned", "user");
        for (name, t) in users {
            let _ = writeln!(
                out,
                "  {name:width$}  {:>8}  {:>6}  {:>6}",
                t.requests, t.denied, t.warned
            );
        }
    }
    if !tally.findings.is_empty() {
        let listed = tally.findings.len().min(show);
        let _ = writeln!(out, "\nFindings ({listed} of {}):", tally.findings.len());
        for finding in tally.findings.iter().take(listed) {
            let mark = if finding.verdict == "denied" {
                style.bad("✗")
            } else {
                style.warn("!")
            };
            let time = finding.time.as_deref().unwrap_or("-");
            let dry = if finding.dry_run { " (dry run)" } else { "" };
            let _ = writeln!(out, "  {mark} {time}  {}  {}{dry}", finding.user, finding.request);
            let policy = if finding.policy.is_empty() {
                String::new()
            } else {
                format!("{}: ", finding.policy)
            };
            let _ = writeln!(out, "      {policy}{}", finding.message);
        }
    }
    out
}
