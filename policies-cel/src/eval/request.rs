//! An admission request prepared for evaluation: the request's own fields typed, its objects as
//! they came on the wire (JSON text, parsed on first read: see [`wire`](super::wire)) and the CEL
//! values policies read, each built at most once per request and only when first read:
//! `request` (from the fields' text, for a request read from text), `object` and `oldObject`.

use std::borrow::Cow;
use std::sync::OnceLock;

use kube_core::DynamicObject;
use kube_core::admission::{AdmissionRequest, AdmissionReview};
use serde_json::Value as Json;

use crate::cel::Root;
use crate::cel::Value;
use crate::cel::value::{from_json, from_json_owned};
use crate::eval::outline::Outline;
use crate::eval::review;
use crate::eval::root_fields::{self, FieldMemo};
use crate::eval::wire::WireObject;
use crate::eval::wire_review::WireReview;

/// Why a document is not an admission request we can judge.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("expected an AdmissionReview of apiVersion admission.k8s.io/v1, found {found}")]
    NotAReview { found: String },
    #[error("the AdmissionReview has no `request`")]
    NoRequest,
    #[error("the AdmissionReview is malformed at `{path}`: {message}")]
    Malformed { path: String, message: String },
}

/// One admission request, ready to be judged by any number of policies.
#[derive(Debug, Clone)]
pub struct Request {
    /// The request's own fields: uid, kinds, resources, operation, user, dryRun, options. Its
    /// objects are not kept here (`object` and `old_object` are always `None`): read them with
    /// [`Request::object_json`] / [`Request::old_object_json`], or as CEL sees them with
    /// [`Request::object`] / [`Request::old_object`].
    pub admission: AdmissionRequest<DynamicObject>,
    objects: Objects,
    object: OnceLock<Value>,
    old_object: OnceLock<Value>,
    request: OnceLock<Value>,
    /// The request's own fields as the text of a JSON object, when it came as text: `request`
    /// is built from it on first read (policies that never read `request` never pay for it).
    fields: Option<Box<str>>,
    /// Where each of `fields`' fields is, for reading one of them alone.
    fields_outline: OnceLock<Outline>,
    /// The top-level fields of `request`, `object` and `oldObject` read alone so far.
    field_memo: FieldMemo,
}

/// The request's objects and delete options.
#[derive(Debug, Clone, Default)]
pub(crate) struct Objects {
    pub object: WireObject,
    pub old_object: WireObject,
    pub options: Option<Json>,
}

impl Request {
    /// Prepares a request built in code; its typed objects move out of `admission` (see
    /// [`Request::admission`]).
    pub fn new(mut admission: AdmissionRequest<DynamicObject>) -> Self {
        let json = |object: Option<DynamicObject>| {
            WireObject::from_tree(object.and_then(|o| serde_json::to_value(o).ok()))
        };
        let objects = Objects {
            object: json(admission.object.take()),
            old_object: json(admission.old_object.take()),
            options: admission
                .options
                .as_ref()
                .and_then(|o| serde_json::to_value(o).ok())
                .filter(|o| !o.is_null()),
        };
        let request = request_value(&admission);
        Self::assemble(admission, objects, request)
    }

    /// Reads an `admission.k8s.io/v1` AdmissionReview from its JSON text in one pass, the
    /// objects kept as text until something reads them. `None` when the text is anything but
    /// the usual, valid shape: then parse it and call [`Request::from_review`], whose result
    /// or error is the reference.
    pub fn from_wire(text: &[u8]) -> Option<Self> {
        WireReview::read(text).map(WireReview::into_request)
    }

    /// The parts, with the objects' CEL values still to be built.
    pub(crate) fn assemble(
        admission: AdmissionRequest<DynamicObject>,
        objects: Objects,
        request: Value,
    ) -> Self {
        Self {
            admission,
            objects,
            object: OnceLock::new(),
            old_object: OnceLock::new(),
            request: OnceLock::from(request),
            fields: None,
            fields_outline: OnceLock::new(),
            field_memo: FieldMemo::default(),
        }
    }

    /// The parts of a request read from text: `request` is built from `fields` (the text of
    /// a JSON object, whose top-level fields are where `outline` says) on first read.
    pub(crate) fn assemble_from_text(
        admission: AdmissionRequest<DynamicObject>,
        objects: Objects,
        fields: String,
        outline: Outline,
    ) -> Self {
        Self {
            request: OnceLock::new(),
            fields: Some(fields.into_boxed_str()),
            fields_outline: OnceLock::from(outline),
            ..Self::assemble(admission, objects, Value::Null)
        }
    }

    /// Reads an `admission.k8s.io/v1` AdmissionReview (already parsed from JSON or YAML).
    pub fn from_review(mut review: Json) -> Result<Self, RequestError> {
        let api_version = review.get("apiVersion").and_then(Json::as_str).unwrap_or("");
        let kind = review.get("kind").and_then(Json::as_str).unwrap_or("");
        if api_version != "admission.k8s.io/v1" || kind != "AdmissionReview" {
            let found = if api_version.is_empty() && kind.is_empty() {
                "a document without apiVersion/kind".to_owned()
            } else {
                format!("{api_version} {kind}")
            };
            return Err(RequestError::NotAReview { found });
        }
        if review.get("request").is_none_or(Json::is_null) {
            return Err(RequestError::NoRequest);
        }
        if let Some(request) = review::read(&mut review) {
            return Ok(request);
        }
        Self::from_review_typed(review)
    }

    /// The reference reading, through the typed review: taken when the review is unusual in any
    /// way (and so for every malformed one, whose error names the field at fault).
    pub(super) fn from_review_typed(review: Json) -> Result<Self, RequestError> {
        let Some(raw) = review.get("request") else {
            return Err(RequestError::NoRequest);
        };
        let objects = Objects {
            object: WireObject::from_tree(raw.get("object").cloned()),
            old_object: WireObject::from_tree(raw.get("oldObject").cloned()),
            options: raw.get("options").filter(|o| !o.is_null()).cloned(),
        };
        let request = request_value_from_json(raw);
        let review: AdmissionReview<DynamicObject> =
            serde_path_to_error::deserialize(review).map_err(|e| RequestError::Malformed {
                path: e.path().to_string(),
                message: e.inner().to_string(),
            })?;
        let mut admission: AdmissionRequest<DynamicObject> =
            review.try_into().map_err(|_| RequestError::NoRequest)?;
        // Typed, the objects only proved they read as objects: they are kept as JSON.
        admission.object = None;
        admission.old_object = None;
        Ok(Self::assemble(admission, objects, request))
    }

    /// The request's operation as Kubernetes spells it (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`).
    pub fn operation(&self) -> &'static str {
        operation_name(&self.admission)
    }

    /// `object` as CEL sees it (null on DELETE), converted on first use.
    pub fn object(&self) -> &Value {
        self.object.get_or_init(|| cel_of(self.objects.object.json()))
    }

    /// `oldObject` as CEL sees it (null on CREATE), converted on first use.
    pub fn old_object(&self) -> &Value {
        self.old_object
            .get_or_init(|| cel_of(self.objects.old_object.json()))
    }

    /// `object` as JSON (none on DELETE), parsed on first use.
    pub fn object_json(&self) -> Option<&Json> {
        self.objects.object.json()
    }

    /// `oldObject` as JSON (none on CREATE), parsed on first use.
    pub fn old_object_json(&self) -> Option<&Json> {
        self.objects.old_object.json()
    }

    /// `request` as CEL sees it, built on first use. (Text fields were read as JSON when the
    /// review was; were they unreadable, `request` would be null, and every expression reading
    /// it would fail and follow its policy's failure policy.)
    pub fn request(&self) -> &Value {
        self.request.get_or_init(|| {
            self.fields
                .as_deref()
                .and_then(|text| serde_json::from_str(text).ok())
                .map_or(Value::Null, request_value_from_fields)
        })
    }

    /// The top-level field `field` of `root` (`request`, `object` or `oldObject`) as CEL sees
    /// it, converted alone ([`root_fields`]): `Some(None)` when the root has no such field (or
    /// is null), `None` when the root is better read whole (it is built already, or it is
    /// another root).
    pub(crate) fn root_field(&self, root: Root, field: &str) -> Option<Option<Value>> {
        match root {
            Root::Request => {
                let text = self.fields.as_deref().filter(|_| self.request.get().is_none())?;
                self.field_memo.get_or_convert(root, field, || {
                    let outline = self.fields_outline.get_or_init(|| Outline::top_level(text));
                    root_fields::request_field(text, outline, field)
                })
            }
            Root::Object | Root::OldObject => {
                let (whole, object) = match root {
                    Root::Object => (&self.object, &self.objects.object),
                    _ => (&self.old_object, &self.objects.old_object),
                };
                if whole.get().is_some() {
                    return None;
                }
                self.field_memo
                    .get_or_convert(root, field, || root_fields::object_field(object, field))
            }
            _ => None,
        }
    }

    /// Whether `request` has been built yet (tests: what reads it).
    #[cfg(test)]
    pub(crate) fn request_is_built(&self) -> bool {
        self.request.get().is_some()
    }

    /// The name of the object the request acts on: `name`, or on each DELETE of a
    /// `deletecollection` (sent with an empty name) the name in `oldObject`.
    pub fn target_name(&self) -> Cow<'_, str> {
        crate::eval::target::target_name(&self.admission, &self.objects.old_object)
    }

    /// The objects and delete options.
    pub(crate) fn objects(&self) -> &Objects {
        &self.objects
    }
}

fn cel_of(json: Option<&Json>) -> Value {
    json.map_or(Value::Null, from_json)
}

/// The operation of `admission` as Kubernetes spells it (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`).
pub fn operation_name(admission: &AdmissionRequest<DynamicObject>) -> &'static str {
    use kube_core::admission::Operation;
    match admission.operation {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
        Operation::Connect => "CONNECT",
    }
}

/// The `request` variable: the AdmissionRequest fields without the objects.
fn request_value(admission: &AdmissionRequest<DynamicObject>) -> Value {
    request_value_from_json(&serde_json::to_value(admission).unwrap_or(Json::Null))
}

fn request_value_from_json(raw: &Json) -> Value {
    let fields: serde_json::Map<String, Json> = raw
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.as_str() != "object" && k.as_str() != "oldObject")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    request_value_from_fields(fields)
}

/// The `request` variable from the request's fields other than the objects.
pub(crate) fn request_value_from_fields(mut fields: serde_json::Map<String, Json>) -> Value {
    fields.entry("dryRun").or_insert(Json::Bool(false));
    fields.entry("options").or_insert(Json::Null);
    from_json_owned(Json::Object(fields))
}
