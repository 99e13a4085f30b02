//! Where things came from: source references and the splitting of a file into documents.
//!
//! Splitting is done on the text, line by line, so that every document knows the exact line it
//! starts on and a syntax error in one document cannot hide the others. In YAML a line that starts
//! with `---` followed by a space or the end of the line is always a document marker (it cannot
//! appear inside a block or quoted scalar), and `...` alone on a line ends a document, so this is
//! exact for any well-formed stream.

use std::fmt;

use serde::Serialize;

/// A place in a file: which file, which document, which line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SourceRef {
    /// The file as it was named to the loader (or the name given to `add_str`).
    pub file: String,
    /// The 1-based index of the document in the file (0 when unknown). Every `---` starts a new
    /// document, empty ones included, so the index is what a reader counts.
    pub document: usize,
    /// The 1-based line in the file.
    pub line: usize,
}

impl SourceRef {
    /// A reference to `line` of `document` in `file`.
    pub fn new(file: impl Into<String>, document: usize, line: usize) -> Self {
        Self {
            file: file.into(),
            document,
            line,
        }
    }

    /// The same file and document, another line.
    pub fn at_line(&self, line: usize) -> Self {
        Self {
            file: self.file.clone(),
            document: self.document,
            line,
        }
    }
}

impl fmt::Display for SourceRef {
    /// `file:line (document N)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{} (document {})",
            self.file,
            self.line.max(1),
            self.document.max(1)
        )
    }
}

/// One YAML/JSON document of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// 1-based index of the document in the file.
    pub index: usize,
    /// 1-based line of the file on which `text` starts.
    pub line: usize,
    /// The document's text. Line `n` of it is line `line + n - 1` of the file; a `---` marker
    /// that shared its line with content has been blanked out, so columns are the file's too.
    pub text: String,
}

impl Document {
    /// True when the document holds nothing but blank lines, comments and directives.
    pub fn is_empty(&self) -> bool {
        self.text.lines().all(|line| {
            let trimmed = line.trim_start();
            trimmed.is_empty() || trimmed.starts_with('#')
        })
    }

    /// The 1-based file line of the first line with content (the document's own line when none).
    pub fn first_content_line(&self) -> usize {
        self.text
            .lines()
            .position(|line| {
                let trimmed = line.trim_start();
                !trimmed.is_empty() && !trimmed.starts_with('#')
            })
            .map_or(self.line, |offset| self.line + offset)
    }
}

/// How a line of a YAML stream takes part in document structure.
enum Marker<'a> {
    /// `---`, possibly followed by content on the same line (returned with the marker blanked).
    Start(Option<String>),
    /// `...`: the end of a document.
    End,
    /// Anything else.
    Content(&'a str),
}

fn classify(line: &str) -> Marker<'_> {
    let is_marker = |mark: &str| {
        line.strip_prefix(mark)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r']))
    };
    if is_marker("---") {
        let rest = &line[3..];
        if rest.trim().is_empty() || rest.trim_start().starts_with('#') {
            Marker::Start(None)
        } else {
            Marker::Start(Some(format!("   {rest}")))
        }
    } else if is_marker("...") {
        Marker::End
    } else {
        Marker::Content(line)
    }
}

/// Splits a multi-document YAML file into its documents, each with its starting line.
///
/// Empty documents (only blank lines and comments) are returned too, so that document indices
/// match what a reader counts; callers skip them with [`Document::is_empty`]. A stream that opens
/// with `---` has no document before that marker. Directives (`%YAML`) stay in the text of the
/// document they precede.
pub fn split_documents(text: &str) -> Vec<Document> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut documents = Vec::new();
    // The document being collected: its first line and its lines.
    let mut current: Option<(usize, Vec<String>)> = Some((1, Vec::new()));
    // Lines after `...` until the next `---` belong to no document (comments, directives).
    let mut after_end: Vec<String> = Vec::new();
    let mut after_end_line = 0;

    for (number, line) in text.lines().enumerate() {
        let number = number + 1;
        match classify(line) {
            Marker::Start(inline) => {
                if let Some((start, lines)) = current.take() {
                    let leading_prefix =
                        documents.is_empty() && lines.iter().all(|l| is_blank_or_directive(l));
                    if !leading_prefix {
                        finish(&mut documents, start, lines);
                    }
                }
                after_end.clear();
                current = Some(match inline {
                    Some(content) => (number, vec![content]),
                    None => (number + 1, Vec::new()),
                });
            }
            Marker::End => {
                if let Some((start, lines)) = current.take() {
                    finish(&mut documents, start, lines);
                }
                after_end.clear();
                after_end_line = number + 1;
            }
            Marker::Content(content) => match current.as_mut() {
                Some((_, lines)) => lines.push(content.to_owned()),
                None => {
                    if after_end.is_empty() {
                        after_end_line = number;
                    }
                    after_end.push(content.to_owned());
                }
            },
        }
    }
    if let Some((start, lines)) = current {
        finish(&mut documents, start, lines);
    } else if after_end.iter().any(|l| !is_blank_or_directive(l)) {
        // Content after `...` without a new `---` is still a document to YAML.
        finish(&mut documents, after_end_line, after_end);
    }
    documents
}

fn finish(documents: &mut Vec<Document>, line: usize, lines: Vec<String>) {
    let index = documents.len() + 1;
    documents.push(Document {
        index,
        line,
        text: join(lines),
    });
}

fn is_blank_or_directive(line: &str) -> bool {
    let trimmed = line.trim_start();
    trimmed.is_empty() || trimmed.starts_with('#') || line.starts_with('%')
}

fn join(lines: Vec<String>) -> String {
    let mut text = lines.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(docs: &[Document]) -> Vec<(usize, usize)> {
        docs.iter().map(|d| (d.index, d.line)).collect()
    }

    #[test]
    fn single_document_starts_at_line_one() {
        let docs = split_documents("a: 1\nb: 2\n");
        assert_eq!(lines(&docs), [(1, 1)]);
        assert_eq!(docs[0].text, "a: 1\nb: 2\n");
    }

    #[test]
    fn leading_marker_opens_the_first_document() {
        let docs = split_documents("# header\n---\na: 1\n---\n\n# nothing\n---\nb: 2\n");
        assert_eq!(lines(&docs), [(1, 3), (2, 5), (3, 8)]);
        assert!(docs[1].is_empty());
        assert_eq!(docs[2].first_content_line(), 8);
    }

    #[test]
    fn inline_content_after_marker_keeps_columns() {
        let docs = split_documents("a: 1\n--- {b: 2}\n");
        assert_eq!(lines(&docs), [(1, 1), (2, 2)]);
        assert_eq!(docs[1].text, "    {b: 2}\n");
    }

    #[test]
    fn markers_need_column_zero_and_a_separator() {
        let docs = split_documents("a: |\n  ---\n  x\nb: ---x\n----\n");
        assert_eq!(docs.len(), 1);
    }

    #[test]
    fn document_end_marker() {
        let docs = split_documents("a: 1\n...\n# trailing\n---\nb: 1\n");
        assert_eq!(lines(&docs), [(1, 1), (2, 5)]);
    }

    #[test]
    fn empty_text_has_one_empty_document() {
        let docs = split_documents("");
        assert_eq!(docs.len(), 1);
        assert!(docs[0].is_empty());
    }

    #[test]
    fn display() {
        assert_eq!(
            SourceRef::new("p.yaml", 1, 3).to_string(),
            "p.yaml:3 (document 1)"
        );
        assert_eq!(
            SourceRef::new("p.yaml", 2, 9).to_string(),
            "p.yaml:9 (document 2)"
        );
    }
}
