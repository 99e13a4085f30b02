//! One YAML (or JSON) document read into a JSON value plus a tree of source lines, so that any
//! field path (`spec.validations[2].expression`) can be turned back into the line it came from.
//!
//! Why `saphyr-parser` and not `serde_yaml_ng`: serde_yaml_ng reports a position only for syntax
//! errors, not for the nodes it deserializes, so type errors found later (by `serde_path_to_error`
//! on the JSON value) could not be located. saphyr-parser is a maintained, pure-Rust YAML 1.2
//! event parser whose every event carries its span; building the value from those events gives
//! exact lines for every key and item, in flow style and JSON as well as in block style.
//!
//! Scalars are resolved with the YAML 1.2 core schema (what serde_yaml_ng does too): `true`,
//! `null`, `~`, integers, floats; anything quoted or tagged `!!str` is a string. Anchors, aliases
//! and merge keys (`<<`) are supported; duplicate keys are an error, as in `kubectl`.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span};

use crate::policy::path::{FieldPath, Seg};
use crate::policy::scalar::resolve_scalar;
use serde_json::{Map, Value};

/// How deep collections may nest before the document is refused (the builder is recursive).
const MAX_DEPTH: usize = 128;
/// How many nodes aliases may copy in all (a "billion laughs" document stops here).
const MAX_ALIAS_NODES: usize = 1_000_000;

/// Where a node is: its first line and, for collections, where each child is.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pos {
    /// 1-based line of the node (of the document text).
    pub(crate) line: usize,
    kids: Kids,
}

#[derive(Debug, Clone, Default)]
enum Kids {
    #[default]
    Leaf,
    /// Each key with the line of the key and the position of its value.
    Map(Vec<(String, usize, Pos)>),
    Seq(Vec<Pos>),
}

impl Pos {
    /// A node at `line` whose parts have no known position.
    pub(crate) fn leaf(line: usize) -> Self {
        Self {
            line,
            kids: Kids::Leaf,
        }
    }

    fn child(&self, seg: &Seg) -> Option<(usize, &Pos)> {
        match (&self.kids, seg) {
            (Kids::Map(entries), Seg::Key(key)) => entries
                .iter()
                .find(|(k, _, _)| k == key)
                .map(|(_, line, pos)| (*line, pos)),
            (Kids::Seq(items), Seg::Index(index)) => items.get(*index).map(|pos| (pos.line, pos)),
            _ => None,
        }
    }

    /// The line of the field at `path`: the line of its key (or list item). When the path goes
    /// further than the document does (a missing field), the line of the deepest node that exists.
    pub(crate) fn line_of(&self, path: &FieldPath) -> usize {
        let mut pos = self;
        let mut line = self.line;
        for seg in &path.0 {
            match pos.child(seg) {
                Some((key_line, child)) => {
                    line = key_line;
                    pos = child;
                }
                None => break,
            }
        }
        line
    }

    fn size(&self) -> usize {
        match &self.kids {
            Kids::Leaf => 1,
            Kids::Map(entries) => 1 + entries.iter().map(|(_, _, p)| p.size()).sum::<usize>(),
            Kids::Seq(items) => 1 + items.iter().map(Pos::size).sum::<usize>(),
        }
    }
}

/// A parsed document: its value and where each part of it is.
#[derive(Debug, Clone)]
pub(crate) struct Marked {
    pub(crate) value: Value,
    pub(crate) pos: Pos,
}

/// A YAML syntax (or structure) error, at a 1-based line and column of the document text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct YamlError {
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) message: String,
}

impl YamlError {
    fn at(span: &Span, message: impl Into<String>) -> Self {
        Self {
            line: span.start.line(),
            column: span.start.col() + 1,
            message: message.into(),
        }
    }
}

impl From<ScanError> for YamlError {
    fn from(error: ScanError) -> Self {
        Self {
            line: error.marker().line(),
            column: error.marker().col() + 1,
            message: error.info().to_owned(),
        }
    }
}

/// Parses one document. `Ok(None)` for a document without content.
pub(crate) fn parse(text: &str) -> Result<Option<Marked>, YamlError> {
    let mut builder = Builder::new(text);
    let mut root = None;
    loop {
        let (event, span) = builder.next()?;
        match event {
            Event::StreamStart | Event::DocumentStart(_) | Event::DocumentEnd | Event::Nothing => {}
            Event::StreamEnd => return Ok(root),
            event if root.is_none() => {
                let (value, pos) = builder.node(event, span, 0)?;
                root = Some(Marked { value, pos });
            }
            _ => {
                return Err(YamlError::at(
                    &span,
                    "more than one document where one was expected",
                ));
            }
        }
    }
}

/// Builds values with positions from the parser's events. Callers that walk a stream themselves
/// (the snapshot loader builds one `kind: List` item at a time) take events with [`Builder::next`]
/// and build the nodes they want with [`Builder::node`].
pub(crate) struct Builder<'a> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    anchors: HashMap<usize, (Value, Pos)>,
    alias_nodes: usize,
    last: Span,
}

impl<'a> Builder<'a> {
    /// A builder over the events of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            parser: Parser::new_from_str(text),
            anchors: HashMap::new(),
            alias_nodes: 0,
            last: Span::default(),
        }
    }

    /// The next event and its span; the end of the events is an error.
    pub(crate) fn next(&mut self) -> Result<(Event<'a>, Span), YamlError> {
        match self.parser.next_event() {
            Some(Ok((event, span))) => {
                self.last = span;
                Ok((event, span))
            }
            Some(Err(error)) => Err(error.into()),
            None => Err(YamlError::at(&self.last, "unexpected end of the document")),
        }
    }

    /// The value (and positions) of the node `event` opens, reading the events it spans.
    pub(crate) fn node(
        &mut self,
        event: Event<'a>,
        span: Span,
        depth: usize,
    ) -> Result<(Value, Pos), YamlError> {
        if depth > MAX_DEPTH {
            return Err(YamlError::at(
                &span,
                format!("nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        let line = span.start.line();
        let (anchor, built) = match event {
            Event::Scalar(text, style, anchor, tag) => {
                let value = resolve_scalar(&text, style, tag.as_deref())
                    .map_err(|message| YamlError::at(&span, message))?;
                (
                    anchor,
                    (
                        value,
                        Pos {
                            line,
                            kids: Kids::Leaf,
                        },
                    ),
                )
            }
            Event::SequenceStart(anchor, _) => {
                let mut values = Vec::new();
                let mut items = Vec::new();
                loop {
                    let (event, span) = self.next()?;
                    if matches!(event, Event::SequenceEnd) {
                        break;
                    }
                    let (value, pos) = self.node(event, span, depth + 1)?;
                    values.push(value);
                    items.push(pos);
                }
                (
                    anchor,
                    (
                        Value::Array(values),
                        Pos {
                            line,
                            kids: Kids::Seq(items),
                        },
                    ),
                )
            }
            Event::MappingStart(anchor, _) => (anchor, self.mapping(line, depth)?),
            Event::Alias(id) => {
                let Some((value, pos)) = self.anchors.get(&id) else {
                    return Err(YamlError::at(&span, "alias to an unknown anchor"));
                };
                self.alias_nodes += pos.size();
                if self.alias_nodes > MAX_ALIAS_NODES {
                    return Err(YamlError::at(&span, "aliases expand to too many nodes"));
                }
                // The alias's own line, so that errors point where the value is used.
                let pos = Pos {
                    line,
                    kids: pos.kids.clone(),
                };
                (0, (value.clone(), pos))
            }
            other => {
                return Err(YamlError::at(&span, format!("unexpected YAML event {other:?}")));
            }
        };
        if anchor != 0 {
            self.anchors.insert(anchor, built.clone());
        }
        Ok(built)
    }

    fn mapping(&mut self, line: usize, depth: usize) -> Result<(Value, Pos), YamlError> {
        let mut map = Map::new();
        let mut entries: Vec<(String, usize, Pos)> = Vec::new();
        // Entries from merge keys: they fill in keys the mapping does not set itself.
        let mut merged: Vec<(String, Value, usize, Pos)> = Vec::new();
        loop {
            let (event, key_span) = self.next()?;
            let (key, is_merge) = match event {
                Event::MappingEnd => break,
                Event::Scalar(text, style, _, tag) => {
                    let value = resolve_scalar(&text, style, tag.as_deref())
                        .map_err(|message| YamlError::at(&key_span, message))?;
                    let is_merge = style == ScalarStyle::Plain && text == "<<";
                    let key = match value {
                        Value::String(s) => s,
                        Value::Null => "null".to_owned(),
                        other => other.to_string(),
                    };
                    (key, is_merge)
                }
                _ => {
                    return Err(YamlError::at(
                        &key_span,
                        "only scalar mapping keys are supported (JSON objects have string keys)",
                    ));
                }
            };
            let key_line = key_span.start.line();
            let (event, span) = self.next()?;
            let (value, pos) = self.node(event, span, depth + 1)?;
            if is_merge {
                self.merge_sources(value, pos, key_line, &key_span, &mut merged)?;
                continue;
            }
            if let Some((_, first, _)) = entries.iter().find(|(k, _, _)| *k == key) {
                return Err(YamlError::at(
                    &key_span,
                    format!("duplicate key `{key}` (first set on line {first})"),
                ));
            }
            map.insert(key.clone(), value);
            entries.push((key, key_line, pos));
        }
        for (key, value, key_line, pos) in merged {
            if !map.contains_key(&key) {
                map.insert(key.clone(), value);
                entries.push((key, key_line, pos));
            }
        }
        Ok((
            Value::Object(map),
            Pos {
                line,
                kids: Kids::Map(entries),
            },
        ))
    }

    /// `<<: *base` or `<<: [*a, *b]`: earlier sources win over later ones.
    fn merge_sources(
        &self,
        value: Value,
        pos: Pos,
        key_line: usize,
        key_span: &Span,
        merged: &mut Vec<(String, Value, usize, Pos)>,
    ) -> Result<(), YamlError> {
        let sources: Vec<(Value, Pos)> = match (value, pos.kids) {
            (Value::Object(map), kids) => vec![(Value::Object(map), Pos { line: pos.line, kids })],
            (Value::Array(values), Kids::Seq(items)) => values.into_iter().zip(items).collect(),
            _ => {
                return Err(YamlError::at(
                    key_span,
                    "a merge key (<<) needs a mapping or a list of mappings",
                ));
            }
        };
        for (value, pos) in sources {
            let (Value::Object(map), Kids::Map(entries)) = (value, pos.kids) else {
                return Err(YamlError::at(
                    key_span,
                    "a merge key (<<) needs a mapping or a list of mappings",
                ));
            };
            for (key, value) in map {
                if merged.iter().any(|(k, _, _, _)| *k == key) {
                    continue;
                }
                let pos = entries
                    .iter()
                    .find(|(k, _, _)| *k == key)
                    .map(|(_, _, p)| p.clone())
                    .unwrap_or(Pos {
                        line: key_line,
                        kids: Kids::Leaf,
                    });
                merged.push((key, value, key_line, pos));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use serde_json::json;

    fn parse_ok(text: &str) -> Marked {
        parse(text).unwrap().unwrap()
    }

    fn path(segs: &[&str]) -> FieldPath {
        FieldPath::from_segments(segs)
    }

    #[test]
    fn values_and_lines() {
        let doc = parse_ok(
            "kind: X\nspec:\n  validations:\n  - expression: a\n    message: m\n  - expression: \"b\"\n  n: 0x10\n  f: 1.5\n  z: ~\n  t: true\n  s: '1'\n",
        );
        assert_eq!(
            doc.value,
            json!({"kind": "X", "spec": {"validations": [{"expression": "a", "message": "m"}, {"expression": "b"}], "n": 16, "f": 1.5, "z": null, "t": true, "s": "1"}})
        );
        assert_eq!(
            doc.pos
                .line_of(&path(&["spec", "validations", "1", "expression"])),
            6
        );
        assert_eq!(
            doc.pos.line_of(&path(&["spec", "validations", "0", "message"])),
            5
        );
        assert_eq!(doc.pos.line_of(&path(&["spec", "validations", "1"])), 6);
        // Missing: the deepest existing node.
        assert_eq!(doc.pos.line_of(&path(&["spec", "validations", "1", "reason"])), 6);
        assert_eq!(doc.pos.line_of(&path(&["nothing"])), 1);
    }

    #[test]
    fn json_with_lines() {
        let doc = parse_ok("{\n  \"kind\": \"X\",\n  \"spec\": {\n    \"a\": [1, 2,\n      3]\n  }\n}\n");
        assert_eq!(doc.value, json!({"kind": "X", "spec": {"a": [1, 2, 3]}}));
        assert_eq!(doc.pos.line_of(&path(&["spec", "a", "2"])), 5);
    }

    #[test]
    fn anchors_and_merge_keys() {
        let doc = parse_ok("base: &b\n  x: 1\n  y: 2\nderived:\n  <<: *b\n  y: 3\nlist: [*b]\n");
        assert_eq!(doc.value["derived"], json!({"x": 1, "y": 3}));
        assert_eq!(doc.value["list"], json!([{"x": 1, "y": 2}]));
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let error = parse("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!((error.line, error.column), (3, 1));
        assert!(
            error.message.contains("duplicate key `a` (first set on line 1)"),
            "{error:?}"
        );
    }

    #[test]
    fn syntax_errors_have_positions() {
        let error = parse("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert!(error.line >= 2, "{error:?}");
        let error = parse("a:\n  b: 1\n c: 2\n").unwrap_err();
        assert_eq!(error.line, 3, "{error:?}");
    }

    #[test]
    fn empty_document() {
        assert!(parse("# nothing\n").unwrap().is_none());
    }
}
