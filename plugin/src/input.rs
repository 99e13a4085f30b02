//! Reading input documents: a file or stdin (`-`), JSON or YAML, with errors that name the file
//! and, for syntax errors, the line and column.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value as Json;

/// The path that means "read standard input".
pub const STDIN: &str = "-";

/// Why an input could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file (or stdin) could not be read.
    #[error("cannot read {name}: {error}")]
    Io { name: String, error: std::io::Error },
    /// The text is not valid JSON or YAML.
    #[error("{name}:{line}:{column}: {message}")]
    Syntax {
        name: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// The text parsed, but is not what was expected.
    #[error("{name}: {message}")]
    Invalid { name: String, message: String },
}

impl InputError {
    /// An [`InputError::Invalid`] about `source`.
    pub fn invalid(source: &Source, message: impl Into<String>) -> Self {
        InputError::Invalid {
            name: source.name.clone(),
            message: message.into(),
        }
    }
}

/// The text of one input and the name to show in messages.
#[derive(Debug, Clone)]
pub struct Source {
    /// The path as given, or `<stdin>`.
    pub name: String,
    /// Where relative paths inside the document are resolved from (the file's directory, or the
    /// working directory for stdin).
    pub dir: PathBuf,
    /// The whole text.
    pub text: String,
}

impl Source {
    /// A source from text already in memory (tests, inline documents).
    pub fn from_text(name: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            dir: PathBuf::from("."),
            text: text.into(),
        }
    }
}

/// True when `path` means stdin.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// Reads a file, or stdin for `-`.
pub fn read_source(path: &Path) -> Result<Source, InputError> {
    if is_stdin(path) {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|error| InputError::Io {
                name: "<stdin>".into(),
                error,
            })?;
        return Ok(Source {
            name: "<stdin>".into(),
            dir: PathBuf::from("."),
            text,
        });
    }
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|error| InputError::Io {
        name: name.clone(),
        error,
    })?;
    let dir = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    Ok(Source { name, dir, text })
}

/// Reads exactly one JSON or YAML document from a file or stdin.
pub fn read_one(path: &Path) -> Result<Json, InputError> {
    parse_one(&read_source(path)?)
}

/// Reads every document of a file or stdin (multi-document YAML; a `kind: List` is expanded).
pub fn read_all(path: &Path) -> Result<Vec<Json>, InputError> {
    parse_all(&read_source(path)?)
}

/// Parses exactly one document.
pub fn parse_one(source: &Source) -> Result<Json, InputError> {
    let mut documents = parse_documents(source)?;
    match documents.len() {
        0 => Err(InputError::invalid(source, "the document is empty")),
        1 => Ok(documents.remove(0)),
        n => Err(InputError::invalid(
            source,
            format!("expected one document, found {n}"),
        )),
    }
}

/// Parses every document, expanding `kind: List` into its items.
pub fn parse_all(source: &Source) -> Result<Vec<Json>, InputError> {
    let mut out = Vec::new();
    for document in parse_documents(source)? {
        let is_list = document
            .get("kind")
            .and_then(Json::as_str)
            .is_some_and(|k| k.ends_with("List"))
            && document.get("items").is_some_and(Json::is_array);
        match document {
            Json::Object(mut map) if is_list => {
                if let Some(Json::Array(items)) = map.remove("items") {
                    out.extend(items);
                }
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

/// Parses the documents of `source` as they are: JSON when the text starts with `{` or `[`,
/// YAML (possibly several documents) otherwise. Empty YAML documents are dropped.
pub fn parse_documents(source: &Source) -> Result<Vec<Json>, InputError> {
    let trimmed = source.text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return serde_json::from_str(trimmed)
            .map(|doc| vec![doc])
            .map_err(|e| json_error(source, &e));
    }
    let mut documents = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&source.text) {
        let value = Json::deserialize(document).map_err(|e| yaml_error(source, &e))?;
        if !value.is_null() {
            documents.push(value);
        }
    }
    Ok(documents)
}

/// A JSON syntax error as an [`InputError`] with its position.
pub fn json_error(source: &Source, error: &serde_json::Error) -> InputError {
    let message = strip_position(&error.to_string(), error.line(), error.column());
    InputError::Syntax {
        name: source.name.clone(),
        line: error.line(),
        column: error.column(),
        message,
    }
}

/// A YAML error (syntax or shape) as an [`InputError`], with its position when known.
pub fn yaml_error(source: &Source, error: &serde_yaml_ng::Error) -> InputError {
    match error.location() {
        Some(at) => InputError::Syntax {
            name: source.name.clone(),
            line: at.line(),
            column: at.column(),
            message: strip_position(&error.to_string(), at.line(), at.column()),
        },
        None => InputError::invalid(source, error.to_string()),
    }
}

/// Removes the " at line L column C" both parsers append, since the position is printed first.
fn strip_position(message: &str, line: usize, column: usize) -> String {
    message.replacen(&format!(" at line {line} column {column}"), "", 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn source(text: &str) -> Source {
        Source::from_text("f.yaml", text)
    }

    #[test]
    fn reads_yaml_and_json() {
        assert_eq!(
            parse_one(&source("a: 1\nb: [x]\n")).unwrap(),
            json!({"a": 1, "b": ["x"]})
        );
        assert_eq!(parse_one(&source(" {\"a\": 1}")).unwrap(), json!({"a": 1}));
    }

    #[test]
    fn yaml_syntax_errors_name_file_line_and_column() {
        let err = parse_one(&source("a: 1\nb: [x\n")).unwrap_err();
        let InputError::Syntax { name, line, .. } = &err else {
            panic!("{err}")
        };
        assert_eq!(name, "f.yaml");
        assert!(*line >= 2, "{err}");
        assert!(err.to_string().starts_with("f.yaml:"), "{err}");
    }

    #[test]
    fn json_syntax_errors_have_positions() {
        let err = parse_one(&source("{\n  \"a\": 1,\n}")).unwrap_err();
        assert_eq!(err.to_string(), "f.yaml:3:1: trailing comma");
    }

    #[test]
    fn multi_documents_and_lists() {
        let docs = parse_all(&source("a: 1\n---\n---\nkind: List\nitems: [{b: 2}, {c: 3}]\n")).unwrap();
        assert_eq!(docs, vec![json!({"a": 1}), json!({"b": 2}), json!({"c": 3})]);
        assert!(parse_one(&source("a: 1\n---\nb: 2\n")).is_err());
        assert!(parse_one(&source("")).is_err());
    }

    #[test]
    fn missing_files_are_named() {
        let err = read_one(Path::new("/nonexistent/review.json")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot read /nonexistent/review.json: "),
            "{err}"
        );
    }
}
