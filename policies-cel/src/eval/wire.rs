//! A request's object as it came on the wire: its JSON text, kept as received and parsed into a
//! tree only when something reads it (the estimate, an object selector, the escape hatch, a CEL
//! expression over `object`). Most requests a policy set judges never need the whole object:
//! parsing it up front was most of the cost of reading an AdmissionReview.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value as Json;
use serde_json::value::RawValue;

/// One object of a request (`object` or `oldObject`), absent when the review has none or null.
#[derive(Debug, Clone, Default)]
pub(crate) struct WireObject {
    /// The text as received; `None` when the tree was given instead (or nothing).
    text: Option<Box<RawValue>>,
    tree: OnceLock<Option<Json>>,
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
            tree: OnceLock::new(),
        }
    }

    /// An object already parsed (`None` or JSON `null`: absent).
    pub fn from_tree(tree: Option<Json>) -> Self {
        Self {
            text: None,
            tree: OnceLock::from(tree.filter(|json| !json.is_null())),
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

    /// The value of annotation `key` in `metadata.annotations`, when it is a string.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        crate::impact::field(self.json()?, &["metadata", "annotations", key])?.as_str()
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
        assert_eq!(object.labels(), BTreeMap::from([("app".into(), "db".into())]));
        assert_eq!(object.annotation("a"), Some("why"));
        assert_eq!(object.annotation("b"), None);

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
