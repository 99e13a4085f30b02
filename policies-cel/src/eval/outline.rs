//! An outline of an object's JSON text: where each of its fields is, and each field of those
//! that are objects (`metadata.annotations`, `spec.template`, `status.replicas`...), found in
//! one pass over the text. Readers of a request's objects ask for a few fields each (the
//! estimate compares pod templates and projects the new spec, the escape hatch reads an
//! annotation): with the outline each read goes straight to its field instead of passing over
//! the whole text again, and nothing is parsed that no one reads.
//!
//! A repeated key keeps its last value, as in `serde_json::Value`.

use std::ops::Range;

use crate::eval::json_text::{self, RawKey, Scan};

/// Where an object's fields, and their fields, are in its text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Outline {
    fields: Vec<Field>,
    /// Whether the fields of top-level objects are outlined too.
    nested: bool,
    /// With `nested`: the places of the top-level fields in `fields`, in order.
    top: Vec<u32>,
}

/// One field of the object, or of one of its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    /// The top-level field this one is in (its place in `fields`); `None` at the top level.
    pub parent: Option<usize>,
    /// The key between its quotes, escapes as written.
    pub key: Range<usize>,
    /// Whether the key holds an escape (else its bytes are its name).
    pub escaped: bool,
    /// The value's text.
    pub value: Range<usize>,
}

impl Outline {
    /// The outline of `text`, a JSON document already read as valid; an empty outline when it
    /// is not an object. Text that is not valid JSON gives a wrong outline, never a panic.
    pub(crate) fn of(text: &str) -> Self {
        Self::outlined(text, true)
    }

    /// The outline of `text`'s top-level fields alone, for a reader that never looks deeper (a
    /// field below them is then found by passing over its parent's text).
    pub(crate) fn top_level(text: &str) -> Self {
        Self::outlined(text, false)
    }

    /// The top-level outline of a text whose fields' places are known already (a reader that
    /// wrote the text field by field): each field's key (between its quotes) and value, in the
    /// order they stand, none with a parent.
    pub(crate) fn of_top_level_fields(fields: Vec<Field>) -> Self {
        Self {
            fields,
            nested: false,
            top: Vec::new(),
        }
    }

    /// The outline of an object's text from its fields found by another reader, in the order
    /// they stand, each top-level field followed by its own fields when its value is an object
    /// (as [`Outline::of`] finds them).
    pub(crate) fn of_fields(fields: Vec<Field>) -> Self {
        Self::nested(fields)
    }

    fn outlined(text: &str, nested: bool) -> Self {
        let mut fields = Vec::with_capacity(if nested { 48 } else { 16 });
        let mut scan = Scan::new(text);
        let _ = scan.members(|scan, key| {
            let parent = fields.len();
            fields.push(Field {
                parent: None,
                key: range_of(key),
                escaped: key.has_escape(),
                value: 0..0,
            });
            // (Past the white space before the value, where its range starts.)
            let is_object = scan.at_object() && nested;
            let start = scan.position();
            if is_object {
                let _ = scan.members(|scan, key| {
                    let value = scan.value();
                    fields.push(Field {
                        parent: Some(parent),
                        key: range_of(key),
                        escaped: key.has_escape(),
                        value,
                    });
                });
            } else {
                scan.value();
            }
            if let Some(field) = fields.get_mut(parent) {
                field.value = start..scan.position();
            }
        });
        if nested {
            Self::nested(fields)
        } else {
            Self {
                fields,
                nested,
                top: Vec::new(),
            }
        }
    }

    /// The outline of nested `fields`, its top-level fields' places noted.
    fn nested(fields: Vec<Field>) -> Self {
        let top = fields
            .iter()
            .enumerate()
            .filter(|(_, field)| field.parent.is_none())
            .filter_map(|(index, _)| u32::try_from(index).ok())
            .collect();
        Self {
            fields,
            nested: true,
            top,
        }
    }

    /// Where the value at `path` (object keys from the root) is in `text`, the text outlined.
    pub(crate) fn find(&self, text: &str, path: &[&str]) -> Option<Range<usize>> {
        match path {
            [] => json_text::find_range(text, path),
            [key] => self.last(text, None, key).map(|f| f.value.clone()),
            [key, rest @ ..] if !self.nested => {
                let value = self.last(text, None, key)?.value.clone();
                let found = json_text::find_range(text.get(value.clone())?, rest)?;
                Some(value.start + found.start..value.start + found.end)
            }
            [key, below, rest @ ..] => {
                // A top-level value that is not an object has no fields outlined, nor any to find.
                let top = self.index_of(text, None, key)?;
                let value = self.last(text, Some(top), below)?.value.clone();
                if rest.is_empty() {
                    return Some(value);
                }
                let found = json_text::find_range(text.get(value.clone())?, rest)?;
                Some(value.start + found.start..value.start + found.end)
            }
        }
    }

    /// The last field named `key` in `parent` (the top level when `None`): its place, for
    /// [`Outline::field`] below it, and its value's text range. Below a top-level field only when
    /// the fields of top-level objects are outlined ([`Outline::nests`]).
    pub(crate) fn field(
        &self,
        text: &str,
        parent: Option<usize>,
        key: &str,
    ) -> Option<(usize, Range<usize>)> {
        if parent.is_some() && !self.nested {
            return None;
        }
        let index = self.index_of(text, parent, key)?;
        Some((index, self.fields.get(index)?.value.clone()))
    }

    /// Whether the fields of top-level objects are outlined too.
    pub(crate) fn nests(&self) -> bool {
        self.nested
    }

    /// The place of the `index`-th top-level field of a nested outline.
    pub(crate) fn top_place(&self, index: usize) -> Option<usize> {
        self.top.get(index).and_then(|&place| usize::try_from(place).ok())
    }

    /// The field at `place`.
    pub(crate) fn field_at(&self, place: usize) -> Option<&Field> {
        self.fields.get(place)
    }

    /// The fields of the top-level field at `place`, in the order they stand: up to the next
    /// top-level field; none when `place` is not a top-level field of a nested outline.
    pub(crate) fn children(&self, place: usize) -> &[Field] {
        let end = u32::try_from(place)
            .ok()
            .and_then(|place| self.top.binary_search(&place).ok())
            .map(|index| {
                self.top
                    .get(index + 1)
                    .map_or(self.fields.len(), |&next| next as usize)
            });
        end.and_then(|end| self.fields.get(place + 1..end))
            .unwrap_or_default()
    }

    /// The last field named `key` in `parent`.
    fn last(&self, text: &str, parent: Option<usize>, key: &str) -> Option<&Field> {
        self.index_of(text, parent, key)
            .and_then(|index| self.fields.get(index))
    }

    /// The place of the last field named `key` in `parent`.
    fn index_of(&self, text: &str, parent: Option<usize>, key: &str) -> Option<usize> {
        let is_key = |field: &Field| key_is(text, field, key);
        match parent {
            // A top-level field's own fields follow it, in the order they stand.
            Some(place) => self
                .children(place)
                .iter()
                .rposition(is_key)
                .map(|index| place + 1 + index),
            None if self.nested => self.top.iter().rev().find_map(|&place| {
                let place = usize::try_from(place).ok()?;
                is_key(self.fields.get(place)?).then_some(place)
            }),
            None => self.fields.iter().rposition(is_key),
        }
    }
}

/// Whether `field`'s key is `key`.
fn key_is(text: &str, field: &Field, key: &str) -> bool {
    json_text::written_key_is(text, field.key.clone(), field.escaped, key)
}

/// Where a key's text is.
fn range_of(key: RawKey<'_>) -> Range<usize> {
    key.start..key.start + key.raw.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value as Json;

    /// What the outline finds is what a pass over the whole text finds.
    fn same_as_a_pass(text: &str, path: &[&str]) {
        let outlined = Outline::of(text).find(text, path).and_then(|r| text.get(r));
        assert_eq!(outlined, json_text::find(text, path), "{path:?} in {text}");
    }

    #[test]
    fn fields_are_found_at_any_depth_and_the_last_of_a_repeated_key_counts() {
        let text = r#"{"metadata": {"name": "a", "annotations": {"k": "v"}, "name": "b"},
            "spec": {"template": {"spec": {"x": [1]}}, "n": 1}, "spec": {"n": 2, "t\u0065mplate": 3},
            "status": "ok", "list": [{"a": 1}], "x\"y": {"z": null}}"#;
        for path in [
            &[][..],
            &["metadata"],
            &["metadata", "name"],
            &["metadata", "annotations", "k"],
            &["spec", "n"],
            &["spec", "template"],
            &["spec", "template", "spec"],
            &["status"],
            &["status", "x"],
            &["list", "a"],
            &["x\"y", "z"],
            &["missing"],
            &["metadata", "missing", "deeper"],
        ] {
            same_as_a_pass(text, path);
        }
        let outline = Outline::of(text);
        assert_eq!(
            outline
                .find(text, &["spec", "template"])
                .and_then(|r| text.get(r)),
            Some("3")
        );
        assert_eq!(
            outline
                .find(text, &["metadata", "name"])
                .and_then(|r| text.get(r)),
            Some("\"b\"")
        );
        same_as_a_pass(" {\"a\": 1} \n", &[]);
        for not_an_object in ["[1, 2]", "\"s\"", "3", ""] {
            assert_eq!(Outline::of(not_an_object).find(not_an_object, &["a"]), None);
        }
    }

    /// Every path into every object of every recorded review, and the tree a workload's spec
    /// reader takes: as a pass over the whole text finds them and as the parsed tree has them.
    #[test]
    fn recorded_objects_are_outlined_as_they_are_read() {
        let mut checked = 0;
        for (_, text) in crate::eval::review::tests::recorded_reviews() {
            let review: Json = serde_json::from_slice(&text).unwrap();
            for key in ["object", "oldObject"] {
                let Some(object) = review["request"].get(key).filter(|o| o.is_object()) else {
                    continue;
                };
                for text in [object.to_string(), serde_json::to_string_pretty(object).unwrap()] {
                    let top_level = Outline::top_level(&text);
                    for path in &json_text::tests::every_path(object) {
                        same_as_a_pass(&text, path);
                        assert_eq!(
                            top_level.find(&text, path),
                            json_text::find_range(&text, path),
                            "{path:?} through the top-level outline"
                        );
                        checked += 1;
                    }
                }
            }
        }
        let floor = if crate::eval::review::tests::shared_reviews_present() {
            1000
        } else {
            600
        };
        assert!(checked > floor, "only {checked} paths checked");
    }
}
