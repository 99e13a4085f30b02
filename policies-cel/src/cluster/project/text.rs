//! An object read from its JSON text instead of a parsed tree: the value at a key found through
//! the object's outline (its top level and its top-level objects' fields) or by passing over a
//! smaller object's text, and scalars read straight from their text.
//!
//! The estimate of a workload UPDATE projects the request's new spec ([`super::project_spec_text`]):
//! read this way nothing but the fields the projection asks for is looked at, and nothing is
//! allocated for the rest (a tree of the object, even without its pod template, cost more than
//! the projection). The text was checked as JSON when the review was read. Only plain values
//! are read here: a string with an escape, a number that is not a plain integer, a repeated
//! label key are [`Unread`], and the caller projects the parsed tree instead, whose reading (and
//! whose errors) are the reference.

use std::ops::Range;

use crate::eval::json_text::{RawKey, Scan, written_key_is};
use crate::eval::outline::Outline;

/// A value this reading leaves to the parsed tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Unread;

/// An object's text, with where its fields are when it is outlined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum TextObject<'a> {
    /// An outlined object's top level (`parent: None`), or the object of one of its top-level
    /// fields (`Some(place)`, when the outline holds that object's fields).
    Outlined {
        text: &'a str,
        outline: &'a Outline,
        parent: Option<usize>,
    },
    /// An object's text alone: a field is found by passing over it.
    Plain(&'a str),
    /// A small object's text with where its members are, found in one pass when it was reached
    /// (a strategy, a selector, a claim template): each field read of it is a look-up.
    Small { text: &'a str, members: Members },
}

/// At most this many members are placed in a [`TextObject::Small`]; a larger object is read
/// by passing over it.
const SMALL: usize = 6;

/// Where a small object's members are in its text (offsets that fit a `u16`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct Members {
    len: u8,
    places: [Member; SMALL],
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Member {
    /// Between the key's quotes, escapes as written.
    key: (u16, u16),
    escaped: bool,
    value: (u16, u16),
}

impl Members {
    /// The members of the object `text`, when it is one of at most [`SMALL`] members.
    fn of(text: &str) -> Option<Self> {
        u16::try_from(text.len()).ok()?;
        let mut members = Self::default();
        let mut fits = true;
        let mut scan = Scan::new(text);
        scan.members(|scan, key| {
            let value = scan.value();
            let place = members.places.get_mut(usize::from(members.len));
            match place {
                Some(place) if fits => {
                    // Offsets within a text shorter than `u16::MAX`.
                    let at = |n: usize| n as u16;
                    *place = Member {
                        key: (at(key.start), at(key.start + key.raw.len())),
                        escaped: key.has_escape(),
                        value: (at(value.start), at(value.end)),
                    };
                    members.len += 1;
                }
                _ => fits = false,
            }
        })?;
        fits.then_some(members)
    }

    /// The text of the value of the last member named `key`.
    fn value<'t>(&self, text: &'t str, key: &str) -> Option<&'t str> {
        let members = self.places.get(..usize::from(self.len))?;
        let member = members.iter().rev().find(|member| {
            let written = usize::from(member.key.0)..usize::from(member.key.1);
            written_key_is(text, written, member.escaped, key)
        })?;
        text.get(usize::from(member.value.0)..usize::from(member.value.1))
    }
}

impl<'a> TextObject<'a> {
    /// The text of the value at `key` (the last, when the key is repeated); `None` when it is
    /// absent or `null`, as a tree reader takes both.
    pub(super) fn value(&self, key: &str) -> Option<&'a str> {
        let text = match *self {
            Self::Outlined {
                text,
                outline,
                parent,
            } => {
                let (_, range) = outline.field(text, parent, key)?;
                text.get(range)?
            }
            Self::Plain(text) => text.get(value_range(text, key)?)?,
            Self::Small { text, members } => members.value(text, key)?,
        };
        (text != "null").then_some(text)
    }

    /// The object at `key`: `Ok(None)` when absent or `null`, [`Unread`] when it is something
    /// else than an object.
    pub(super) fn object(&self, key: &str) -> Result<Option<TextObject<'a>>, Unread> {
        if let Self::Outlined {
            text,
            outline,
            parent: None,
        } = *self
            && outline.nests()
        {
            let Some((place, range)) = outline.field(text, None, key) else {
                return Ok(None);
            };
            let value = text.get(range).ok_or(Unread)?;
            return match value.as_bytes().first() {
                Some(b'{') => Ok(Some(Self::Outlined {
                    text,
                    outline,
                    parent: Some(place),
                })),
                _ if value == "null" => Ok(None),
                _ => Err(Unread),
            };
        }
        self.value(key).map(object_of).transpose()
    }
}

/// `text` as an object: [`Unread`] when it is not one.
pub(super) fn object_of(text: &str) -> Result<TextObject<'_>, Unread> {
    if !text.starts_with('{') {
        return Err(Unread);
    }
    Ok(match Members::of(text) {
        Some(members) => TextObject::Small { text, members },
        None => TextObject::Plain(text),
    })
}

/// Where the value at `key` is in the object `text`.
fn value_range(text: &str, key: &str) -> Option<Range<usize>> {
    crate::eval::json_text::find_range(text, &[key])
}

/// The string `text` holds, when it is one without escapes.
pub(super) fn plain_str(text: &str) -> Result<&str, Unread> {
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or(Unread)?;
    if inner.bytes().any(|b| b == b'\\') {
        return Err(Unread);
    }
    Ok(inner)
}

/// The integer `text` holds, when it is written as one (digits, perhaps a minus) and fits an
/// `i64` (`serde_json::Value::as_i64`'s integers; `1.0` or `1e3` are left to the tree, and so is
/// `-0`, which serde_json reads as a float).
pub(super) fn int(text: &str) -> Result<i64, Unread> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || text.starts_with("-0") {
        return Err(Unread);
    }
    text.parse().map_err(|_| Unread)
}

/// The boolean `text` holds.
pub(super) fn bool(text: &str) -> Result<bool, Unread> {
    match text {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(Unread),
    }
}

/// The elements' texts of the array `text`.
pub(super) fn elements(text: &str) -> Result<Vec<&str>, Unread> {
    let mut scan = Scan::new(text);
    let mut items = Vec::new();
    scan.elements(|scan| {
        let range = scan.value();
        items.push(range);
    })
    .ok_or(Unread)?;
    items
        .into_iter()
        .map(|range| text.get(range).ok_or(Unread))
        .collect()
}

/// The keys (without escapes) and values' texts of the object `text`; [`Unread`] for a
/// repeated key (a tree keeps the last; a reader of pairs would see both).
pub(super) fn members(text: &str) -> Result<Vec<(&str, &str)>, Unread> {
    let mut scan = Scan::new(text);
    let mut pairs: Vec<(RawKey<'_>, Range<usize>)> = Vec::new();
    scan.members(|scan, key| {
        let range = scan.value();
        pairs.push((key, range));
    })
    .ok_or(Unread)?;
    let mut members = Vec::with_capacity(pairs.len());
    for (key, range) in pairs {
        if key.raw.bytes().any(|b| b == b'\\') {
            return Err(Unread);
        }
        members.push((key.raw, text.get(range).ok_or(Unread)?));
    }
    let mut keys: Vec<&str> = members.iter().map(|(key, _)| *key).collect();
    keys.sort_unstable();
    if keys.windows(2).any(|pair| pair[0] == pair[1]) {
        return Err(Unread);
    }
    Ok(members)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_found_as_a_tree_reader_finds_them() {
        let text =
            r#"{"a": 1, "spec": {"n": 2, "o": {"x": "y"}, "n": 3}, "b": null, "a": "last", "\u0065": 5}"#;
        let small = object_of(text).unwrap();
        assert!(matches!(small, TextObject::Small { .. }), "{small:?}");
        let large = format!(r#"{{"x1": 1, "x2": 2, {}"#, &text[1..]);
        let large = object_of(&large).unwrap();
        assert!(
            matches!(large, TextObject::Plain(_)),
            "more members than a small object holds"
        );
        for object in [
            TextObject::Plain(text),
            small,
            large,
            TextObject::Outlined {
                text,
                outline: &Outline::of(text),
                parent: None,
            },
        ] {
            assert_eq!(
                object.value("a"),
                Some("\"last\""),
                "a repeated key keeps the last"
            );
            assert_eq!(object.value("b"), None, "null reads as absent");
            assert_eq!(object.value("c"), None);
            assert_eq!(object.value("e"), Some("5"), "an escaped key");
            let spec = object.object("spec").unwrap().unwrap();
            assert_eq!(spec.value("n"), Some("3"));
            let o = spec.object("o").unwrap().unwrap();
            assert_eq!(o.value("x"), Some("\"y\""));
            assert_eq!(object.object("a"), Err(Unread), "a string is not an object");
            assert!(object.object("b").unwrap().is_none());
        }
    }

    #[test]
    fn only_plain_values_are_read() {
        assert_eq!(plain_str(r#""abc""#), Ok("abc"));
        assert_eq!(plain_str(r#""a\u0062c""#), Err(Unread));
        assert_eq!(plain_str("3"), Err(Unread));
        assert_eq!(int("-12"), Ok(-12));
        assert_eq!(int("0"), Ok(0));
        assert_eq!(int("-9223372036854775808"), Ok(i64::MIN));
        for not_plain in ["1.0", "1e3", "-", "", "\"1\"", "9223372036854775808", "-0"] {
            assert_eq!(int(not_plain), Err(Unread), "{not_plain}");
        }
        assert_eq!(bool("true"), Ok(true));
        assert_eq!(bool("1"), Err(Unread));
        assert_eq!(
            elements(r#"[1, "a", {"b": [2]}]"#),
            Ok(vec!["1", "\"a\"", r#"{"b": [2]}"#])
        );
        assert_eq!(elements("[]"), Ok(vec![]));
        assert_eq!(elements("{}"), Err(Unread));
        assert_eq!(
            members(r#"{"a": "1", "b": 2}"#),
            Ok(vec![("a", "\"1\""), ("b", "2")])
        );
        assert_eq!(members(r#"{"a": 1, "a": 2}"#), Err(Unread), "a repeated key");
        assert_eq!(members(r#"{"\u0061": 1}"#), Err(Unread), "an escaped key");
        assert_eq!(members("[1]"), Err(Unread));
    }
}
