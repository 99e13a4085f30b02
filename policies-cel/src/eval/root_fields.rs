//! One top-level field of `request`, `object` or `oldObject` as CEL sees it, converted alone.
//!
//! Most expressions select a field of these roots (`request.operation`, `object.spec.replicas`,
//! `oldObject.?metadata.?labels`) and never use the root as a whole value, yet converting the
//! root meant converting all of it: a review's `userInfo.extra`, an object's
//! `metadata.managedFields` and `status` are most of their text, and every string and map of
//! them became a CEL value only to be freed again. Here the interpreter asks for the field it
//! selects ([`Activation::root_field`](crate::cel::Activation::root_field)), and only that
//! field's text is parsed and converted, once per request whichever policy reads it first. A
//! root some expression reads whole is built whole, as before, and fields are selected from it.
//!
//! The value of a field is the value the whole root holds under that key: the same text, parsed
//! and converted the same way (a repeated key keeps its last value, as serde_json and the outline
//! both do), and for `request` the same defaults (`dryRun` false, `options` null).

use std::sync::Mutex;

use serde_json::Value as Json;

use crate::cel::value::{from_json, from_json_owned};
use crate::cel::{Root, Value};
use crate::eval::outline::Outline;
use crate::eval::wire::{Found, WireObject};

/// A field converted: its root, its name, and its value (`None`: the root does not have it).
type Converted = (Root, Box<str>, Option<Value>);

/// The fields converted so far.
#[derive(Debug, Default)]
pub(crate) struct FieldMemo(Mutex<Vec<Converted>>);

impl Clone for FieldMemo {
    fn clone(&self) -> Self {
        Self(Mutex::new(
            self.0.lock().map(|memo| memo.clone()).unwrap_or_default(),
        ))
    }
}

impl FieldMemo {
    /// The field's value, converted by `convert` on first read. `None` when `convert` cannot tell
    /// (the caller converts the whole root instead).
    pub(crate) fn get_or_convert(
        &self,
        root: Root,
        field: &str,
        convert: impl FnOnce() -> Option<Option<Value>>,
    ) -> Option<Option<Value>> {
        if let Ok(memo) = self.0.lock()
            && let Some((_, _, known)) = memo.iter().find(|(r, f, _)| *r == root && **f == *field)
        {
            return Some(known.clone());
        }
        // Converted outside the lock: two threads reading one request (never the case in the
        // gateway, whose lanes each own theirs) would convert it twice, to the same value.
        let value = convert()?;
        if let Ok(mut memo) = self.0.lock() {
            memo.push((root, field.into(), value.clone()));
        }
        Some(value)
    }
}

/// The field `field` of an object (`object`, `oldObject`): `Some(None)` when the object is absent
/// (CEL's `null`, which has no fields) or has no such field; `None` when its text is not an
/// object (left to the whole root's conversion, which says what it is).
pub(crate) fn object_field(object: &WireObject, field: &str) -> Option<Option<Value>> {
    if !object.is_present() {
        return Some(None);
    }
    if !object.is_object() {
        return None;
    }
    match object.at(&[field]) {
        None => Some(None),
        Some(Found::Tree(json)) => Some(Some(from_json(json))),
        Some(Found::Text(text)) => converted(text).map(Some),
    }
}

/// The field `field` of `request`, from the text of the request's own fields (a JSON object)
/// and its outline.
pub(crate) fn request_field(text: &str, outline: &Outline, field: &str) -> Option<Option<Value>> {
    match outline.find(text, &[field]) {
        Some(range) => converted(text.get(range)?).map(Some),
        // The defaults the whole `request` gets (`request_value_from_fields`).
        None if field == "dryRun" => Some(Some(Value::Bool(false))),
        None if field == "options" => Some(Some(Value::Null)),
        None => Some(None),
    }
}

/// A value's text as CEL sees it (`None` when it does not parse, which text read as valid
/// JSON never gives).
fn converted(text: &str) -> Option<Value> {
    serde_json::from_str::<Json>(text).ok().map(from_json_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wire(text: &str) -> WireObject {
        WireObject::from_text(text.into())
    }

    #[test]
    fn a_field_is_the_value_the_whole_object_holds_under_its_key() {
        let text = r#"{"kind":"Pod","metadata":{"name":"a","labels":{"x":"1"}},"spec":{"n":[1,2.5,"s",null]},"kind":"Job"}"#;
        let whole = from_json(&serde_json::from_str::<Json>(text).unwrap());
        let Value::Map(whole) = whole else { panic!("a map") };
        for field in ["kind", "metadata", "spec"] {
            let from_text = object_field(&wire(text), field).unwrap();
            let key = crate::cel::upstream::objects::Key::String(field.to_owned().into());
            assert_eq!(from_text.as_ref(), whole.map.get(&key), "{field}");
        }
        assert_eq!(object_field(&wire(text), "status"), Some(None));
        assert_eq!(
            object_field(&wire(text), "kind"),
            Some(Some(Value::String("Job".to_owned().into()))),
            "a repeated key keeps its last value"
        );
        let tree = WireObject::from_tree(Some(json!({"spec": {"n": 1}})));
        assert_eq!(
            object_field(&tree, "spec"),
            Some(Some(from_json(&json!({"n": 1}))))
        );
    }

    #[test]
    fn an_absent_object_has_no_fields_and_a_request_has_its_defaults() {
        assert_eq!(object_field(&WireObject::absent(), "spec"), Some(None));
        assert_eq!(object_field(&wire("null"), "spec"), Some(None));
        let text = r#"{"operation":"DELETE","userInfo":{"username":"u"}}"#;
        let outline = Outline::of(text);
        let field = |name| request_field(text, &outline, name).unwrap();
        assert_eq!(
            field("operation"),
            Some(Value::String("DELETE".to_owned().into()))
        );
        assert_eq!(field("dryRun"), Some(Value::Bool(false)));
        assert_eq!(field("options"), Some(Value::Null));
        assert_eq!(field("name"), None);
    }

    /// A policy that selects fields of `request` and `oldObject` is judged on those fields
    /// alone: neither root is converted whole, nor is the object's text parsed into a tree.
    #[test]
    fn a_policy_selecting_fields_converts_neither_root_whole() {
        let policy = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: fields}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["DELETE"], resources: ["pods"]}
  validations:
  - expression: "request.operation == 'DELETE' && oldObject.metadata.name == 'p' && !has(request.subResource)"
    message: first
  - expression: "request.?name.orValue('') == 'q' && request.dryRun == false"
    message: second
"#;
        let set = crate::policy::Loader::new()
            .add_str("fields.yaml", policy)
            .and_then(|loader| loader.finish())
            .unwrap();
        let review = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
            "uid":"u","kind":{"group":"","version":"v1","kind":"Pod"},
            "resource":{"group":"","version":"v1","resource":"pods"},"name":"p","namespace":"ns",
            "operation":"DELETE","userInfo":{"username":"system:serviceaccount:db:op"},
            "oldObject":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"status":{"phase":"Running"}}}}"#;
        let request = crate::WireReview::read(review.as_bytes()).unwrap().into_request();
        let decision = crate::evaluate(&set, &request, &crate::cluster::EmptyCluster);
        let messages: Vec<&str> = decision.denials.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["second"], "the first holds, the second does not");
        assert!(!request.request_is_built(), "request read field by field");
        assert!(
            !request.objects().old_object.is_parsed(),
            "oldObject read from its text"
        );
    }

    #[test]
    fn each_field_is_converted_once() {
        let memo = FieldMemo::default();
        let mut conversions = 0;
        for _ in 0..3 {
            let value = memo.get_or_convert(Root::Request, "operation", || {
                conversions += 1;
                Some(Some(Value::Bool(true)))
            });
            assert_eq!(value, Some(Some(Value::Bool(true))));
        }
        assert_eq!(conversions, 1);
        assert_eq!(
            memo.get_or_convert(Root::Object, "operation", || None),
            None,
            "another root's field is its own"
        );
        assert_eq!(
            memo.clone().get_or_convert(Root::Request, "operation", || None),
            Some(Some(Value::Bool(true)))
        );
    }
}
