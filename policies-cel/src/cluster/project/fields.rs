//! Reading the fields of a Kubernetes object as JSON, with errors that name the field.
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

/// A JSON object being read (an absent one reads as empty).
#[derive(Debug, Clone, Copy)]
pub(super) struct Fields<'a> {
    map: Option<&'a Map<String, Value>>,
}

impl<'a> Fields<'a> {
    /// `value` as an object; `null` is an empty one.
    pub(super) fn of(value: &'a Value) -> Result<Self> {
        match value {
            Value::Object(map) => Ok(Self { map: Some(map) }),
            Value::Null => Ok(Self { map: None }),
            other => Err(expected("a mapping", other)),
        }
    }

    /// The field `key`, unless absent or `null`.
    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map?.get(key).filter(|v| !v.is_null())
    }

    /// The object at `key` (empty when absent).
    pub(super) fn obj(&self, key: &str) -> Result<Fields<'a>> {
        match self.get(key) {
            Some(value) => Fields::of(value).in_key(key),
            None => Ok(Fields { map: None }),
        }
    }

    /// Reads the object at `key` with `read`; its errors are placed under `key`.
    pub(super) fn nested<T>(&self, key: &str, read: impl FnOnce(Fields<'a>) -> Result<T>) -> Result<T> {
        read(self.obj(key)?).in_key(key)
    }

    /// Reads every object of the list at `key` with `read`; errors name the item.
    pub(super) fn each(&self, key: &str, mut read: impl FnMut(Fields<'a>) -> Result<()>) -> Result<()> {
        for (index, item) in self.list(key)?.iter().enumerate() {
            Fields::of(item).and_then(&mut read).in_index(index).in_key(key)?;
        }
        Ok(())
    }

    /// The string at `key`.
    pub(super) fn str(&self, key: &str) -> Result<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(expected("a string", other).under_key(key)),
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
        match self.get(key) {
            None => Ok(None),
            Some(value) => value
                .as_i64()
                .map(Some)
                .ok_or_else(|| expected("an integer", value).under_key(key)),
        }
    }

    /// The boolean at `key`.
    pub(super) fn bool(&self, key: &str) -> Result<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(expected("a boolean", other).under_key(key)),
        }
    }

    /// An int-or-string that must be an integer or a percentage (`25%`), as Kubernetes'
    /// `GetScaledValueFromIntOrPercent` reads it.
    pub(super) fn int_or_percent(&self, key: &str) -> Result<Option<IntOrPercent>> {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        let percent = value
            .as_str()
            .and_then(|s| s.strip_suffix('%'))
            .and_then(|digits| digits.parse::<i64>().ok());
        match (value.as_i64(), percent) {
            (Some(int), _) => Ok(Some(IntOrPercent::Int(int))),
            (None, Some(percent)) => Ok(Some(IntOrPercent::Percent(percent))),
            _ => Err(expected("an integer or a percentage such as \"25%\"", value).under_key(key)),
        }
    }

    /// The list at `key` (empty when absent).
    pub(super) fn list(&self, key: &str) -> Result<&'a [Value]> {
        match self.get(key) {
            None => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(expected("a list", other).under_key(key)),
        }
    }

    /// The list of strings at `key` (empty when absent).
    pub(super) fn strings(&self, key: &str) -> Result<Vec<&'a str>> {
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

    /// The keys of the mapping at `key` (values are not looked at).
    pub(super) fn keys(&self, key: &str) -> Result<impl Iterator<Item = &'a str> + use<'a>> {
        let map = self.obj(key)?.map;
        Ok(map.into_iter().flat_map(|m| m.keys().map(String::as_str)))
    }

    /// The string-to-string mapping at `key` (labels, selectors), sorted and interned.
    pub(super) fn labels(&self, key: &str, model: &mut ClusterModel) -> Result<Labels> {
        let Some(map) = self.obj(key)?.map else {
            return Ok(labels_from(model, []));
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
