//! A request's object as it came on the wire: its JSON text, kept as received and parsed into a
//! tree only when something reads the whole of it (the estimate's projection, an object selector,
//! a CEL expression over `object`). Readers of a field or two (a pod template to compare, an
//! escape-hatch annotation) find it in the text instead, through the object's outline, and the
//! estimate of a workload UPDATE projects the new spec from it too. Most requests a policy set
//! judges never need the whole object: parsing it up front was most of the cost of reading an
//! AdmissionReview.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value as Json;

use crate::eval::json_text;
use crate::eval::outline::Outline;

/// A value found in an object ([`WireObject::at`]): in its tree, or as text.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Found<'a> {
    Tree(&'a Json),
    Text(&'a str),
}

impl Found<'_> {
    /// Whether the two values are equal. Equal text is equal without being parsed (the
    /// usual case: both objects of an UPDATE serialized by the API server alike); otherwise
    /// one side is parsed and the other compared with it as it is read.
    pub fn same_as(self, other: Found<'_>) -> bool {
        match (self, other) {
            (Self::Tree(a), Found::Tree(b)) => a == b,
            (Self::Tree(tree), Found::Text(text)) => json_text::equals(text, tree),
            (Self::Text(text), Found::Tree(tree)) => json_text::equals(text, tree),
            (Self::Text(a), Found::Text(b)) => {
                a == b || serde_json::from_str::<Json>(a).is_ok_and(|tree| json_text::equals(b, &tree))
            }
        }
    }
}

/// One object of a request (`object` or `oldObject`), absent when the review has none or null.
#[derive(Debug, Clone, Default)]
pub(crate) struct WireObject {
    /// The text as received; `None` when the tree was given instead (or nothing).
    text: Option<Box<str>>,
    tree: OnceLock<Option<Json>>,
    /// Where the text's fields are, outlined on the first read of a field.
    outline: OnceLock<Outline>,
}

impl WireObject {
    /// No object.
    pub fn absent() -> Self {
        Self::default()
    }

    /// An object received as text, outlined on its first read (JSON `null` reads as absent).
    #[cfg(test)]
    pub fn from_text(text: Box<str>) -> Self {
        if text.trim() == "null" {
            return Self::absent();
        }
        Self {
            text: Some(text),
            ..Self::default()
        }
    }

    /// An object's text, checked as valid JSON, with its outline ([`Outline::of`]'s).
    pub fn outlined(text: Box<str>, outline: Outline) -> Self {
        Self {
            text: Some(text),
            outline: OnceLock::from(outline),
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

    /// Whether the object is a JSON object (absent: no).
    pub fn is_object(&self) -> bool {
        match (self.tree.get(), &self.text) {
            (Some(tree), _) => tree.as_ref().is_some_and(Json::is_object),
            (None, Some(text)) => text.trim_start().starts_with('{'),
            (None, None) => false,
        }
    }

    /// The object as a JSON tree, parsed on first read. The text was read as valid JSON when
    /// the review was, and held nothing a parse refuses (`checked_json`), so parsing it again cannot
    /// fail.
    pub fn json(&self) -> Option<&Json> {
        self.tree
            .get_or_init(|| {
                self.text
                    .as_deref()
                    .and_then(|text| serde_json::from_str(text).ok())
            })
            .as_ref()
    }

    /// The object's text and its outline while nothing has parsed it: a reader of a few fields
    /// reads them there (`cluster::project_spec_text`); once the tree exists, it reads the tree.
    pub fn text_outlined(&self) -> Option<(&str, &Outline)> {
        if self.tree.get().is_some() {
            return None;
        }
        let text = self.text.as_deref()?;
        Some((text, self.outline(text)))
    }

    /// The object's text, when it came as text (tests).
    #[cfg(test)]
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// The outline of `text`, this object's text.
    pub(super) fn outline(&self, text: &str) -> &Outline {
        self.outline.get_or_init(|| Outline::of(text))
    }

    /// The value at `path` (object keys from the root): from the tree when the object has been
    /// parsed, else found in the text without parsing the rest of it.
    pub fn at(&self, path: &[&str]) -> Option<Found<'_>> {
        match (self.tree.get(), &self.text) {
            (Some(tree), _) => tree
                .as_ref()
                .and_then(|tree| crate::impact::field(tree, path))
                .map(Found::Tree),
            (None, Some(text)) => {
                let range = self.outline(text).find(text, path)?;
                text.get(range).map(Found::Text)
            }
            (None, None) => None,
        }
    }

    /// The string at `path`, when there is one.
    pub fn str_at(&self, path: &[&str]) -> Option<Cow<'_, str>> {
        match self.at(path)? {
            Found::Tree(json) => json.as_str().map(Cow::Borrowed),
            Found::Text(text) => serde_json::from_str::<String>(text).ok().map(Cow::Owned),
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
    /// something parses the object, annotations are read from its text, through its outline.
    pub fn annotation(&self, key: &str) -> Option<Cow<'_, str>> {
        const ANNOTATIONS: &[&str] = &["metadata", "annotations"];
        if let Some(tree) = self.tree.get() {
            let value = crate::impact::field(tree.as_ref()?, ANNOTATIONS)?.get(key)?;
            return value.as_str().map(Cow::Borrowed);
        }
        let Some(Found::Text(annotations)) = self.at(ANNOTATIONS) else {
            return None;
        };
        json_text::as_str(json_text::find(annotations, &[key])?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(s: &str) -> Box<str> {
        s.into()
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

    #[test]
    fn the_text_is_read_until_the_whole_tree_exists() {
        let object = WireObject::from_text(text(r#"{"metadata": {"name": "a"}, "spec": {"n": 1}}"#));
        let (read, outline) = object.text_outlined().unwrap();
        assert_eq!(
            outline.find(read, &["spec", "n"]).and_then(|r| read.get(r)),
            Some("1")
        );
        assert!(!object.is_parsed(), "reading the text parses nothing");
        object.json().unwrap();
        assert!(
            object.text_outlined().is_none(),
            "the tree is read once it exists"
        );
        assert!(WireObject::absent().text_outlined().is_none());
    }

    #[test]
    fn values_compare_alike_as_text_or_tree() {
        let tree = json!({"a": [1, {"b": "c"}]});
        let compact = r#"{"a":[1,{"b":"c"}]}"#;
        let cases = [
            (compact, true),
            (r#"{ "a" : [1, {"b": "\u0063"}] }"#, true),
            (r#"{"a":[1,{"b":"d"}]}"#, false),
            (r#"{"a":[1.0,{"b":"c"}]}"#, false),
            (r#"{"a":[1,{"b":"c"}],"x":null}"#, false),
        ];
        for (text, same) in cases {
            let found = Found::Text(text);
            assert_eq!(found.same_as(Found::Tree(&tree)), same, "{text}");
            assert_eq!(Found::Tree(&tree).same_as(found), same, "{text}");
            assert_eq!(found.same_as(Found::Text(compact)), same, "{text}");
            assert_eq!(Found::Text(compact).same_as(found), same, "{text}");
        }
        assert!(Found::Tree(&tree).same_as(Found::Tree(&tree)));
    }
}
