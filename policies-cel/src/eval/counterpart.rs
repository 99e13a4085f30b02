//! The other object of an UPDATE, already checked, as a reference for the one being read: an
//! UPDATE's `object` and `oldObject` are mostly the same bytes (kube-apiserver serializes both
//! alike), and a value whose bytes are those of a value the check passed is valid as well: a
//! JSON object, array or string ends where its own bytes say, whatever follows, at the same
//! depth; so is a member (key, colon, value) whose bytes are a checked member's, when its value
//! is delimited so or by the byte after it. The one-pass review reader
//! ([`wire_review`](super::wire_review)) passes such a top-level value, or such a member of a
//! top-level object, with one comparison of bytes instead of checking it again, and takes its
//! outline from the counterpart's.
//!
//! Counterparts are looked for in the same place (the same key at the same position among its
//! siblings, as the API server writes both objects): a field moved elsewhere is simply checked.

use crate::eval::outline::{Field, Outline};

/// The counterpart object: its text, checked, and its outline (nested two levels).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counterpart<'r> {
    text: &'r str,
    outline: &'r Outline,
}

/// The counterpart of a top-level field: the field and its own fields.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TopField<'r> {
    field: &'r Field,
    children: &'r [Field],
}

impl<'r> Counterpart<'r> {
    /// The counterpart of an object whose text and nested outline are these.
    pub(crate) fn new(text: &'r str, outline: &'r Outline) -> Option<Self> {
        outline.nests().then_some(Self { text, outline })
    }

    /// The counterpart of the `index`-th top-level field, whose key is `key` as written: the
    /// counterpart's `index`-th, when its key is written alike.
    pub(crate) fn top(&self, index: usize, key: &[u8]) -> Option<TopField<'r>> {
        let place = self.outline.top_place(index)?;
        let field = self.outline.field_at(place)?;
        self.key_is(field, key).then(|| TopField {
            field,
            children: self.outline.children(place),
        })
    }

    /// How long the value at `at` in `bytes` is when it starts with the bytes of `field`'s value
    /// and that value is an object, an array or a string (a number or a literal is not
    /// delimited by its own bytes: `1` starts `12`).
    fn same_value(&self, field: &Field, bytes: &[u8], at: usize) -> Option<usize> {
        let value = self.text.as_bytes().get(field.value.clone())?;
        let delimited = matches!(value.first(), Some(b'{' | b'[' | b'"'));
        (delimited && bytes.get(at..)?.starts_with(value)).then_some(value.len())
    }

    /// The same for the value of the counterpart's top-level field `top`.
    pub(crate) fn same_top_value(&self, top: TopField<'r>, bytes: &[u8], at: usize) -> Option<usize> {
        self.same_value(top.field, bytes, at)
    }

    /// How long the member (key, colon and value) at `at` in `bytes` is when it is `field`'s
    /// byte for byte: a member ends with its value, which is delimited by its own bytes or, a
    /// number or a literal, by the byte after it (`1` followed by `2`, `.` or `e` goes on).
    pub(crate) fn same_member(&self, field: &Field, bytes: &[u8], at: usize) -> Option<usize> {
        let member = self
            .text
            .as_bytes()
            .get(field.key.start.checked_sub(1)?..field.value.end)?;
        let value = self.text.as_bytes().get(field.value.clone())?;
        if !bytes.get(at..)?.starts_with(member) {
            return None;
        }
        let delimited = matches!(value.first(), Some(b'{' | b'[' | b'"'))
            || !bytes
                .get(at + member.len())
                .is_some_and(|next| matches!(next, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-'));
        delimited.then_some(member.len())
    }

    /// The counterpart `field` placed as it is in an identical member starting at `at` (its
    /// key's opening quote), under the field at `parent`, for a text starting at `start`.
    pub(crate) fn member_at(field: &Field, at: usize, start: usize, parent: usize) -> Field {
        placed(field, field.key.start.saturating_sub(1), at - start, parent)
    }

    /// Whether `field`'s key is written as `key`.
    fn key_is(&self, field: &Field, key: &[u8]) -> bool {
        self.text.as_bytes().get(field.key.clone()) == Some(key)
    }
}

impl<'r> TopField<'r> {
    /// Its own fields, in order.
    pub(crate) fn children(self) -> &'r [Field] {
        self.children
    }

    /// Its own fields, placed as they are in an identical value whose text starts at
    /// `value_start`, under the field at `parent`.
    pub(crate) fn children_at(self, value_start: usize, parent: usize) -> impl Iterator<Item = Field> + 'r {
        let from = self.field.value.start;
        self.children
            .iter()
            .map(move |field| placed(field, from, value_start, parent))
    }
}

/// The counterpart's `field`, its places moved from where `from` stands in the counterpart to
/// `to` in the object read, under the field at `parent`.
fn placed(field: &Field, from: usize, to: usize, parent: usize) -> Field {
    let moved = |at: usize| at.saturating_sub(from) + to;
    Field {
        parent: Some(parent),
        key: moved(field.key.start)..moved(field.key.end),
        escaped: field.escaped,
        value: moved(field.value.start)..moved(field.value.end),
    }
}
