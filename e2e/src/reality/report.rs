//! The report: per scenario and per figure, the estimate against reality (`3 ✓`, or
//! `estimate/reality ✗`), the objects in one but not the other, and the overall figures —
//! object-level agreement (shared objects over all objects either side named) and how often
//! every summary figure was equal.

use std::fmt::Write as _;

use crate::reality::figure::{Figure, Objects};
use crate::reality::run::Outcome;

/// How one figure of one scenario compares.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    pub estimate_only: Vec<String>,
    pub reality_only: Vec<String>,
    pub shared: usize,
    pub estimate_count: usize,
    pub reality_count: usize,
}

impl Comparison {
    /// The same objects on both sides.
    pub fn agrees(&self) -> bool {
        self.estimate_only.is_empty() && self.reality_only.is_empty()
    }

    /// The same number on both sides (the summary figure).
    pub fn count_equal(&self) -> bool {
        self.estimate_count == self.reality_count
    }
}

fn compare_objects(estimate: &Objects, reality: &Objects) -> Comparison {
    Comparison {
        estimate_only: estimate
            .iter()
            .filter(|(uid, _)| !reality.contains_key(*uid))
            .map(|(_, label)| label.clone())
            .collect(),
        reality_only: reality
            .iter()
            .filter(|(uid, _)| !estimate.contains_key(*uid))
            .map(|(_, label)| label.clone())
            .collect(),
        shared: estimate.keys().filter(|uid| reality.contains_key(*uid)).count(),
        estimate_count: estimate.len(),
        reality_count: reality.len(),
    }
}

/// How `figure` of `outcome` compares.
pub fn compare(outcome: &Outcome, figure: Figure) -> Comparison {
    let empty = Objects::new();
    compare_objects(
        outcome.estimate.get(&figure).unwrap_or(&empty),
        outcome.reality.get(&figure).unwrap_or(&empty),
    )
}

/// The figures on which `outcome` disagrees (object by object).
pub fn disagreements(outcome: &Outcome) -> Vec<Figure> {
    Figure::ALL
        .into_iter()
        .filter(|f| !compare(outcome, *f).agrees())
        .collect()
}

/// The overall figures of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    pub scenarios: usize,
    /// Objects both sides named.
    pub shared: usize,
    /// Objects either side named.
    pub named: usize,
    /// Scenarios whose every summary figure was equal.
    pub all_counts_equal: usize,
    /// Scenarios that agreed object by object on every figure.
    pub all_agree: usize,
}

impl Totals {
    /// Object-level agreement, in percent.
    pub fn agreement(&self) -> f64 {
        if self.named == 0 {
            100.0
        } else {
            100.0 * self.shared as f64 / self.named as f64
        }
    }

    /// Scenarios whose every summary figure was equal, in percent.
    pub fn counts_equal(&self) -> f64 {
        if self.scenarios == 0 {
            100.0
        } else {
            100.0 * self.all_counts_equal as f64 / self.scenarios as f64
        }
    }
}

/// The overall figures of `outcomes`.
pub fn totals(outcomes: &[Outcome]) -> Totals {
    let mut totals = Totals {
        scenarios: outcomes.len(),
        ..Totals::default()
    };
    for outcome in outcomes {
        let comparisons: Vec<Comparison> = Figure::ALL.into_iter().map(|f| compare(outcome, f)).collect();
        for c in &comparisons {
            totals.shared += c.shared;
            totals.named += c.shared + c.estimate_only.len() + c.reality_only.len();
        }
        totals.all_counts_equal += usize::from(comparisons.iter().all(Comparison::count_equal));
        totals.all_agree += usize::from(comparisons.iter().all(Comparison::agrees));
    }
    totals
}

fn cell(c: &Comparison) -> String {
    if c.agrees() {
        format!("{} ✓", c.estimate_count)
    } else {
        format!("{}/{} ✗", c.estimate_count, c.reality_count)
    }
}

/// The report as Markdown: the table, the overall figures, then every disagreement with the
/// objects on each side.
pub fn markdown(outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    let headings: Vec<&str> = Figure::ALL.iter().map(|f| f.short()).collect();
    let _ = writeln!(out, "| scenario | {} |", headings.join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(headings.len()));
    for outcome in outcomes {
        let cells: Vec<String> = Figure::ALL.iter().map(|f| cell(&compare(outcome, *f))).collect();
        let _ = writeln!(out, "| {} | {} |", outcome.name, cells.join(" | "));
    }
    let totals = totals(outcomes);
    let _ = writeln!(
        out,
        "\nCells read `estimate ✓` when both sides name the same objects, else `estimate/reality ✗`.\n\n\
         {} scenarios: object-level agreement {:.1}% ({} of {} objects); every summary figure equal \
         in {} ({:.1}%); every figure the same objects in {}.",
        totals.scenarios,
        totals.agreement(),
        totals.shared,
        totals.named,
        totals.all_counts_equal,
        totals.counts_equal(),
        totals.all_agree,
    );
    for outcome in outcomes {
        for figure in disagreements(outcome) {
            let c = compare(outcome, figure);
            let _ = writeln!(
                out,
                "\n- {} ({}: {}), {}: estimate only [{}]; reality only [{}]",
                outcome.name,
                outcome.rule,
                outcome.request,
                figure.name(),
                c.estimate_only.join(", "),
                c.reality_only.join(", ")
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reality::figure::Figures;

    fn objects(pairs: &[(&str, &str)]) -> Objects {
        pairs
            .iter()
            .map(|(u, l)| ((*u).to_owned(), (*l).to_owned()))
            .collect()
    }

    pub(crate) fn outcome(name: &str, estimate: &[(&str, &str)], reality: &[(&str, &str)]) -> Outcome {
        let mut e = Figures::new();
        let mut r = Figures::new();
        e.insert(Figure::Deleted, objects(estimate));
        r.insert(Figure::Deleted, objects(reality));
        Outcome {
            name: name.to_owned(),
            rule: "a rule".to_owned(),
            request: "delete Pod p".to_owned(),
            estimate: e,
            reality: r,
            notes: Vec::new(),
            seconds: 1.0,
        }
    }

    #[test]
    fn objects_are_compared_by_uid_and_counted_once_either_side() {
        let agree = outcome("a", &[("1", "Pod x/a")], &[("1", "Pod x/a")]);
        let differ = outcome("b", &[("2", "Pod x/b")], &[("3", "Pod x/c")]);
        assert!(compare(&agree, Figure::Deleted).agrees());
        let c = compare(&differ, Figure::Deleted);
        assert!(!c.agrees() && c.count_equal());
        assert_eq!(
            (c.estimate_only.as_slice(), c.reality_only.as_slice()),
            (&["Pod x/b".to_owned()][..], &["Pod x/c".to_owned()][..])
        );
        let totals = totals(&[agree.clone(), differ.clone()]);
        // 1 shared of 3 named (a; b and c).
        assert_eq!((totals.shared, totals.named), (1, 3));
        assert_eq!((totals.all_counts_equal, totals.all_agree), (2, 1));
        let table = markdown(&[agree, differ]);
        assert!(table.contains("| a | 1 ✓ |"), "{table}");
        assert!(table.contains("| b | 1/1 ✗ |"), "{table}");
        assert!(
            table.contains("estimate only [Pod x/b]; reality only [Pod x/c]"),
            "{table}"
        );
    }
}
