//! The reference tables `explain` prints, read from the project's own Markdown (`docs/policies.md`
//! and `docs/impact.md`, embedded at build time) so the CLI and the documentation never disagree.

const POLICIES: &str = include_str!("../../../docs/policies.md");
const IMPACT: &str = include_str!("../../../docs/impact.md");

/// One row of a reference table: the name (backticks removed) and its meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub name: String,
    pub meaning: String,
}

/// The rows of the first Markdown table under `heading` in `document`.
fn table(document: &str, heading: &str) -> Vec<Row> {
    let Some(start) = document.find(heading) else {
        return Vec::new();
    };
    document[start..]
        .lines()
        .skip(1)
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
            let (name, meaning) = (cells.first()?, cells.get(1)?);
            Some(Row {
                name: plain(name),
                meaning: plain(meaning).replace("\\|", "|"),
            })
        })
        .collect()
}

/// Markdown inline formatting removed: backticks, links (`[text](url)` → `text`).
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|i| open + i) else {
            break;
        };
        let Some(end) = rest[close..].find(')').map(|i| close + i) else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out.replace('`', "")
}

/// The CEL variables a policy sees.
pub fn variables() -> Vec<Row> {
    table(POLICIES, "## CEL: variables and dialect")
}

/// `impact.summary`'s fields.
pub fn impact_summary() -> Vec<Row> {
    table(IMPACT, "## `impact.summary` (stable contract)")
}

/// The lists of `impact` that explain the figures.
pub fn impact_lists() -> Vec<Row> {
    table(IMPACT, "## The lists that explain the figures")
}

/// The `cluster` library's functions.
pub fn cluster_functions() -> Vec<Row> {
    table(IMPACT, "## The `cluster` library")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_is_found_in_the_docs() {
        assert!(
            variables().iter().any(|r| r.name == "impact"),
            "{:?}",
            variables()
        );
        let summary: Vec<String> = impact_summary().into_iter().map(|r| r.name).collect();
        for field in [
            "deleted",
            "podsDisrupted",
            "dataLoss",
            "servicesWithoutEndpoints",
            "pdbViolations",
            "workloadsDown",
            "quorumLost",
            "brokenReferences",
        ] {
            assert!(summary.contains(&field.to_owned()), "{field} in {summary:?}");
        }
        assert!(impact_lists().iter().any(|r| r.name == "volumes[]"));
        assert!(!cluster_functions().is_empty());
    }

    #[test]
    fn markdown_is_made_plain() {
        assert_eq!(
            plain("see [the docs](docs/impact.md) and `x`"),
            "see the docs and x"
        );
    }
}
