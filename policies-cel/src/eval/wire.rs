//! A request's object as it came on the wire: its JSON text, kept as received and parsed into a
//! tree only when something reads the whole of it (the estimate's projection, an object selector,
//! a CEL expression over `object`). Readers of a field or two (a pod template to compare, an
//! escape-hatch annotation) find it in the text instead. Most requests a policy set judges never
//! need the whole object: parsing it up front was most of the cost of reading an AdmissionReview.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::OnceLock;

use serde_json::Value as Json;
use serde_json::value::RawValue;

use crate::eval::json_text;

/// A value found in an object ([`WireObject::at`]): in its tree, or as text.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Found<'a> {
    Tree(&'a Json),
    Text(&'a str),
}

impl Found<'_> {
    /// Whether the value equals `other` (text is compared as it is read, not parsed first).
    pub fn equals(self, other: &Json) -> bool {
        match self {
            Self::Tree(tree) => tree == other,
            Self::Text(text) => json_text::equals(text, other),
        }
    }
}

/// One object of a request (`object` or `oldObject`), absent when the review has none or null.
#[derive(Debug, Clone, Default)]
pub(crate) struct WireObject {
    /// The text as received; `None` when the tree was given instead (or nothing).
    text: Option<Box<RawValue>>,
    tree: OnceLock<Option<Json>>,
    /// Where `metadata.annotations` is in the text, once looked for.
    annotations: OnceLock<Option<Range<usize>>>,
}

impl WireObject {
    /// No object.
    pub fn absent() -> Self {
        Self::default()
    }

    /// An object received as text (JSON `null` reads as absent).
    pub fn from_text(text: Box<RawValue>) -> Self {
        if text.get().trim() == "null" {
            return Self::absent();
        }
        Self {
            text: Some(text),
            ..Self::default()
        }
    }

    /// An object already parsed (`None` or JSON `null`: absent).
    pub fn from_tree(tree: Option<Json>) -> Self {
        Self {
            tree: OnceLock::from(tree.filter(|json| !json.is_null())),
            ..Self::default()
        }
    }

    /// Whether the request has this object.
    pub fn is_present(&self) -> bool {
        self.text.is_some() || self.tree.get().is_some_and(Option::is_some)
    }

    /// The object as a JSON tree, parsed on first read. The text was read as valid JSON when
    /// the review was, so parsing it again cannot fail.
    pub fn json(&self) -> Option<&Json> {
        self.tree
            .get_or_init(|| {
                self.text
                    .as_deref()
                    .and_then(|text| serde_json::from_str(text.get()).ok())
            })
            .as_ref()
    }

    /// The value at `path` (object keys from the root): from the tree when the object has been
    /// parsed, else found in the text without parsing the rest of it.
    pub fn at(&self, path: &[&str]) -> Option<Found<'_>> {
        match (self.tree.get(), &self.text) {
            (Some(tree), _) => tree
                .as_ref()
                .and_then(|tree| crate::impact::field(tree, path))
                .map(Found::Tree),
            (None, Some(text)) => json_text::find(text.get(), path).map(Found::Text),
            (None, None) => None,
        }
    }

    /// Whether the text has been parsed into a tree yet (tests: what reads an object).
    #[cfg(test)]
    pub fn is_parsed(&self) -> bool {
        self.tree.get().is_some()
    }

    /// `metadata.labels` (string values only), empty without an object.
    pub fn labels(&self) -> BTreeMap<String, String> {
        self.json()
            .map(crate::eval::selector::labels_of)
            .unwrap_or_default()
    }

    /// The value of annotation `key` in `metadata.annotations`, when it is a string. Until
    /// something parses the object, annotations are read from its text, whose annotations are
    /// found once however many keys are asked for.
    pub fn annotation(&self, key: &str) -> Option<Cow<'_, str>> {
        const ANNOTATIONS: &[&str] = &["metadata", "annotations"];
        if let Some(tree) = self.tree.get() {
            let value = crate::impact::field(tree.as_ref()?, ANNOTATIONS)?.get(key)?;
            return value.as_str().map(Cow::Borrowed);
        }
        let text = self.text.as_deref()?.get();
        let annotations = self
            .annotations
            .get_or_init(|| json_text::find_range(text, ANNOTATIONS))
            .clone()
            .and_then(|range| text.get(range))?;
        json_text::as_str(json_text::find(annotations, &[key])?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn text_is_parsed_on_first_read_and_null_is_absent() {
        let object = WireObject::from_text(text(
            r#"{"metadata": {"labels": {"app": "db", "n": 1}, "annotations": {"a": "why"}}}"#,
        ));
        assert!(object.is_present());
        assert!(object.tree.get().is_none(), "not parsed before a read");
        assert_eq!(object.annotation("a").as_deref(), Some("why"));
        assert_eq!(object.annotation("b"), None);
        assert!(object.tree.get().is_none(), "annotations are read from the text");
        assert_eq!(object.labels(), BTreeMap::from([("app".into(), "db".into())]));
        assert!(object.is_parsed());
        assert_eq!(
            object.annotation("a").as_deref(),
            Some("why"),
            "and from the tree"
        );

        for absent in [
            WireObject::from_text(text("null")),
            WireObject::from_tree(Some(Json::Null)),
        ] {
            assert!(!absent.is_present());
            assert_eq!(absent.json(), None);
            assert!(absent.labels().is_empty());
        }
        let tree = WireObject::from_tree(Some(json!({"kind": "Pod"})));
        assert!(tree.is_present());
        assert_eq!(tree.json(), Some(&json!({"kind": "Pod"})));
    }
}
