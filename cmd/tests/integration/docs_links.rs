//! Every relative link in the project's Markdown (README.md, ARCHITECTURE.md, docs/, bench/,
//! fuzz/) resolves: the file or directory exists, and a `#anchor` names a heading of the target
//! as GitHub slugs it (lowercase; spaces to `-`; punctuation but `-` and `_` removed; a repeated
//! slug gets `-1`, `-2`...). Links inside code are not links. No network: web links are not
//! followed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common;

/// The Markdown files whose links are checked, relative to the repository's root.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    for dir in ["docs", "bench", "fuzz"] {
        collect(&root.join(dir), &mut files);
    }
    files.sort();
    files
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(Result::ok).map(|e| e.path()) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if path.is_dir() && !matches!(name, "out" | "target" | "book") {
            collect(&path, files);
        } else if name.ends_with(".md") {
            files.push(path);
        }
    }
}

/// The lines of `text` outside fenced code blocks, with their numbers (from 1).
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(marker)) => fence = Some(marker),
            (Some(open), Some(marker)) if open == marker => fence = None,
            (None, None) => out.push((index + 1, line)),
            _ => {}
        }
    }
    out
}

/// `line` with its code spans (`` `...` ``) blanked out.
fn without_code(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(' ');
        } else {
            out.push(if in_code { ' ' } else { c });
        }
    }
    out
}

/// GitHub's anchor for a heading's text.
fn slug(heading: &str) -> String {
    let text = plain(heading);
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// A heading's text as rendered: code spans' backticks, links' targets and emphasis stars gone.
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
    out.replace(['`', '*'], "")
}

/// The anchors of a Markdown document: its headings' slugs (repeats numbered) and explicit
/// `<a id="...">` / `<a name="...">` anchors.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in prose(text) {
        for attribute in ["<a id=\"", "<a name=\""] {
            if let Some(start) = line.find(attribute).map(|i| i + attribute.len())
                && let Some(end) = line[start..].find('"')
            {
                out.insert(line[start..start + end].to_owned());
            }
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(line[hashes..].trim_end_matches('#'));
        let count = seen.entry(base.clone()).or_insert(0);
        out.insert(if *count == 0 {
            base
        } else {
            format!("{base}-{count}")
        });
        *count += 1;
    }
    out
}

/// The link targets of a Markdown document, with their line numbers: `[text](target)` and
/// `![alt](target)` outside code, a title after the target dropped.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (number, line) in prose(text) {
        let line = without_code(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else {
                break;
            };
            let target = after[..end].split_whitespace().next().unwrap_or_default();
            if rest[..at].contains('[') {
                out.push((number, target.trim_matches(['<', '>']).to_owned()));
            }
            rest = &after[end..];
        }
    }
    out
}

/// What is wrong with `document`'s links (`document` is at `path`, relative to `root`).
fn broken_links(root: &Path, path: &Path, document: &str) -> Vec<String> {
    let shown = path.strip_prefix(root).unwrap_or(path).display().to_string();
    let mut problems = Vec::new();
    for (line, target) in links(document) {
        if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, anchor) = match target.split_once('#') {
            Some((file, anchor)) => (file, Some(anchor)),
            None => (target.as_str(), None),
        };
        let resolved = if file.is_empty() {
            path.to_path_buf()
        } else if let Some(from_root) = file.strip_prefix('/') {
            root.join(from_root)
        } else {
            path.parent().unwrap_or(root).join(file)
        };
        if !file.is_empty() && !resolved.exists() {
            problems.push(format!("{shown}:{line}: {target}: no such file"));
            continue;
        }
        let Some(anchor) = anchor else {
            continue;
        };
        if resolved.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = if file.is_empty() {
            document.to_owned()
        } else {
            std::fs::read_to_string(&resolved).unwrap_or_default()
        };
        if !anchors(&text).contains(anchor) {
            problems.push(format!(
                "{shown}:{line}: {target}: no heading with anchor #{anchor}"
            ));
        }
    }
    problems
}

#[test]
fn every_relative_link_and_anchor_in_the_docs_resolves() {
    let root = common::root();
    let files = documents(&root);
    assert!(files.len() > 5, "the docs were not found: {files:?}");
    let mut problems = Vec::new();
    let mut checked = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        checked += links(&text).len();
        problems.extend(broken_links(&root, path, &text));
    }
    assert!(checked > 50, "only {checked} links found: the scanner is broken");
    assert!(problems.is_empty(), "broken links:\n{}", problems.join("\n"));
}

#[test]
fn headings_slug_as_github_slugs_them() {
    assert_eq!(
        slug("The gateway (`suture-gateway`)"),
        "the-gateway-suture-gateway"
    );
    assert_eq!(
        slug("Keeping the judged path warm (`--keep-warm`)"),
        "keeping-the-judged-path-warm---keep-warm"
    );
    assert_eq!(slug("CEL: variables and dialect"), "cel-variables-and-dialect");
    assert_eq!(
        slug("`impact.summary` (stable contract)"),
        "impactsummary-stable-contract"
    );
    assert_eq!(slug("See [the pack](x.md) — *now*"), "see-the-pack--now");
    let text = "# A\n## A\n```\n# not a heading\n```\n### A\n";
    assert_eq!(
        anchors(text),
        ["a", "a-1", "a-2"].into_iter().map(String::from).collect()
    );
}

#[test]
fn a_broken_link_or_anchor_is_reported() {
    let root = common::root();
    let here = root.join("docs/x.md");
    let document = "# Title\n\
        [ok](../README.md) [ok](#title) [web](https://example.com/nope)\n\
        `[in code](missing.md)`\n\
        ```\n[in a block](missing.md)\n```\n\
        [gone](missing.md) [bad anchor](../README.md#no-such-heading) [self](#nope)\n";
    let problems = broken_links(&root, &here, document);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems[0].contains("missing.md: no such file"), "{problems:?}");
    assert!(problems[1].contains("#no-such-heading"), "{problems:?}");
    assert!(problems[2].contains("#nope"), "{problems:?}");
}
