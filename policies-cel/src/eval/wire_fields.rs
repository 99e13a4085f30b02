//! The request's own fields typed as the one-pass review reader checks them
//! ([`WireReview::read`](super::wire_review::WireReview::read)): uid, kinds, resources, name,
//! namespace, operation, user, dryRun, options, each read from the text where it stands into
//! the [`AdmissionRequest`] serde would give. serde_json, reading the fields' text again, cost
//! about 8% of a judged scale-down's instructions.
//!
//! Only the usual shape is typed here: a field of an unexpected JSON type, a repeated field, a
//! field serde would refuse or a `userInfo` with a field of its own is *unusual*. Its value is
//! then only checked, and [`TypedFields::finish`] says so: the caller takes serde's reading of
//! the fields' text, which stays the reference (and gives its error).

use std::collections::BTreeMap;

use k8s_openapi::api::authentication::v1::UserInfo;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kube_core::admission::{AdmissionRequest, Operation};
use kube_core::{DynamicObject, GroupVersionKind, GroupVersionResource, TypeMeta};
use serde::Deserialize;
use serde::de::value::{Error as ValueError, MapDeserializer};

use crate::eval::checked_json::Checked;

/// The request's fields read so far.
#[derive(Debug, Default)]
pub(crate) struct TypedFields {
    uid: Option<String>,
    kind: Option<GroupVersionKind>,
    resource: Option<GroupVersionResource>,
    sub_resource: Option<Option<String>>,
    request_kind: Option<Option<GroupVersionKind>>,
    request_resource: Option<Option<GroupVersionResource>>,
    request_sub_resource: Option<Option<String>>,
    name: Option<String>,
    namespace: Option<Option<String>>,
    operation: Option<Operation>,
    user_info: Option<UserInfo>,
    dry_run: Option<bool>,
    options: Option<Option<RawExtension>>,
    /// A field was left to serde.
    unusual: bool,
}

impl TypedFields {
    /// Passes the value of the field `key` starting at `checked` in `text`, typing it when it
    /// is one of the request's and has the usual shape; `None` only when the text is refused.
    pub(crate) fn read(&mut self, key: &str, checked: &mut Checked<'_>, text: &str) -> Option<()> {
        let mut probe = checked.clone();
        if self.typed(key, &mut probe, text).is_some() {
            *checked = probe;
        } else {
            self.unusual = true;
            checked.value()?;
        }
        Some(())
    }

    /// The request these fields make, the objects left out; `None` when a field was unusual
    /// or one serde requires is missing.
    pub(crate) fn finish(self) -> Option<AdmissionRequest<DynamicObject>> {
        if self.unusual {
            return None;
        }
        Some(AdmissionRequest {
            types: TypeMeta::default(),
            uid: self.uid?,
            kind: self.kind?,
            resource: self.resource?,
            sub_resource: self.sub_resource.flatten(),
            request_kind: self.request_kind.flatten(),
            request_resource: self.request_resource.flatten(),
            request_sub_resource: self.request_sub_resource.flatten(),
            name: self.name.unwrap_or_default(),
            namespace: self.namespace.flatten(),
            operation: self.operation?,
            user_info: self.user_info?,
            object: None,
            old_object: None,
            dry_run: self.dry_run.unwrap_or_default(),
            options: self.options.flatten(),
        })
    }

    /// Types the value of `key`; `None` when it is unusual (or refused).
    fn typed(&mut self, key: &str, checked: &mut Checked<'_>, text: &str) -> Option<()> {
        match key {
            "uid" => once(&mut self.uid, string(checked, text)?),
            "kind" => once(&mut self.kind, group_version_kind(checked, text)?),
            "resource" => once(&mut self.resource, group_version_resource(checked, text)?),
            "subResource" => once(&mut self.sub_resource, nullable(checked, text, string)?),
            "requestKind" => once(
                &mut self.request_kind,
                nullable(checked, text, group_version_kind)?,
            ),
            "requestResource" => once(
                &mut self.request_resource,
                nullable(checked, text, group_version_resource)?,
            ),
            "requestSubResource" => once(&mut self.request_sub_resource, nullable(checked, text, string)?),
            "name" => once(&mut self.name, string(checked, text)?),
            "namespace" => once(&mut self.namespace, nullable(checked, text, string)?),
            "operation" => once(&mut self.operation, operation(checked, text)?),
            "userInfo" => once(&mut self.user_info, user_info(checked, text)?),
            "dryRun" => once(&mut self.dry_run, boolean(checked)?),
            "options" => once(&mut self.options, options(checked, text)?),
            // serde passes over a field that is not the request's.
            _ => checked.value().map(drop),
        }
    }
}

/// Fills `slot`; a repeated field is unusual (serde refuses most, and is left to decide).
fn once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    slot.replace(value).is_none().then_some(())
}

/// A JSON string's value.
fn string(checked: &mut Checked<'_>, text: &str) -> Option<String> {
    Some(checked.string_value()?.unescaped(text)?.into_owned())
}

/// `null` (as `None`) or what `read` reads.
fn nullable<T>(
    checked: &mut Checked<'_>,
    text: &str,
    read: impl FnOnce(&mut Checked<'_>, &str) -> Option<T>,
) -> Option<Option<T>> {
    if checked.next_byte()? == b'n' {
        checked.value()?;
        return Some(None);
    }
    read(checked, text).map(Some)
}

/// `true` or `false`.
fn boolean(checked: &mut Checked<'_>) -> Option<bool> {
    let byte = checked.next_byte()?;
    checked.value()?;
    match byte {
        b't' => Some(true),
        b'f' => Some(false),
        _ => None,
    }
}

/// An object of strings at `keys` (each exactly once, no other field), in that order.
fn strings<const N: usize>(checked: &mut Checked<'_>, text: &str, keys: [&str; N]) -> Option<[String; N]> {
    let mut values: [Option<String>; N] = std::array::from_fn(|_| None);
    checked.object(|checked, key| {
        let key = key.unescaped(text)?;
        let slot = keys
            .iter()
            .position(|k| *k == key)
            .and_then(|at| values.get_mut(at))?;
        once(slot, string(checked, text)?)
    })?;
    let mut values = values.into_iter();
    let read: [Option<String>; N] = std::array::from_fn(|_| values.next().flatten());
    read.iter()
        .all(Option::is_some)
        .then(|| read.map(Option::unwrap_or_default))
}

fn group_version_kind(checked: &mut Checked<'_>, text: &str) -> Option<GroupVersionKind> {
    let [group, version, kind] = strings(checked, text, ["group", "version", "kind"])?;
    Some(GroupVersionKind { group, version, kind })
}

/// Made by serde as serde makes it from JSON (its private `api_version` left empty, which the
/// JSON of a review never sets).
fn group_version_resource(checked: &mut Checked<'_>, text: &str) -> Option<GroupVersionResource> {
    let [group, version, resource] = strings(checked, text, ["group", "version", "resource"])?;
    let fields = [("group", group), ("version", version), ("resource", resource)];
    GroupVersionResource::deserialize(MapDeserializer::<_, ValueError>::new(fields.into_iter())).ok()
}

fn operation(checked: &mut Checked<'_>, text: &str) -> Option<Operation> {
    match &*checked.string_value()?.unescaped(text)? {
        "CREATE" => Some(Operation::Create),
        "UPDATE" => Some(Operation::Update),
        "DELETE" => Some(Operation::Delete),
        "CONNECT" => Some(Operation::Connect),
        _ => None,
    }
}

/// `userInfo` with strings, a list of strings and a map of lists of strings, as
/// kube-apiserver sends it (a `null` inside, or any other field, is left to serde).
fn user_info(checked: &mut Checked<'_>, text: &str) -> Option<UserInfo> {
    let mut user = UserInfo::default();
    checked.object(|checked, key| match &*key.unescaped(text)? {
        "username" => once(&mut user.username, string(checked, text)?),
        "uid" => once(&mut user.uid, string(checked, text)?),
        "groups" => once(&mut user.groups, string_list(checked, text)?),
        "extra" => {
            let mut extra = BTreeMap::new();
            checked.object(|checked, key| {
                let key = key.unescaped(text)?.into_owned();
                let values = string_list(checked, text)?;
                // A repeated key keeps its last value in serde's map; left to it all the same.
                extra.insert(key, values).is_none().then_some(())
            })?;
            once(&mut user.extra, extra)
        }
        _ => None,
    })?;
    Some(user)
}

fn string_list(checked: &mut Checked<'_>, text: &str) -> Option<Vec<String>> {
    let mut list = Vec::new();
    checked.array(|checked| {
        list.push(string(checked, text)?);
        Some(())
    })?;
    Some(list)
}

/// `options`: `null` (none) or any JSON, kept as a tree.
fn options(checked: &mut Checked<'_>, text: &str) -> Option<Option<RawExtension>> {
    if checked.next_byte()? == b'n' {
        checked.value()?;
        return Some(None);
    }
    let value = text.get(checked.value()?)?;
    serde_json::from_str(value)
        .ok()
        .map(|json| Some(RawExtension(json)))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;
    use serde_json::Value as Json;

    use super::*;

    /// The request object `text` typed here; `None` when it is refused or unusual.
    fn typed(text: &str) -> Option<Json> {
        let mut checked = Checked::new(text);
        let mut fields = TypedFields::default();
        checked.object(|checked, key| fields.read(&key.unescaped(text)?, checked, text))?;
        checked.at_end().then_some(())?;
        serde_json::to_value(fields.finish()?).ok()
    }

    /// serde's reading of the same text, the reference.
    fn serde(text: &str) -> Option<Json> {
        let request: AdmissionRequest<DynamicObject> = serde_json::from_str(text).ok()?;
        serde_json::to_value(request).ok()
    }

    #[test]
    fn recorded_requests_are_typed_as_serde_types_them() {
        let mut compared = 0;
        for (path, text) in crate::eval::review::tests::recorded_reviews() {
            let Ok(mut review) = serde_json::from_slice::<Json>(&text) else {
                continue;
            };
            let Some(Json::Object(request)) = review.get_mut("request") else {
                continue;
            };
            request.remove("object");
            request.remove("oldObject");
            let text = Json::Object(request.clone()).to_string();
            let reference = serde(&text);
            assert!(reference.is_some(), "{}", path.display());
            assert_eq!(typed(&text), reference, "{}", path.display());
            compared += 1;
        }
        assert!(compared > 10, "only {compared} requests");
    }

    #[test]
    fn unusual_fields_are_left_to_serde() {
        let usual = r#"{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"},
            "resource":{"group":"","version":"v1","resource":"pods"},"operation":"DELETE",
            "userInfo":{"username":"a"}}"#;
        assert!(typed(usual).is_some());
        for (from, to) in [
            (r#""uid":"u""#, r#""uid":"u","uid":"v""#),
            (r#""uid":"u""#, r#""uid":1"#),
            (r#""uid":"u""#, r#""name":null,"uid":"u""#),
            (r#""uid":"u""#, r#""dryRun":null,"uid":"u""#),
            (r#""kind":"Pod""#, r#""kind":"Pod","x":1"#),
            (r#""resource":"pods""#, r#""resource":"pods","api_version":"v1""#),
            (r#""username":"a""#, r#""username":null"#),
            (r#""username":"a""#, r#""username":"a","x":1"#),
            ("DELETE", "delete"),
        ] {
            let text = usual.replacen(from, to, 1);
            assert_ne!(text, usual);
            assert_eq!(typed(&text), None, "{text}");
        }
    }

    /// A field's text: a usual value, another JSON type, `null`, a repeat, an escape...
    fn field(key: &'static str, values: &'static [&'static str]) -> impl Strategy<Value = String> {
        proptest::sample::select(values).prop_map(move |value| match value {
            "" => String::new(),
            value => format!(r#""{key}":{value},"#),
        })
    }

    const GVK: &[&str] = &[
        "",
        r#"{"group":"apps","version":"v1","kind":"StatefulSet"}"#,
        r#"{"group":"","version":"v1","kind":"P\u006fd"}"#,
        r#"{"version":"v1","kind":"Pod"}"#,
        r#"{"group":"","version":"v1","kind":"Pod","x":[1]}"#,
        r#"{"group":"","group":"a","version":"v1","kind":"Pod"}"#,
        r#"{"group":null,"version":"v1","kind":"Pod"}"#,
        r#"{ "kind" : "Pod" , "version" : "v1" , "group" : "" }"#,
        "null",
        r#""Pod""#,
    ];
    const GVR: &[&str] = &[
        "",
        r#"{"group":"apps","version":"v1","resource":"statefulsets"}"#,
        r#"{"group":"","version":"v1","resource":"pods","api_version":"v1"}"#,
        r#"{"group":"","version":"v1"}"#,
        r#"{"resource":"pods","version":"v1","group":""}"#,
        "null",
        "[]",
    ];
    const STRING: &[&str] = &["", r#""a""#, r#""""#, r#""a\"b\u00e9\n""#, "null", "1", "[\"a\"]"];
    const OPERATION: &[&str] = &[
        "",
        r#""CREATE""#,
        r#""UPDATE""#,
        r#""DELETE""#,
        r#""CONNECT""#,
        r#""DEL\u0045TE""#,
        r#""delete""#,
        r#"{"DELETE":null}"#,
        "null",
    ];
    const USER: &[&str] = &[
        "",
        r#"{"username":"system:serviceaccount:db:op","uid":"u","groups":["a","b"],"extra":{"k":["v"],"x\ty":[]}}"#,
        "{}",
        r#"{"username":null}"#,
        r#"{"groups":null}"#,
        r#"{"groups":["a",1]}"#,
        r#"{"groups":["a","a"]}"#,
        r#"{"extra":{"k":["v"],"k":["w"]}}"#,
        r#"{"extra":{"k":null}}"#,
        r#"{"username":"a","username":"b"}"#,
        r#"{"x":1,"username":"a"}"#,
        "null",
        "[]",
    ];
    const BOOLEAN: &[&str] = &["", "true", "false", "null", r#""true""#, "0"];
    const OPTIONS: &[&str] = &[
        "",
        "null",
        r#"{"kind":"DeleteOptions","n":1.5e3}"#,
        "[]",
        "1",
        r#""x""#,
    ];
    const OTHER: &[&str] = &["", r#"{"a":[1,{"b":null}]}"#];

    fn request() -> impl Strategy<Value = String> {
        let ids = (
            field("uid", STRING),
            field("kind", GVK),
            field("resource", GVR),
            field("subResource", STRING),
            field("requestKind", GVK),
            field("requestResource", GVR),
            field("requestSubResource", STRING),
        );
        let rest = (
            field("name", STRING),
            field("namespace", STRING),
            field("operation", OPERATION),
            field("userInfo", USER),
            field("dryRun", BOOLEAN),
            field("options", OPTIONS),
            field("other", OTHER),
        );
        (ids, rest, any::<proptest::sample::Index>(), any::<bool>()).prop_map(
            |(ids, rest, repeat, repeated)| {
                let mut fields = vec![ids.0, ids.1, ids.2, ids.3, ids.4, ids.5, ids.6];
                fields.extend([rest.0, rest.1, rest.2, rest.3, rest.4, rest.5, rest.6]);
                if repeated {
                    let again = repeat.get(&fields).clone();
                    fields.push(again);
                }
                let body = fields.concat();
                format!("{{{}}}", body.strip_suffix(',').unwrap_or(&body))
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        /// Whenever the fields are typed here, they are what serde makes of them.
        #[test]
        fn typed_fields_agree_with_serde(text in request()) {
            if let Some(typed) = typed(&text) {
                prop_assert_eq!(Some(typed), serde(&text), "{}", text);
            }
        }
    }

    /// The usual request is typed here, whichever of its optional fields it has.
    #[test]
    fn usual_requests_are_typed_here() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let usual = (
            field("subResource", &["", r#""status""#, "null"]),
            field("requestKind", &GVK[..2]),
            field("namespace", &["", r#""ns""#, "null"]),
            field("dryRun", &BOOLEAN[..3]),
            field("options", &OPTIONS[..3]),
        );
        for _ in 0..64 {
            let (sub, kind, namespace, dry_run, options) = usual.new_tree(&mut runner).unwrap().current();
            let text = format!(
                r#"{{{sub}{kind}{namespace}{dry_run}{options}"uid":"u","kind":{},"resource":{},"operation":"UPDATE","userInfo":{}}}"#,
                GVK[1], GVR[1], USER[1]
            );
            assert!(typed(&text).is_some(), "{text}");
            assert_eq!(typed(&text), serde(&text), "{text}");
        }
    }
}
