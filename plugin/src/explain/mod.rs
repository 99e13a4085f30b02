//! `explain`: the reference an author needs at the terminal — the CEL variables, every field of
//! `impact` with its meaning, the `cluster` library, and the built-in pack's policies.

pub mod tables;

use std::fmt::Write as _;

use policies_cel::pack;

use crate::explain::tables::Row;

/// The topics, for the usage message.
pub const TOPICS: &str =
    "variables, impact, impact.<field> (e.g. impact.volumes), cluster, pack, pack <policy>";

/// The text for `topic` (and, for `pack`, a policy name); `None` for an unknown topic.
pub fn explain(topic: Option<&str>, name: Option<&str>) -> Option<String> {
    let mut out = String::new();
    match topic {
        None => {
            let _ = writeln!(
                out,
                "Topics: {TOPICS}\n\nkubectl suture explain TOPIC prints the reference of TOPIC."
            );
        }
        Some("variables") => rows(&mut out, "CEL variables of a policy", &tables::variables()),
        Some("impact") => {
            rows(
                &mut out,
                "impact.summary: the stable figures",
                &tables::impact_summary(),
            );
            out.push('\n');
            rows(
                &mut out,
                "impact: the lists that explain the figures",
                &tables::impact_lists(),
            );
        }
        Some("impact.summary") => rows(
            &mut out,
            "impact.summary: the stable figures",
            &tables::impact_summary(),
        ),
        Some(field) if field.starts_with("impact.") => {
            let wanted = field.trim_start_matches("impact.").trim_start_matches("summary.");
            let all = tables::impact_summary().into_iter().chain(tables::impact_lists());
            let found: Vec<Row> = all.filter(|r| r.name.trim_end_matches("[]") == wanted).collect();
            if found.is_empty() {
                return None;
            }
            rows(&mut out, field, &found);
        }
        Some("cluster") => rows(
            &mut out,
            "the cluster library (SafetyPolicy)",
            &tables::cluster_functions(),
        ),
        Some("pack") => match name {
            None => pack_list(&mut out),
            Some(policy) => out.push_str(pack_policy(policy)?),
        },
        Some(_) => return None,
    }
    Some(out)
}

fn rows(out: &mut String, title: &str, rows: &[Row]) {
    let _ = writeln!(out, "{title}:");
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0).min(28);
    for row in rows {
        let _ = writeln!(out, "  {:width$}  {}", row.name, row.meaning);
    }
}

fn pack_list(out: &mut String) {
    let _ = writeln!(
        out,
        "The built-in pack (kubectl suture explain pack <policy> prints one):"
    );
    for (file, text) in pack::files() {
        let name = format!(
            "suture-{}",
            file.trim_start_matches("pack/").trim_end_matches(".yaml")
        );
        let description = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("suture.dev/description: "))
            .unwrap_or_default();
        let _ = writeln!(out, "  {name:28}  {description}");
    }
}

fn pack_policy(name: &str) -> Option<&'static str> {
    let stem = name.strip_prefix("suture-").unwrap_or(name);
    pack::files()
        .iter()
        .find(|(file, _)| file.trim_start_matches("pack/").trim_end_matches(".yaml") == stem)
        .map(|(_, text)| *text)
}
