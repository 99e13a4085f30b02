//! An AdmissionReview read from its JSON text in one pass, the way a webhook receives it: the
//! request's own fields typed (all a webhook needs to decide whether any policy could apply) with
//! their text kept for CEL, and the objects kept as text, outlined as they were passed.
//! [`WireReview::into_request`] finishes it into a [`Request`] without reading the body again: the
//! `request` CEL value is built then, the objects' trees when something reads them.
//!
//! The pass checks the text as it goes ([`checked_json`](super::checked_json)): it accepts only
//! what serde_json parses. Of an UPDATE's two objects, the second is checked only where its bytes
//! differ from the first's ([`counterpart`](super::counterpart)). Anything unusual (an extra
//! top-level field, an object that is neither a JSON object nor null, a malformed or repeated
//! field, text the check cannot vouch for) gives
//! `None`: the caller takes the typed reading ([`Request::from_review`]), whose result or error
//! is the reference. The objects' own fields are not typed here: kube-apiserver validated the
//! objects before calling the webhook (typing `metadata` alone cost a third of the reading).

use std::ops::Range;

use kube_core::admission::AdmissionRequest;
use kube_core::{DynamicObject, TypeMeta};

use crate::eval::checked_json::{Checked, Str};
use crate::eval::counterpart::{Counterpart, TopField};
use crate::eval::outline::{Field, Outline};
use crate::eval::request::{Objects, Request};
use crate::eval::wire::WireObject;
use crate::eval::wire_fields::TypedFields;
use crate::stages;

/// The review's `apiVersion` and `kind`.
const API_VERSION: &str = "admission.k8s.io/v1";
const KIND: &str = "AdmissionReview";

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
    pub fn read(body: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(body).ok()?;
        let mut checked = Checked::new(text);
        let (mut api_version, mut kind, mut request) = (None, None, None);
        checked.object(|checked, key| {
            let key = key.unescaped(text)?;
            let slot = match &*key {
                "apiVersion" => &mut api_version,
                "kind" => &mut kind,
                "request" => {
                    // A repeated field is unusual.
                    return request
                        .replace(WireRequest::read(checked, text)?)
                        .is_none()
                        .then_some(());
                }
                _ => return None,
            };
            let value = checked.string_value()?.unescaped(text)?;
            slot.replace(value).is_none().then_some(())
        })?;
        if !checked.at_end() || api_version.as_deref() != Some(API_VERSION) || kind.as_deref() != Some(KIND) {
            return None;
        }
        stages::mark("read: text checked");
        let WireRequest {
            fields,
            places,
            typed,
            object,
            old_object,
        } = request?;
        let mut admission = match typed.finish() {
            Some(admission) => admission,
            None => serde_json::from_str(&fields).ok()?,
        };
        stages::mark("read: request fields");
        admission.types = TypeMeta {
            api_version: API_VERSION.to_owned(),
            kind: KIND.to_owned(),
        };
        Some(Self {
            admission,
            fields,
            fields_outline: Outline::of_top_level_fields(places),
            object,
            old_object,
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

/// The request: its own fields as the text of a JSON object, its objects as outlined text.
struct WireRequest {
    fields: String,
    /// Each field's key (between its quotes) and value in `fields`.
    places: Vec<Field>,
    /// The fields typed as they were checked.
    typed: TypedFields,
    object: WireObject,
    old_object: WireObject,
}

impl WireRequest {
    /// The request object starting at `checked` in `text`; `None` when it is unusual.
    fn read(checked: &mut Checked<'_>, text: &str) -> Option<Self> {
        let mut request = Self {
            fields: String::with_capacity(1024),
            places: Vec::with_capacity(16),
            typed: TypedFields::default(),
            object: WireObject::absent(),
            old_object: WireObject::absent(),
        };
        request.fields.push('{');
        checked.object(|checked, key| {
            match &*key.unescaped(text)? {
                // A repeated object keeps its last value, as serde_json's tree does.
                "object" => request.object = object(checked, text, counterpart(&request.old_object))?,
                "oldObject" => request.old_object = object(checked, text, counterpart(&request.object))?,
                name => {
                    let start = checked.next_byte().map(|_| checked.position())?;
                    request.typed.read(name, checked, text)?;
                    request.copy_field(text, &key, start..checked.position());
                }
            }
            Some(())
        })?;
        request.fields.push('}');
        Some(request)
    }

    /// Writes the field whose key and value are at `key` and `value` in `text`, noting where.
    fn copy_field(&mut self, text: &str, key: &Str, value: Range<usize>) {
        let fields = &mut self.fields;
        if fields.len() > 1 {
            fields.push(',');
        }
        // The key as written: its escapes are valid JSON here too.
        fields.push('"');
        let key_start = fields.len();
        fields.push_str(text.get(key.inner.clone()).unwrap_or_default());
        let key_place = key_start..fields.len();
        fields.push_str("\":");
        let value_start = fields.len();
        fields.push_str(text.get(value).unwrap_or_default());
        self.places.push(Field {
            parent: None,
            key: key_place,
            escaped: key.escaped,
            value: value_start..fields.len(),
        });
    }
}

/// The other object of the request, read already, as the counterpart of the one read next.
fn counterpart(other: &WireObject) -> Option<Counterpart<'_>> {
    let (text, outline) = other.text_outlined()?;
    Counterpart::new(text, outline)
}

/// The object (`object`, `oldObject`) starting at `checked`: JSON `null` (absent) or an object,
/// outlined two levels deep as it is checked; `None` for anything else. Bytes that are the
/// `counterpart`'s in the same place (a top-level value, or a member of a top-level object) are
/// passed without checking them again.
fn object(checked: &mut Checked<'_>, text: &str, counterpart: Option<Counterpart<'_>>) -> Option<WireObject> {
    match checked.next_byte()? {
        b'n' => checked.value().map(|_| WireObject::absent()),
        b'{' => {
            let bytes = text.as_bytes();
            let start = checked.position();
            let mut fields: Vec<Field> = Vec::with_capacity(48);
            let mut index = 0;
            checked.object(|checked, key| {
                let parent = fields.len();
                let key_text = bytes.get(key.inner.clone())?;
                let other = counterpart.and_then(|c| Some((c, c.top(index, key_text)?)));
                index += 1;
                fields.push(Field {
                    parent: None,
                    escaped: key.escaped,
                    key: key.inner.start - start..key.inner.end - start,
                    value: 0..0,
                });
                let value_start = checked.next_byte().map(|_| checked.position())?;
                let same = other.and_then(|(c, top)| Some((top, c.same_top_value(top, bytes, value_start)?)));
                if let Some((top, len)) = same {
                    checked.pass_vouched(len);
                    fields.extend(top.children_at(value_start - start, parent));
                } else if checked.next_byte()? == b'{' {
                    let mut own = Own {
                        bytes,
                        start,
                        parent,
                        counterpart: other,
                        fields: &mut fields,
                    };
                    checked.members(|checked| own.member(checked))?;
                } else {
                    checked.value()?;
                }
                fields.get_mut(parent)?.value = value_start - start..checked.position() - start;
                Some(())
            })?;
            let own = text.get(start..checked.position())?;
            Some(WireObject::outlined(own.into(), Outline::of_fields(fields)))
        }
        _ => None,
    }
}

/// The fields of a top-level object being outlined.
struct Own<'f, 'r> {
    /// The review's text, and where the object's own starts in it.
    bytes: &'f [u8],
    start: usize,
    /// The top-level field's place.
    parent: usize,
    /// The counterpart object and its top-level field in the same place, when it has one.
    counterpart: Option<(Counterpart<'r>, TopField<'r>)>,
    fields: &'f mut Vec<Field>,
}

impl Own<'_, '_> {
    /// Passes the member starting at `checked` (its key's opening quote) and outlines it: the
    /// counterpart's member in the same place when the bytes are the same, else checked.
    fn member(&mut self, checked: &mut Checked<'_>) -> Option<()> {
        let index = self.fields.len() - self.parent - 1;
        let at = checked.position();
        let same = self.counterpart.and_then(|(c, top)| {
            let field = top.children().get(index)?;
            Some((field, c.same_member(field, self.bytes, at)?))
        });
        if let Some((field, len)) = same {
            checked.pass_vouched(len);
            self.fields
                .push(Counterpart::member_at(field, at, self.start, self.parent));
            return Some(());
        }
        let key = checked.key_and_colon()?;
        let value = checked.value()?;
        let start = self.start;
        self.fields.push(Field {
            parent: Some(self.parent),
            escaped: key.escaped,
            key: key.inner.start - start..key.inner.end - start,
            value: value.start - start..value.end - start,
        });
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value as Json;

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

    /// The outline noted while an object was checked is the one a pass over its text makes;
    /// every recorded review the typed reading takes is read this way.
    #[test]
    fn the_objects_are_outlined_as_they_are_checked() {
        let mut outlined = 0;
        for (path, text) in crate::eval::review::tests::recorded_reviews() {
            let typed = serde_json::from_slice(&text).map(Request::from_review);
            let Some(read) = WireReview::read(&text) else {
                assert!(
                    !matches!(typed, Ok(Ok(_))),
                    "{} is left to the typed reading",
                    path.display()
                );
                continue;
            };
            for object in [&read.object, &read.old_object] {
                let Some(text) = object.text() else { continue };
                assert_eq!(object.outline(text), &Outline::of(text), "{}", path.display());
                outlined += 1;
            }
        }
        assert!(outlined > 10, "only {outlined} objects");
    }

    /// Mutations of the object read second of an UPDATE, where values the same as the first
    /// object's are passed without a check: a review is read only when serde_json parses it,
    /// every review the typed reading takes is read, and both objects are outlined as a pass
    /// over their text outlines them.
    #[test]
    fn an_update_is_read_only_when_valid_whatever_its_second_object_holds() {
        const BYTES: &[u8] = b"\"\\{}[],:0-e.+ 1x";
        let (mut accepted, mut refused) = (0, 0);
        for (path, body) in crate::eval::review::tests::recorded_reviews() {
            let Ok(Json::Object(review)) = serde_json::from_slice::<Json>(&body) else {
                continue;
            };
            let request = review.get("request").and_then(Json::as_object);
            if !request.is_some_and(|r| {
                r.get("object").is_some_and(Json::is_object)
                    && r.get("oldObject").is_some_and(Json::is_object)
            }) {
                continue;
            }
            // Compact, so that the second object starts where its key says.
            let text = serde_json::to_string(&review).unwrap();
            let second = text
                .find(r#""oldObject":"#)
                .max(text.find(r#""object":"#))
                .unwrap();
            assert!(WireReview::read(text.as_bytes()).is_some(), "{}", path.display());
            for at in (second..text.len() - 2).step_by(7) {
                for variant in 0..3 {
                    let mut mutated = text.clone().into_bytes();
                    let byte = BYTES[(at / 7 + variant) % BYTES.len()];
                    match variant {
                        0 => mutated[at] = byte,
                        1 => mutated.insert(at, byte),
                        _ => drop(mutated.remove(at)),
                    }
                    let parsed = serde_json::from_slice::<Json>(&mutated);
                    let shown = String::from_utf8_lossy(&mutated);
                    let Some(read) = WireReview::read(&mutated) else {
                        // A review the typed reading takes is read here too: passing bytes like
                        // the counterpart's never refuses what a check passes (`1` then `2`).
                        let typed = serde_json::from_slice(&mutated).map(Request::from_review);
                        assert!(
                            !matches!(typed, Ok(Ok(_))),
                            "{}, refused: {shown}",
                            path.display()
                        );
                        refused += 1;
                        continue;
                    };
                    assert!(parsed.is_ok(), "{}: {shown}", path.display());
                    for object in [&read.object, &read.old_object] {
                        let Some(text) = object.text() else { continue };
                        assert_eq!(object.outline(text), &Outline::of(text), "{}", path.display());
                    }
                    accepted += 1;
                }
            }
        }
        assert!(
            accepted > 500 && refused > 500,
            "{accepted} accepted, {refused} refused"
        );
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
