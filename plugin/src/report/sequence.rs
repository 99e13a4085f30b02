//! The text of a what-if sequence — a collection's deletions, a file's manifests — judged or
//! estimated one request after the other: a header line, then each request's own report under
//! `── i/N`.

use std::fmt::Write as _;

use policies_cel::Request;
use policies_cel::impact::Impact;

use crate::report::check;
use crate::style::Style;
use crate::whatif::collection::Judged;

/// How many of `judged` were denied.
pub fn denied(judged: &[Judged]) -> usize {
    judged.iter().filter(|j| !j.decision.allowed).count()
}

/// `ALLOWED` (nothing denied) or `DENIED`, styled.
pub fn verdict(judged: &[Judged], style: Style) -> String {
    if denied(judged) == 0 {
        style.good("ALLOWED")
    } else {
        style.bad("DENIED")
    }
}

/// `header`, then each request's `check` report.
pub fn verdicts(header: &str, judged: &[Judged], verbose: bool, style: Style) -> String {
    let mut out = format!("{header}\n");
    for (index, one) in judged.iter().enumerate() {
        let _ = writeln!(out, "\n{}", step(index, judged.len(), style));
        out.push_str(&check::text(&one.decision, &one.request, verbose, style));
    }
    out
}

/// `header`, then each request's estimate as a tree.
pub fn trees(header: &str, estimates: &[(Request, Impact)], style: Style) -> String {
    let mut out = format!("{header}\n");
    for (index, (_, impact)) in estimates.iter().enumerate() {
        let _ = writeln!(out, "\n{}", step(index, estimates.len(), style));
        out.push_str(&crate::report::impact::tree(impact, style));
    }
    out
}

fn step(index: usize, total: usize, style: Style) -> String {
    style.bold(&format!("── {}/{total}", index + 1))
}
