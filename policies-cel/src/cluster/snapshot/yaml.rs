//! YAML snapshots: the file is split into documents as the policy loader splits it, and each
//! document is read with the policy loader's positioned reader (`policy::marked`) — but a List's
//! items are built, projected and dropped one at a time, so a 100k-object List never exists
//! whole in memory, and each item keeps the lines of its fields for error messages.

use saphyr_parser::{Event, Span};
use serde_json::{Map, Value};

use crate::policy::marked::{self, Builder, YamlError};
use crate::policy::path::FieldPath;
use crate::policy::split_documents;

use super::{DocRef, Lines, ListInfo, SnapshotError, SnapshotLoader, Tracker, is_list_kind};

pub(super) fn load(loader: &mut SnapshotLoader, file: &str, text: &str, tracker: &mut Tracker<'_>) {
    if !may_have_markers(text) {
        // One document (the usual `kubectl get -o yaml` List): read in place, not copied.
        if has_content(text) {
            read(
                loader,
                DocRef {
                    file,
                    document: 1,
                    line: 1,
                },
                text,
                0,
                tracker,
            );
        }
        return;
    }
    // Where the current document starts in the file, near enough for progress.
    let mut consumed = 0;
    for document in split_documents(text) {
        if loader.stopped {
            break;
        }
        if !document.is_empty() {
            let doc = DocRef {
                file,
                document: document.index,
                line: document.line,
            };
            read(loader, doc, &document.text, consumed, tracker);
        }
        consumed += document.text.len();
    }
}

/// True unless no line starts like a document marker (`---`, `...`), in which case the whole
/// text is the one document [`split_documents`] would return.
fn may_have_markers(text: &str) -> bool {
    text.starts_with("---") || text.starts_with("...") || text.contains("\n---") || text.contains("\n...")
}

/// What [`crate::policy::Document::is_empty`] says of a whole text, negated.
fn has_content(text: &str) -> bool {
    text.lines().any(|line| {
        let trimmed = line.trim_start();
        !trimmed.is_empty() && !trimmed.starts_with('#')
    })
}

fn read(
    loader: &mut SnapshotLoader,
    doc: DocRef<'_>,
    text: &str,
    consumed: usize,
    tracker: &mut Tracker<'_>,
) {
    let mut reader = Reader {
        loader,
        doc,
        text,
        consumed,
        tracker,
    };
    if let Err(error) = reader.document() {
        loader.error(SnapshotError::Syntax {
            at: doc.at(error.line),
            format: "YAML",
            column: error.column,
            message: error.message,
        });
    }
}

fn error_at(span: &Span, message: impl Into<String>) -> YamlError {
    YamlError {
        line: span.start.line(),
        column: span.start.col() + 1,
        message: message.into(),
    }
}

/// One document being read.
struct Reader<'r, 'a, 'p> {
    loader: &'r mut SnapshotLoader,
    doc: DocRef<'a>,
    text: &'a str,
    consumed: usize,
    tracker: &'r mut Tracker<'p>,
}

impl<'a> Reader<'_, 'a, '_> {
    fn document(&mut self) -> Result<(), YamlError> {
        let mut builder = Builder::new(self.text);
        let mut seen_root = false;
        loop {
            let (event, span) = builder.next()?;
            match event {
                Event::StreamStart | Event::DocumentStart(_) | Event::DocumentEnd | Event::Nothing => {}
                Event::StreamEnd => return Ok(()),
                Event::MappingStart(..) if !seen_root => {
                    seen_root = true;
                    self.mapping(&mut builder)?;
                }
                event if !seen_root => {
                    seen_root = true;
                    let (value, _) = builder.node(event, span, 0)?;
                    if !value.is_null() {
                        // Not a mapping: projection says what was expected.
                        self.single(value);
                    }
                }
                _ => return Err(error_at(&span, "more than one document where one was expected")),
            }
        }
    }

    /// The document's top-level mapping: a List whose items are read one by one, or an object.
    fn mapping(&mut self, builder: &mut Builder<'a>) -> Result<(), YamlError> {
        let mut fields = Map::new();
        let mut key_lines: Vec<(String, usize)> = Vec::new();
        let mut list = ListInfo::default();
        let mut merges = false;
        // Items that lack apiVersion or kind wait for the List's own (which may come later).
        let mut pending = Vec::new();
        let mut items_seen = false;
        loop {
            let (event, key_span) = builder.next()?;
            if matches!(event, Event::MappingEnd) {
                break;
            }
            if !matches!(event, Event::Scalar(..)) {
                return Err(error_at(&key_span, "only scalar mapping keys are supported"));
            }
            let key = match builder.node(event, key_span, 1)?.0 {
                Value::String(s) => s,
                Value::Null => "null".to_owned(),
                other => other.to_string(),
            };
            if let Some((_, first)) = key_lines.iter().find(|(k, _)| *k == key) {
                return Err(error_at(
                    &key_span,
                    format!("duplicate key `{key}` (first set on line {first})"),
                ));
            }
            key_lines.push((key.clone(), key_span.start.line()));
            merges |= key == "<<";
            let (event, span) = builder.next()?;
            let streams = key == "items"
                && matches!(event, Event::SequenceStart(..))
                && list.kind.as_deref().is_none_or(is_list_kind);
            if streams {
                items_seen = true;
                if self.items(builder, &list, &mut pending)? {
                    return Ok(());
                }
                continue;
            }
            let (value, _) = builder.node(event, span, 1)?;
            match (key.as_str(), &value) {
                ("apiVersion", Value::String(s)) => list.api_version = Some(s.clone()),
                ("kind", Value::String(s)) => list.kind = Some(s.clone()),
                _ => {}
            }
            fields.insert(key, value);
        }
        if !items_seen {
            let value = if merges {
                // Merge keys at the top: let the whole-document reader resolve them.
                marked::parse(self.text)?.map_or(Value::Null, |parsed| parsed.value)
            } else {
                Value::Object(fields)
            };
            self.single(value);
            return Ok(());
        }
        if !list.kind.as_deref().is_some_and(is_list_kind) {
            let line = key_lines
                .iter()
                .find(|(k, _)| k == "kind")
                .map_or(1, |(_, line)| *line);
            self.loader.error(SnapshotError::Invalid {
                at: self.doc.at(line),
                field: "kind".to_owned(),
                message: "Required value: a document with items is a List (kind: List, or a typed list such as PodList)"
                    .to_owned(),
                object: None,
            });
            return Ok(());
        }
        let items_path = FieldPath::root().key("items");
        for (index, value, pos) in pending {
            let lines = Lines::Pos { at: self.doc, pos };
            self.loader
                .object(value, Some(&list), &items_path.index(index), lines);
        }
        Ok(())
    }

    /// A List's items, up to the end of the sequence. Items that carry apiVersion and kind are
    /// loaded at once, the others kept in `pending`. True when loading has stopped.
    fn items(
        &mut self,
        builder: &mut Builder<'a>,
        list: &ListInfo,
        pending: &mut Vec<(usize, Value, marked::Pos)>,
    ) -> Result<bool, YamlError> {
        let items_path = FieldPath::root().key("items");
        let mut index = 0;
        loop {
            let (event, span) = builder.next()?;
            if matches!(event, Event::SequenceEnd) {
                return Ok(false);
            }
            let (value, pos) = builder.node(event, span, 2)?;
            let has = |key: &str| {
                value
                    .get(key)
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty())
            };
            if has("apiVersion") && has("kind") {
                let lines = Lines::Pos { at: self.doc, pos };
                self.loader
                    .object(value, Some(list), &items_path.index(index), lines);
            } else {
                pending.push((index, value, pos));
            }
            index += 1;
            self.tracker
                .reached(self.consumed + span.end.index(), self.loader.objects);
            if self.loader.stopped {
                return Ok(true);
            }
        }
    }

    fn single(&mut self, value: Value) {
        let lines = Lines::Text {
            at: self.doc,
            text: self.text,
            whole: self.text,
            offset: 0,
        };
        self.loader.object(value, None, &FieldPath::root(), lines);
    }
}
