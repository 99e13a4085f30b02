//! One rendered manifest: an explanatory comment header and the object's YAML, and the stream
//! of them (`---`-separated) that `kubectl apply -f` reads.

use serde::Serialize;

/// Why the manifests could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("could not serialize the {kind}")]
    Serialize {
        kind: &'static str,
        #[source]
        source: serde_yaml_ng::Error,
    },
    #[error("could not generate the self-signed certificate")]
    Certificate(#[from] rcgen::Error),
    #[error("could not build the wg-policy report definitions")]
    ReportDefinitions(#[from] serde_json::Error),
}

/// One rendered object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// Its file name under `--output-dir` (`05-deployment.yaml`).
    pub file: String,
    /// What it is and why it is so: `# ` comment lines.
    pub header: String,
    /// The object, as YAML.
    pub yaml: String,
}

impl Document {
    /// Serializes `object` (a k8s-openapi type, or a JSON value for kinds it lacks).
    pub fn of<T: Serialize>(
        file: &str,
        kind: &'static str,
        header: &str,
        object: &T,
    ) -> Result<Self, InstallError> {
        let yaml =
            serde_yaml_ng::to_string(object).map_err(|source| InstallError::Serialize { kind, source })?;
        let header = header
            .trim()
            .lines()
            .flat_map(wrap)
            .map(|line| {
                if line.is_empty() {
                    "#".to_owned()
                } else {
                    format!("# {line}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        Ok(Self {
            file: file.to_owned(),
            header,
            yaml,
        })
    }

    /// The document as it appears in a stream or a file: `---`, the header, the object.
    pub fn text(&self) -> String {
        format!("---\n{}\n{}", self.header, self.yaml)
    }
}

/// The widest comment line (before `# `).
const WIDTH: usize = 96;

/// A header line broken at spaces to at most [`WIDTH`] characters.
fn wrap(line: &str) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in line.split(' ') {
        let current = lines.last().map_or(0, String::len);
        if current > 0 && current + 1 + word.len() > WIDTH {
            lines.push(String::new());
        }
        if let Some(last) = lines.last_mut() {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    lines
}

/// The whole install as one YAML stream.
pub fn stream(documents: &[Document]) -> String {
    documents.iter().map(Document::text).collect()
}
