//! An AdmissionReview read from its JSON text in one pass, the way a webhook receives it: the
//! request's own fields typed (all a webhook needs to decide whether any policy could apply) with
//! their text kept for CEL, and the objects kept as text. [`WireReview::into_request`] finishes
//! it into a [`Request`] without reading the body again: the `request` CEL value is built then,
//! the objects' trees when something reads them.
//!
//! Anything unusual (an extra top-level field, an object that is neither a JSON object nor null,
//! a malformed or repeated field, nesting beyond serde_json's limit, text a raw value's validation
//! lets through but a parse refuses: [`lax_json`](super::lax_json)) gives `None`: the caller
//! takes the typed reading ([`Request::from_review`]), whose result or error is the reference.
//! The objects' own fields are not typed here: kube-apiserver validated the objects before
//! calling the webhook (typing `metadata` alone cost a third of the reading).

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use kube_core::admission::AdmissionRequest;
use kube_core::{DynamicObject, TypeMeta};
use serde::Deserialize;
use serde::de::{Deserializer, Error as _, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::eval::outline::Outline;
use crate::eval::request::{Objects, Request};
use crate::eval::wire::WireObject;
use crate::stages;

/// A review read from its text: the request's fields typed, its objects not parsed.
#[derive(Debug, Clone)]
pub struct WireReview {
    /// The request's own fields (uid, kinds, resources, operation, user, dryRun, options);
    /// `object` and `old_object` are always `None`: the objects stay text until read.
    pub admission: AdmissionRequest<DynamicObject>,
    /// The same fields as the text of a JSON object, as received: the `request` CEL value is
    /// built from it, so policies see exactly what was sent.
    fields: String,
    /// Where each field is in `fields`, noted as it was written (a field read alone is found
    /// without passing over the text again).
    fields_outline: Outline,
    object: WireObject,
    old_object: WireObject,
}

impl WireReview {
    /// Reads an `admission.k8s.io/v1` AdmissionReview with a request from its JSON text;
    /// `None` when it is anything but the usual, valid shape.
    pub fn read(text: &[u8]) -> Option<Self> {
        // The text kept (objects, fields) is parsed later, and must parse then.
        if crate::eval::lax_json::beyond_raw_validation(text) {
            return None;
        }
        stages::mark("read: raw check");
        let envelope: Envelope<'_> = serde_json::from_slice(text).ok()?;
        stages::mark("read: envelope");
        if envelope.api_version != "admission.k8s.io/v1" || envelope.kind != "AdmissionReview" {
            return None;
        }
        let WireRequest {
            fields,
            places,
            object,
            old_object,
        } = envelope.request?;
        let mut admission: AdmissionRequest<DynamicObject> = serde_json::from_str(&fields).ok()?;
        stages::mark("read: request fields");
        admission.types = TypeMeta {
            api_version: envelope.api_version.into_owned(),
            kind: envelope.kind.into_owned(),
        };
        Some(Self {
            admission,
            fields,
            fields_outline: Outline::of_top_level_fields(places),
            object: wire_object(object)?,
            old_object: wire_object(old_object)?,
        })
    }

    /// The name of the object the request acts on: `name`, or on each DELETE of a
    /// `deletecollection` (sent with an empty name) the name in `oldObject`.
    pub fn target_name(&self) -> std::borrow::Cow<'_, str> {
        crate::eval::target::target_name(&self.admission, &self.old_object)
    }

    /// The request, ready to be judged: nothing is read again here (the `request` CEL value is
    /// built from the fields' text when a policy first reads it, the objects' trees likewise).
    pub fn into_request(self) -> Request {
        let options = self
            .admission
            .options
            .as_ref()
            .map(|options| options.0.clone())
            .filter(|options| !options.is_null());
        let objects = Objects {
            object: self.object,
            old_object: self.old_object,
            options,
        };
        Request::assemble_from_text(self.admission, objects, self.fields, self.fields_outline)
    }
}

/// An object's text, when it is a JSON object or null.
fn wire_object(text: Option<Box<RawValue>>) -> Option<WireObject> {
    let Some(text) = text else {
        return Some(WireObject::absent());
    };
    let trimmed = text.get().trim_start();
    (trimmed.starts_with('{') || trimmed.starts_with("null")).then(|| WireObject::from_text(text))
}

/// The review's envelope; any other top-level field makes it unusual.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    #[serde(rename = "apiVersion", borrow, default)]
    api_version: Cow<'a, str>,
    #[serde(borrow, default)]
    kind: Cow<'a, str>,
    request: Option<WireRequest>,
}

/// The request: its own fields as the text of a JSON object, its objects as text.
struct WireRequest {
    fields: String,
    /// Each field's key (between its quotes) and value in `fields`.
    places: Vec<(Range<usize>, Range<usize>)>,
    object: Option<Box<RawValue>>,
    old_object: Option<Box<RawValue>>,
}

impl<'de> Deserialize<'de> for WireRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(WireRequestVisitor)
    }
}

struct WireRequestVisitor;

impl<'de> Visitor<'de> for WireRequestVisitor {
    type Value = WireRequest;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an admission request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WireRequest, A::Error> {
        let mut request = WireRequest {
            fields: String::with_capacity(1024),
            places: Vec::with_capacity(16),
            object: None,
            old_object: None,
        };
        request.fields.push('{');
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match &*key {
                "object" => request.object = Some(map.next_value()?),
                "oldObject" => request.old_object = Some(map.next_value()?),
                _ => {
                    // Borrowed from the body: the field is only validated here, and copied.
                    let value: &'de RawValue = map.next_value()?;
                    if request.fields.len() > 1 {
                        request.fields.push(',');
                    }
                    let fields = &mut request.fields;
                    let key_place = match &key {
                        // Borrowed: the key had no escape sequence, and JSON text holds no raw
                        // control character, so it is written back as it came.
                        Cow::Borrowed(plain) => {
                            fields.push('"');
                            let start = fields.len();
                            fields.push_str(plain);
                            let end = fields.len();
                            fields.push('"');
                            start..end
                        }
                        Cow::Owned(unescaped) => {
                            let quoted = serde_json::to_string(unescaped).map_err(A::Error::custom)?;
                            let start = fields.len() + 1;
                            fields.push_str(&quoted);
                            start..fields.len() - 1
                        }
                    };
                    fields.push(':');
                    let start = fields.len();
                    fields.push_str(value.get());
                    request.places.push((key_place, start..fields.len()));
                }
            }
        }
        request.fields.push('}');
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(request: &str) -> String {
        format!(r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{request}}}"#)
    }

    const POD: &str = r#"{"uid":"u-1","kind":{"group":"","version":"v1","kind":"Pod"},
        "resource":{"group":"","version":"v1","resource":"pods"},"name":"p","namespace":"ns",
        "operation":"DELETE","userInfo":{"username":"system:serviceaccount:db:op","groups":["a"]},
        "oldObject":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}},"object":null,
        "options":{"apiVersion":"meta.k8s.io/v1","kind":"DeleteOptions","propagationPolicy":"Background"}}"#;

    #[test]
    fn the_header_is_typed_and_the_objects_stay_text_until_read() {
        let read = WireReview::read(review(POD).as_bytes()).unwrap();
        assert_eq!(read.admission.uid, "u-1");
        assert_eq!(read.admission.name, "p");
        assert_eq!(read.admission.types.kind, "AdmissionReview");
        assert!(read.admission.object.is_none() && read.admission.old_object.is_none());
        assert!(read.old_object.is_present() && !read.old_object.is_parsed());
        assert!(!read.object.is_present(), "null is no object");
        let request = read.into_request();
        assert!(!request.request_is_built(), "built when first read");
        let cel = crate::cel::value::to_json(request.request());
        assert_eq!(cel["userInfo"]["groups"], serde_json::json!(["a"]));
        assert_eq!(cel["options"]["propagationPolicy"], "Background");
        assert_eq!(cel["dryRun"], false, "defaulted as Kubernetes does");
        assert!(cel.get("oldObject").is_none() && cel.get("object").is_none());
        assert!(!request.objects().old_object.is_parsed());
        assert_eq!(request.old_object_json().unwrap()["metadata"]["name"], "p");
    }

    #[test]
    fn keys_are_written_back_escaped() {
        let request = POD.replacen(r#""name":"p","#, r#""name":"p","x\"y":1,"#, 1);
        let read = WireReview::read(review(&request).as_bytes()).unwrap();
        let cel = crate::cel::value::to_json(read.into_request().request());
        assert_eq!(cel["x\"y"], 1);
    }

    /// The places noted while the fields were written are where an outline of the text finds
    /// them: every top-level field of every recorded review, and an escaped key.
    #[test]
    fn the_fields_are_outlined_as_they_are_written() {
        let escaped = POD.replacen(r#""name":"p","#, r#""name":"p","x\u0079":{"a":1},"#, 1);
        let mut reviews: Vec<Vec<u8>> = crate::eval::review::tests::recorded_reviews()
            .into_iter()
            .map(|(_, text)| text)
            .collect();
        let escaped = review(&escaped).into_bytes();
        assert!(WireReview::read(&escaped).is_some(), "an escaped key is usual");
        reviews.push(escaped);
        let mut checked = 0;
        for text in reviews {
            let Some(read) = WireReview::read(&text) else {
                continue;
            };
            let fields = &read.fields;
            let outlined = Outline::top_level(fields);
            let keys: Vec<String> = match serde_json::from_str::<serde_json::Value>(fields) {
                Ok(serde_json::Value::Object(map)) => map.keys().cloned().collect(),
                other => panic!("{other:?}"),
            };
            for key in keys.iter().map(String::as_str).chain(["xy", "missing"]) {
                for path in [&[key][..], &[key, "a"], &[key, "username"]] {
                    assert_eq!(
                        read.fields_outline.find(fields, path),
                        outlined.find(fields, path),
                        "{path:?} in {fields}"
                    );
                }
                checked += 1;
            }
        }
        assert!(checked > 100, "only {checked} fields checked");
    }

    #[test]
    fn unusual_reviews_are_left_to_the_typed_reading() {
        let unusual = [
            "not json".to_owned(),
            review(POD).replace("admission.k8s.io/v1", "admission.k8s.io/v1beta1"),
            r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.to_owned(),
            review(&POD.replacen(r#""name":"p","#, r#""name":"p","name":"q","#, 1)),
            review(&POD.replace(r#""object":null"#, r#""object":[1]"#)),
            review(&POD.replace("DELETE", "SMASH")),
        ];
        for text in unusual {
            assert!(WireReview::read(text.as_bytes()).is_none(), "{text}");
        }
    }
}
