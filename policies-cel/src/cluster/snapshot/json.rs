//! The JSON fast path: serde_json reads the document's top level, keeping each List item as raw
//! text (a slice of the file); items are then parsed, projected and dropped one by one. Nothing
//! is parsed with positions unless an item is wrong, and then only that item.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::policy::path::FieldPath;

use super::{DocRef, Lines, ListInfo, SnapshotError, SnapshotLoader, Tracker, is_list_kind};

/// What became of a text given to the JSON path.
pub(super) enum Outcome {
    /// Read as JSON (its problems, if any, are with the loader).
    Loaded,
    /// Not JSON: the syntax error, for a caller that will not try YAML.
    NotJson(SnapshotError),
}

/// The top level of a document, read without reading the items.
#[derive(Debug, Deserialize)]
struct Top<'a> {
    #[serde(rename = "apiVersion")]
    api_version: Option<String>,
    kind: Option<String>,
    #[serde(borrow)]
    items: Option<Vec<&'a RawValue>>,
}

pub(super) fn load(
    loader: &mut SnapshotLoader,
    file: &str,
    text: &str,
    tracker: &mut Tracker<'_>,
) -> Outcome {
    let doc = DocRef {
        file,
        document: 1,
        line: 1,
    };
    let top: Option<Top<'_>> = match serde_json::from_str(text) {
        Ok(top) => Some(top),
        // Valid JSON, but not a List: read it whole below (projection says what is wrong).
        Err(error) if error.is_data() => None,
        Err(error) => return Outcome::NotJson(syntax(&doc, &error)),
    };
    let list = top.and_then(|top| match (top.kind, top.items) {
        (None, Some(_)) => Some(Err(())),
        (Some(kind), Some(items)) if is_list_kind(&kind) => Some(Ok((
            ListInfo {
                api_version: top.api_version,
                kind: Some(kind),
            },
            items,
        ))),
        _ => None,
    });
    let (list, items) = match list {
        Some(Ok(list)) => list,
        Some(Err(())) => {
            loader.error(SnapshotError::Invalid {
                at: doc.at(1),
                field: "kind".to_owned(),
                message: "Required value: a document with items is a List (kind: List, or a typed list such as PodList)"
                    .to_owned(),
                object: None,
            });
            return Outcome::Loaded;
        }
        None => {
            // A single object (small: parse it whole).
            match serde_json::from_str::<Value>(text) {
                Ok(value) => {
                    let lines = Lines::Text {
                        at: doc,
                        text,
                        whole: text,
                        offset: 0,
                    };
                    loader.object(value, None, &FieldPath::root(), lines);
                }
                Err(error) => loader.error(syntax(&doc, &error)),
            }
            return Outcome::Loaded;
        }
    };
    let items_path = FieldPath::root().key("items");
    for (index, raw) in items.into_iter().enumerate() {
        if loader.stopped {
            break;
        }
        let item_text = raw.get();
        let offset = offset_in(text, item_text);
        match serde_json::from_str::<Value>(item_text) {
            Ok(value) => {
                let lines = Lines::Text {
                    at: doc,
                    text: item_text,
                    whole: text,
                    offset,
                };
                loader.object(value, Some(&list), &items_path.index(index), lines);
            }
            Err(error) => loader.error(syntax(&doc, &error)),
        }
        tracker.reached(offset + item_text.len(), loader.objects);
    }
    Outcome::Loaded
}

/// Where `part` (a slice of `whole`) starts in `whole`.
fn offset_in(whole: &str, part: &str) -> usize {
    (part.as_ptr() as usize)
        .saturating_sub(whole.as_ptr() as usize)
        .min(whole.len())
}

fn syntax(doc: &DocRef<'_>, error: &serde_json::Error) -> SnapshotError {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    let message = text.strip_suffix(&suffix).unwrap_or(&text).to_owned();
    SnapshotError::Syntax {
        at: doc.at(error.line()),
        format: "JSON",
        column: error.column(),
        message,
    }
}
