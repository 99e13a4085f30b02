//! Placeholder: where things came from (being written).
use serde::Serialize;
/// A place in a file: which file, which document, which line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SourceRef {
    pub file: String,
    pub document: usize,
    pub line: usize,
}
/// One YAML/JSON document of a file.
#[derive(Debug, Clone)]
pub struct Document;
/// Splits a multi-document file.
pub fn split_documents(_text: &str) -> Vec<Document> {
    Vec::new()
}
