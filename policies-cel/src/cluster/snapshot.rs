//! Cluster snapshots: what `kubectl get ... -o yaml|json` prints, loaded into a [`ClusterModel`].
//!
//! Accepted: a `kind: List` (whose items carry their kind), typed lists (`PodList`,
//! `DeploymentList`: items may leave out apiVersion and kind), single objects, multi-document
//! YAML, JSON, and directories of `.yaml`/`.yml`/`.json` files (recursive, in sorted order).
//!
//! Big snapshots stream: a List's items are read, projected ([`project`]) and dropped one at a
//! time, so memory follows the slim model rather than the file. JSON takes a fast path (serde_json
//! over the text, each item kept as raw text until it is read, positions looked for only when an
//! item is wrong); YAML is read with the policy loader's positioned reader one item at a time.
//! Errors name the file, document, line and field, as the policy loader's do.

mod error;
mod json;
mod yaml;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::cluster::{ClusterModel, ProjectError};
use crate::policy::SourceRef;
use crate::policy::marked::{self, Pos};
use crate::policy::path::FieldPath;

pub use error::SnapshotError;

/// Problems collected before loading stops (a systematic mistake in a 100k-object file would
/// otherwise print 100k lines).
const MAX_ERRORS: usize = 20;
/// How often progress is reported, in bytes and in objects.
const PROGRESS_BYTES: u64 = 1 << 20;
const PROGRESS_OBJECTS: usize = 4096;

/// How far loading is, for a progress bar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of the input read so far (estimated inside a file, exact at each file's end).
    pub bytes_done: u64,
    /// Bytes of all the input files.
    pub bytes_total: u64,
    pub files_done: usize,
    pub files_total: usize,
    /// Objects loaded so far.
    pub objects: usize,
}

/// Loads snapshot files and text into one [`ClusterModel`]. An object loaded twice (same group,
/// kind, namespace and name) keeps its last copy.
///
/// ```no_run
/// # fn main() -> Result<(), policies_cel::cluster::snapshot::SnapshotError> {
/// use std::path::Path;
/// use policies_cel::cluster::snapshot::SnapshotLoader;
/// let mut loader = SnapshotLoader::new();
/// loader.add_paths(&[Path::new("snapshots/")], &mut |_| {});
/// let model = loader.finish()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Default)]
pub struct SnapshotLoader {
    model: ClusterModel,
    errors: Vec<SnapshotError>,
    stopped: bool,
    objects: usize,
}

/// Loads every snapshot under `paths` (files or directories), reporting progress as it goes.
/// Of operators' kinds the model keeps what the built-in catalog's profiles name.
pub fn load_snapshots(
    paths: &[&Path],
    progress: &mut dyn FnMut(Progress),
) -> Result<ClusterModel, SnapshotError> {
    load_snapshots_keeping(paths, crate::operators::catalog(), progress)
}

/// [`load_snapshots`], keeping of operators' kinds what `profiles` name (the catalog with the
/// profiles loaded beside the policies: an in-house profile's `keep`).
pub fn load_snapshots_keeping(
    paths: &[&Path],
    profiles: &crate::operators::Profiles,
    progress: &mut dyn FnMut(Progress),
) -> Result<ClusterModel, SnapshotError> {
    let mut loader = SnapshotLoader::keeping(profiles);
    loader.add_paths(paths, progress);
    loader.finish()
}

impl SnapshotLoader {
    /// An empty loader.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty loader whose model keeps, of operators' kinds, what `profiles` name.
    pub fn keeping(profiles: &crate::operators::Profiles) -> Self {
        let mut loader = Self::default();
        loader.model.keep_for(profiles);
        loader
    }

    /// Objects loaded so far.
    pub fn objects(&self) -> usize {
        self.objects
    }

    /// Loads files and directories (`.yaml`, `.yml`, `.json` inside directories; any name when
    /// given directly). Problems are kept for [`finish`](Self::finish).
    pub fn add_paths(&mut self, paths: &[&Path], progress: &mut dyn FnMut(Progress)) {
        let mut files = Vec::new();
        for path in paths {
            self.collect(path, &mut files);
        }
        let mut tracker = Tracker {
            report: progress,
            at: Progress {
                bytes_total: files.iter().map(|(_, len)| len).sum(),
                files_total: files.len(),
                ..Progress::default()
            },
            file_start: 0,
            last_bytes: 0,
            last_objects: 0,
        };
        (tracker.report)(tracker.at);
        for (file, len) in files {
            if self.stopped {
                break;
            }
            match std::fs::read_to_string(&file) {
                Ok(text) => self.text(&file.display().to_string(), &text, &mut tracker),
                Err(source) => self.error(SnapshotError::Io {
                    path: file.display().to_string(),
                    source,
                }),
            }
            tracker.file_done(len, self.objects);
        }
    }

    /// Loads `text`; `name` stands for the file in messages (a name ending in `.json`, or text
    /// starting with `{`, is read as JSON).
    pub fn add_str(&mut self, name: &str, text: &str) {
        let mut ignore = |_| {};
        let mut tracker = Tracker {
            report: &mut ignore,
            at: Progress::default(),
            file_start: 0,
            last_bytes: 0,
            last_objects: 0,
        };
        self.text(name, text, &mut tracker);
    }

    /// The model, or every problem found.
    pub fn finish(self) -> Result<ClusterModel, SnapshotError> {
        match SnapshotError::from_many(self.errors, self.stopped) {
            Some(error) => Err(error),
            None => Ok(self.model),
        }
    }

    fn error(&mut self, error: SnapshotError) {
        if self.errors.len() >= MAX_ERRORS {
            self.stopped = true;
        } else {
            self.errors.push(error);
        }
    }

    /// Adds the snapshot files under `path` (with their sizes) to `files`.
    fn collect(&mut self, path: &Path, files: &mut Vec<(PathBuf, u64)>) {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => self.directory(path, files),
            Ok(meta) => files.push((path.to_path_buf(), meta.len())),
            Err(source) => self.error(SnapshotError::Io {
                path: path.display().to_string(),
                source,
            }),
        }
    }

    fn directory(&mut self, dir: &Path, files: &mut Vec<(PathBuf, u64)>) {
        let (found, errors) = crate::files::files_under(dir, &has_snapshot_extension);
        for (path, source) in errors {
            self.error(SnapshotError::Io {
                path: path.display().to_string(),
                source,
            });
        }
        files.extend(found.into_iter().map(|f| (f.path, f.len)));
    }

    /// One file's text: JSON through the fast path, YAML (and JSON that is only valid as YAML)
    /// document by document.
    fn text(&mut self, file: &str, text: &str, tracker: &mut Tracker<'_>) {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.trim().is_empty() {
            return;
        }
        let is_json_name = file.to_ascii_lowercase().ends_with(".json");
        if is_json_name || text.trim_start().starts_with('{') {
            match json::load(self, file, text, tracker) {
                json::Outcome::Loaded => return,
                json::Outcome::NotJson(error) if is_json_name => return self.error(error),
                json::Outcome::NotJson(_) => {}
            }
        }
        yaml::load(self, file, text, tracker);
    }

    /// One object of a document. `list` is the List it is an item of (which may give it its
    /// apiVersion and kind), `path` its place in the document, `lines` how to find its fields.
    fn object(&mut self, mut value: Value, list: Option<&ListInfo>, path: &FieldPath, lines: Lines<'_>) {
        if let (Some(list), Value::Object(map)) = (list, &mut value)
            && let Err(problem) = list.complete(map)
        {
            return self.invalid(&value, path, &lines, problem);
        }
        match self.model.insert_json(&value) {
            Ok(()) => self.objects += 1,
            Err(problem) => self.invalid(&value, path, &lines, problem),
        }
    }

    fn invalid(&mut self, value: &Value, path: &FieldPath, lines: &Lines<'_>, problem: ProjectError) {
        let line = lines.line_of(problem.path());
        let object = describe_object(value);
        self.error(SnapshotError::Invalid {
            at: SourceRef::new(lines.file(), lines.document(), line),
            field: path.join(problem.path()).to_string(),
            message: problem.message().to_owned(),
            object,
        });
    }
}

/// `Kind namespace/name` of a raw object, when it has a kind and a name.
fn describe_object(value: &Value) -> Option<String> {
    fn text(value: Option<&Value>) -> Option<&str> {
        value.and_then(Value::as_str).filter(|s| !s.is_empty())
    }
    let kind = text(value.get("kind"))?;
    let meta = value.get("metadata");
    let name = text(meta.and_then(|m| m.get("name")))?;
    Some(match text(meta.and_then(|m| m.get("namespace"))) {
        Some(namespace) => format!("{kind} {namespace}/{name}"),
        None => format!("{kind} {name}"),
    })
}

fn has_snapshot_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "yaml" | "yml" | "json"))
}

/// True for `List` and typed lists (`PodList`).
fn is_list_kind(kind: &str) -> bool {
    kind.ends_with("List")
}

/// What a List says about its items: a typed list (`PodList` in `v1`) gives the kind and
/// apiVersion of items that leave them out; a plain `List`'s items carry their own.
#[derive(Debug, Clone, Default)]
struct ListInfo {
    api_version: Option<String>,
    kind: Option<String>,
}

impl ListInfo {
    fn item_kind(&self) -> Option<&str> {
        self.kind
            .as_deref()
            .filter(|k| *k != "List")
            .and_then(|k| k.strip_suffix("List"))
    }

    /// Fills in what an item leaves out, or says why it cannot be.
    fn complete(&self, item: &mut Map<String, Value>) -> Result<(), ProjectError> {
        let has = |item: &Map<String, Value>, key: &str| {
            item.get(key)
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
        };
        if !has(item, "kind") {
            let Some(kind) = self.item_kind() else {
                return Err(ProjectError::at_field(
                    "kind",
                    "Required value: the items of a plain List (kind: List) carry their own apiVersion and kind",
                ));
            };
            item.insert("kind".to_owned(), Value::String(kind.to_owned()));
        }
        let of_the_list_kind =
            self.item_kind().is_some() && item.get("kind").and_then(Value::as_str) == self.item_kind();
        if of_the_list_kind
            && !has(item, "apiVersion")
            && let Some(api_version) = &self.api_version
        {
            item.insert("apiVersion".to_owned(), Value::String(api_version.clone()));
        }
        if item.get("kind").and_then(Value::as_str).is_some_and(is_list_kind) && item.contains_key("items") {
            return Err(ProjectError::at_field(
                "kind",
                "Invalid value: a List cannot hold another List",
            ));
        }
        Ok(())
    }
}

/// How to find the line of a field of an object.
enum Lines<'a> {
    /// Positions read along with the object; their lines count from the document's first line.
    Pos { at: DocRef<'a>, pos: Pos },
    /// Only the object's text: parsed again with positions when a line is needed. The text
    /// starts at byte `offset` of `whole`, the document text starting on line `at.line`.
    Text {
        at: DocRef<'a>,
        text: &'a str,
        whole: &'a str,
        offset: usize,
    },
}

/// A document of a file: its name, its 1-based index and the file line it starts on.
#[derive(Debug, Clone, Copy)]
struct DocRef<'a> {
    file: &'a str,
    document: usize,
    line: usize,
}

impl DocRef<'_> {
    fn at(&self, line_in_document: usize) -> SourceRef {
        SourceRef::new(self.file, self.document, self.line + line_in_document.max(1) - 1)
    }
}

impl Lines<'_> {
    fn doc(&self) -> &DocRef<'_> {
        match self {
            Lines::Pos { at, .. } | Lines::Text { at, .. } => at,
        }
    }

    fn file(&self) -> &str {
        self.doc().file
    }

    fn document(&self) -> usize {
        self.doc().document
    }

    /// The file line of the field at `rel` (of its nearest existing parent when it is missing).
    fn line_of(&self, rel: &FieldPath) -> usize {
        match self {
            Lines::Pos { at, pos } => at.line + pos.line_of(rel).max(1) - 1,
            Lines::Text {
                at,
                text,
                whole,
                offset,
            } => {
                let start = at.line
                    + whole.as_bytes()[..*offset]
                        .iter()
                        .filter(|b| **b == b'\n')
                        .count();
                match marked::parse(text) {
                    Ok(Some(parsed)) => start + parsed.pos.line_of(rel).max(1) - 1,
                    _ => start,
                }
            }
        }
    }
}

/// Reports progress, not more often than every [`PROGRESS_BYTES`] or [`PROGRESS_OBJECTS`].
struct Tracker<'p> {
    report: &'p mut dyn FnMut(Progress),
    at: Progress,
    /// Bytes of the files before the current one.
    file_start: u64,
    last_bytes: u64,
    last_objects: usize,
}

impl Tracker<'_> {
    /// Reading reached byte `offset` of the current file, with `objects` loaded in all.
    fn reached(&mut self, offset: usize, objects: usize) {
        let bytes = self
            .file_start
            .saturating_add(offset as u64)
            .min(self.at.bytes_total);
        if bytes.saturating_sub(self.last_bytes) >= PROGRESS_BYTES
            || objects.saturating_sub(self.last_objects) >= PROGRESS_OBJECTS
        {
            self.at.bytes_done = bytes.max(self.at.bytes_done);
            self.at.objects = objects;
            self.last_bytes = bytes;
            self.last_objects = objects;
            (self.report)(self.at);
        }
    }

    fn file_done(&mut self, len: u64, objects: usize) {
        self.file_start = self.file_start.saturating_add(len);
        self.at.bytes_done = self.file_start.min(self.at.bytes_total);
        self.at.files_done += 1;
        self.at.objects = objects;
        self.last_bytes = self.at.bytes_done;
        self.last_objects = objects;
        (self.report)(self.at);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::cluster::{ClusterView, ObjectKey};

    fn load(name: &str, text: &str) -> Result<ClusterModel, SnapshotError> {
        let mut loader = SnapshotLoader::new();
        loader.add_str(name, text);
        loader.finish()
    }

    #[test]
    fn typed_lists_give_their_items_a_kind() {
        let text = r#"{"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [{"metadata": {"name": "a", "namespace": "x"}}]}"#;
        let model = load("pods.json", text).unwrap();
        let pod = model.get(&ObjectKey::new("", "Pod", "x", "a")).unwrap();
        assert_eq!(&*pod.api_version, "v1");
        let yaml = "apiVersion: apps/v1\nitems:\n- metadata:\n    name: web\n  spec:\n    selector:\n      matchLabels: {app: web}\nkind: DeploymentList\n";
        let model = load("deployments.yaml", yaml).unwrap();
        let web = ObjectKey::new("apps", "Deployment", "", "web");
        assert!(model.get(&web).is_some());
        // An item that names its kind but not its apiVersion takes the list's.
        let text = r#"{"kind": "ServiceList", "apiVersion": "v1", "items": [{"kind": "Service", "metadata": {"name": "s"}}]}"#;
        let model = load("services.json", text).unwrap();
        assert!(model.get(&ObjectKey::new("", "Service", "", "s")).is_some());
    }

    #[test]
    fn json_item_errors_have_lines() {
        let text = "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": [\n    {\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"}},\n    {\n      \"apiVersion\": \"apps/v1\",\n      \"kind\": \"Deployment\",\n      \"metadata\": {\"name\": \"b\"},\n      \"spec\": {\n        \"replicas\": true\n      }\n    }\n  ]\n}\n";
        let error = load("list.json", text).unwrap_err();
        assert_eq!(
            error.to_string(),
            "list.json:11 (document 1): items[1].spec.replicas: expected an integer, found true (in Deployment b)"
        );
    }

    #[test]
    fn yaml_flow_mappings_are_not_mistaken_for_json() {
        let model = load(
            "ns.yaml",
            "{apiVersion: v1, kind: Namespace, metadata: {name: a}}\n",
        )
        .unwrap();
        assert_eq!(model.len(), 1);
    }
}
