//! Reading the fields of a Kubernetes object as JSON — a parsed tree, or the object's text
//! (`text.rs`, for the plain values it reads) — with errors that name the field.
//!
//! Absent and `null` fields read as absent (Go's `omitempty` and `null` decode alike). Paths are
//! built only when something is wrong: an error starts at the field it is about and each caller
//! on the way out puts its own key (or list index) in front, so a valid object costs no path
//! bookkeeping at all.

use serde_json::{Map, Value};

use crate::cluster::object::{IntOrPercent, Labels};
use crate::cluster::{ClusterModel, labels_from};
use crate::policy::path::{FieldPath, Seg};

use super::ProjectError;
use super::text::{self, TextObject};

pub(super) type Result<T> = std::result::Result<T, ProjectError>;

impl ProjectError {
    /// An error about the value being read (callers add where it is).
    pub(super) fn here(message: impl Into<String>) -> Self {
        Self {
            path: FieldPath::root(),
            message: message.into(),
        }
    }

    /// An error about the field `key` of the object being read.
    pub(super) fn field_error(key: &str, message: impl Into<String>) -> Self {
        Self::here(message).under_key(key)
    }

    /// `Required value` at `key`.
    pub(super) fn required(key: &str) -> Self {
        Self::field_error(key, "Required value")
    }

    /// `Unsupported value` at `key`, listing what is supported (as the API server says it).
    pub(super) fn unsupported(key: &str, value: &str, supported: &[&str]) -> Self {
        let supported: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        Self::field_error(
            key,
            format!(
                "Unsupported value: {value:?}: supported values: {}",
                supported.join(", ")
            ),
        )
    }

    fn under_key(mut self, key: &str) -> Self {
        self.path.0.insert(0, Seg::Key(key.to_owned()));
        self
    }

    fn under_index(mut self, index: usize) -> Self {
        self.path.0.insert(0, Seg::Index(index));
        self
    }
}

/// Puts the place of a nested read in front of its error's path.
pub(super) trait Within<T> {
    /// The error happened inside the field `key`.
    fn in_key(self, key: &str) -> Result<T>;
    /// The error happened inside list item `index`.
    fn in_index(self, index: usize) -> Result<T>;
}

impl<T> Within<T> for Result<T> {
    fn in_key(self, key: &str) -> Result<T> {
        self.map_err(|e| e.under_key(key))
    }

    fn in_index(self, index: usize) -> Result<T> {
        self.map_err(|e| e.under_index(index))
    }
}

/// How a value is named in a type error: short scalars are shown, collections are named.
pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.chars().count() > 40 => {
            let head: String = s.chars().take(40).collect();
            format!("a string ({head:?}...)")
        }
        Value::String(s) => format!("{s:?}"),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "a mapping".to_owned(),
    }
}

fn expected(what: &str, found: &Value) -> ProjectError {
    ProjectError::here(format!("expected {what}, found {}", describe(found)))
}

/// A JSON object being read (an absent one reads as empty): a parsed tree, or the object's text
/// ([`TextObject`]), which reads plain values only and gives [`unread`] errors for the rest (the
/// caller then reads the tree).
#[derive(Debug, Clone, Copy)]
pub(super) struct Fields<'a> {
    source: Source<'a>,
}

#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    Absent,
    Tree(&'a Map<String, Value>),
    Text(TextObject<'a>),
}

/// The error of a value the text reading leaves to the tree (its message is never shown: the
/// tree's reading replaces it).
fn unread(key: &str) -> ProjectError {
    ProjectError::field_error(
        key,
        "not read from the text (read from the parsed object instead)",
    )
}

/// A value found at a key: in the tree, or its text.
enum Found<'a> {
    Tree(&'a Value),
    Text(&'a str),
}

impl<'a> Fields<'a> {
    /// `value` as an object; `null` is an empty one.
    pub(super) fn of(value: &'a Value) -> Result<Self> {
        match value {
            Value::Object(map) => Ok(Self {
                source: Source::Tree(map),
            }),
            Value::Null => Ok(Self::absent()),
            other => Err(expected("a mapping", other)),
        }
    }

    /// An object read from its text.
    pub(super) fn of_text(object: TextObject<'a>) -> Self {
        Self {
            source: Source::Text(object),
        }
    }

    fn absent() -> Self {
        Self {
            source: Source::Absent,
        }
    }

    /// The field `key`, unless absent or `null`.
    #[inline]
    fn found(&self, key: &str) -> Option<Found<'a>> {
        match self.source {
            Source::Absent => None,
            Source::Tree(map) => map.get(key).filter(|v| !v.is_null()).map(Found::Tree),
            Source::Text(object) => object.value(key).map(Found::Text),
        }
    }

    /// Whether the field `key` is there (and not `null`).
    pub(super) fn has(&self, key: &str) -> bool {
        self.found(key).is_some()
    }

    /// The field `key` as a tree, unless absent or `null`; read from text, an [`unread`] error.
    pub(super) fn value(&self, key: &str) -> Result<Option<&'a Value>> {
        match self.found(key) {
            None => Ok(None),
            Some(Found::Tree(value)) => Ok(Some(value)),
            Some(Found::Text(_)) => Err(unread(key)),
        }
    }

    /// The object at `key` (empty when absent).
    pub(super) fn obj(&self, key: &str) -> Result<Fields<'a>> {
        match self.source {
            Source::Absent => Ok(Self::absent()),
            Source::Tree(map) => match map.get(key).filter(|v| !v.is_null()) {
                Some(value) => Fields::of(value).in_key(key),
                None => Ok(Self::absent()),
            },
            Source::Text(object) => match object.object(key) {
                Ok(Some(object)) => Ok(Self::of_text(object)),
                Ok(None) => Ok(Self::absent()),
                Err(text::Unread) => Err(unread(key)),
            },
        }
    }

    /// Reads the object at `key` with `read`; its errors are placed under `key`.
    pub(super) fn nested<T>(&self, key: &str, read: impl FnOnce(Fields<'a>) -> Result<T>) -> Result<T> {
        read(self.obj(key)?).in_key(key)
    }

    /// Reads every object of the list at `key` with `read`; errors name the item.
    pub(super) fn each(&self, key: &str, mut read: impl FnMut(Fields<'a>) -> Result<()>) -> Result<()> {
        if let Source::Text(object) = self.source {
            let Some(list) = object.value(key) else {
                return Ok(());
            };
            let items = text::elements(list).map_err(|text::Unread| unread(key))?;
            for (index, item) in items.into_iter().enumerate() {
                let item = match item {
                    "null" => Ok(Self::absent()),
                    item => text::object_of(item)
                        .map(Self::of_text)
                        .map_err(|text::Unread| unread(key)),
                };
                item.and_then(&mut read).in_index(index).in_key(key)?;
            }
            return Ok(());
        }
        for (index, item) in self.list(key)?.iter().enumerate() {
            Fields::of(item).and_then(&mut read).in_index(index).in_key(key)?;
        }
        Ok(())
    }

    /// The string at `key`.
    pub(super) fn str(&self, key: &str) -> Result<Option<&'a str>> {
        match self.found(key) {
            None => Ok(None),
            Some(Found::Tree(Value::String(s))) => Ok(Some(s)),
            Some(Found::Tree(other)) => Err(expected("a string", other).under_key(key)),
            Some(Found::Text(text)) => text::plain_str(text)
                .map(Some)
                .map_err(|text::Unread| unread(key)),
        }
    }

    /// The string at `key`, absent when missing or empty (Go's zero value).
    pub(super) fn non_empty(&self, key: &str) -> Result<Option<&'a str>> {
        Ok(self.str(key)?.filter(|s| !s.is_empty()))
    }

    /// The non-empty string at `key`, or `Required value`.
    pub(super) fn required_str(&self, key: &str) -> Result<&'a str> {
        self.non_empty(key)?.ok_or_else(|| ProjectError::required(key))
    }

    /// The integer at `key`.
    pub(super) fn int(&self, key: &str) -> Result<Option<i64>> {
        match self.found(key) {
            None => Ok(None),
            Some(Found::Tree(value)) => value
                .as_i64()
                .map(Some)
                .ok_or_else(|| expected("an integer", value).under_key(key)),
            Some(Found::Text(text)) => text::int(text).map(Some).map_err(|text::Unread| unread(key)),
        }
    }

    /// The boolean at `key`.
    pub(super) fn bool(&self, key: &str) -> Result<Option<bool>> {
        match self.found(key) {
            None => Ok(None),
            Some(Found::Tree(Value::Bool(b))) => Ok(Some(*b)),
            Some(Found::Tree(other)) => Err(expected("a boolean", other).under_key(key)),
            Some(Found::Text(text)) => text::bool(text).map(Some).map_err(|text::Unread| unread(key)),
        }
    }

    /// An int-or-string that must be an integer or a percentage (`25%`), as Kubernetes'
    /// `GetScaledValueFromIntOrPercent` reads it.
    pub(super) fn int_or_percent(&self, key: &str) -> Result<Option<IntOrPercent>> {
        let value = match self.found(key) {
            None => return Ok(None),
            Some(Found::Tree(value)) => value,
            Some(Found::Text(text)) => {
                let percent = text::plain_str(text).ok().and_then(percentage);
                return match (text::int(text), percent) {
                    (Ok(int), _) => Ok(Some(IntOrPercent::Int(int))),
                    (Err(_), Some(percent)) => Ok(Some(IntOrPercent::Percent(percent))),
                    _ => Err(unread(key)),
                };
            }
        };
        let percent = value.as_str().and_then(percentage);
        match (value.as_i64(), percent) {
            (Some(int), _) => Ok(Some(IntOrPercent::Int(int))),
            (None, Some(percent)) => Ok(Some(IntOrPercent::Percent(percent))),
            _ => Err(expected("an integer or a percentage such as \"25%\"", value).under_key(key)),
        }
    }

    /// The list at `key` (empty when absent); read from text, an [`unread`] error.
    pub(super) fn list(&self, key: &str) -> Result<&'a [Value]> {
        match self.found(key) {
            None => Ok(&[]),
            Some(Found::Tree(Value::Array(items))) => Ok(items),
            Some(Found::Tree(other)) => Err(expected("a list", other).under_key(key)),
            Some(Found::Text(_)) => Err(unread(key)),
        }
    }

    /// The list of strings at `key` (empty when absent).
    pub(super) fn strings(&self, key: &str) -> Result<Vec<&'a str>> {
        if let Source::Text(object) = self.source {
            let Some(list) = object.value(key) else {
                return Ok(Vec::new());
            };
            let items = text::elements(list).map_err(|text::Unread| unread(key))?;
            return items
                .into_iter()
                .map(|item| text::plain_str(item).map_err(|text::Unread| unread(key)))
                .collect();
        }
        let items = self.list(key)?;
        let mut strings = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match item {
                Value::String(s) => strings.push(s.as_str()),
                other => return Err(expected("a string", other).under_index(index).under_key(key)),
            }
        }
        Ok(strings)
    }

    /// The keys of the mapping at `key` (values are not looked at); read from text, an
    /// [`unread`] error.
    pub(super) fn keys(&self, key: &str) -> Result<impl Iterator<Item = &'a str> + use<'a>> {
        let map = match self.obj(key)?.source {
            Source::Tree(map) => Some(map),
            Source::Absent => None,
            Source::Text(_) => return Err(unread(key)),
        };
        Ok(map.into_iter().flat_map(|m| m.keys().map(String::as_str)))
    }

    /// The string-to-string mapping at `key` (labels, selectors), sorted and interned.
    pub(super) fn labels(&self, key: &str, model: &mut ClusterModel) -> Result<Labels> {
        let map = match self.found(key) {
            None => return Ok(labels_from(model, [])),
            Some(Found::Text(object)) => {
                let members = text::members(object).map_err(|text::Unread| unread(key))?;
                let mut pairs = Vec::with_capacity(members.len());
                for (k, v) in members {
                    pairs.push((k, text::plain_str(v).map_err(|text::Unread| unread(key))?));
                }
                return Ok(labels_from(model, pairs));
            }
            Some(Found::Tree(Value::Object(map))) => map,
            Some(Found::Tree(other)) => return Err(expected("a mapping", other).under_key(key)),
        };
        let mut pairs = Vec::with_capacity(map.len());
        for (k, v) in map {
            match v {
                Value::String(s) => pairs.push((k.as_str(), s.as_str())),
                other => return Err(expected("a string", other).under_key(k).under_key(key)),
            }
        }
        Ok(labels_from(model, pairs))
    }
}

/// The whole percent of a string such as `25%`.
fn percentage(text: &str) -> Option<i64> {
    text.strip_suffix('%')?.parse().ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn errors_name_the_field() {
        let value = json!({"spec": {"ports": [{"port": 80}, {"port": "http"}]}});
        let root = Fields::of(&value).unwrap();
        let error = root
            .nested("spec", |spec| {
                spec.each("ports", |port| port.int("port").map(drop))
            })
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "spec.ports[1].port: expected an integer, found \"http\""
        );
    }

    #[test]
    fn int_or_percent() {
        let value = json!({"a": 3, "b": "25%", "c": "3", "d": "x%"});
        let fields = Fields::of(&value).unwrap();
        assert_eq!(fields.int_or_percent("a").unwrap(), Some(IntOrPercent::Int(3)));
        assert_eq!(
            fields.int_or_percent("b").unwrap(),
            Some(IntOrPercent::Percent(25))
        );
        assert_eq!(fields.int_or_percent("z").unwrap(), None);
        assert_eq!(
            fields.int_or_percent("c").unwrap_err().to_string(),
            "c: expected an integer or a percentage such as \"25%\", found \"3\""
        );
        assert!(fields.int_or_percent("d").is_err());
    }

    #[test]
    fn null_reads_as_absent() {
        let value = json!({"a": null});
        let fields = Fields::of(&value).unwrap();
        assert_eq!(fields.str("a").unwrap(), None);
        assert!(fields.list("a").unwrap().is_empty());
    }
}
