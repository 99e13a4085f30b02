//! The fast path's parse: only the request's metadata (uid, kinds, resources, operation, user,
//! namespace/name, dryRun), read straight from the body with the objects skipped unparsed. It
//! is enough for the self-protection pre-check and the policy pre-filter; the full
//! [`parse`](super::parse::parse) (objects as CEL values) runs only when one of them hits.
//!
//! Anything unusual returns `None`, and the caller falls back to the full parse, whose errors
//! are the ones reported.

use kube_core::admission::{AdmissionRequest, Operation};
use kube_core::{DynamicObject, GroupVersionKind, GroupVersionResource, TypeMeta};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    request: Option<Header>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Header {
    uid: String,
    kind: GroupVersionKind,
    resource: GroupVersionResource,
    #[serde(default)]
    sub_resource: Option<String>,
    #[serde(default)]
    request_kind: Option<GroupVersionKind>,
    #[serde(default)]
    request_resource: Option<GroupVersionResource>,
    #[serde(default)]
    request_sub_resource: Option<String>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: Option<String>,
    operation: Operation,
    user_info: k8s_openapi::api::authentication::v1::UserInfo,
    #[serde(default)]
    dry_run: bool,
}

/// The request without its objects, when the body is a plain AdmissionReview v1.
pub fn parse_header(body: &[u8]) -> Option<AdmissionRequest<DynamicObject>> {
    std::str::from_utf8(body).ok()?;
    let envelope: Envelope = serde_json::from_slice(body).ok()?;
    if envelope.api_version != "admission.k8s.io/v1" || envelope.kind != "AdmissionReview" {
        return None;
    }
    let header = envelope.request?;
    Some(AdmissionRequest::<DynamicObject> {
        types: TypeMeta {
            api_version: envelope.api_version,
            kind: envelope.kind,
        },
        uid: header.uid,
        kind: header.kind,
        resource: header.resource,
        sub_resource: header.sub_resource,
        request_kind: header.request_kind,
        request_resource: header.request_resource,
        request_sub_resource: header.request_sub_resource,
        name: header.name,
        namespace: header.namespace,
        operation: header.operation,
        user_info: header.user_info,
        object: None,
        old_object: None,
        dry_run: header.dry_run,
        options: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_agrees_with_the_full_parse() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/reviews");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let body = std::fs::read(entry.unwrap().path()).unwrap();
            let Ok(full) = crate::admission::parse::parse(&body) else {
                assert!(parse_header(&body).is_none());
                continue;
            };
            let a = &parse_header(&body).unwrap();
            let b = &full.admission;
            assert_eq!(
                (
                    &a.uid,
                    &a.resource,
                    &a.sub_resource,
                    &a.name,
                    &a.namespace,
                    a.dry_run
                ),
                (
                    &b.uid,
                    &b.resource,
                    &b.sub_resource,
                    &b.name,
                    &b.namespace,
                    b.dry_run
                )
            );
            assert_eq!(crate::admission::prefilter::operation_name(a), full.operation());
            assert_eq!(a.user_info, b.user_info);
            assert!(a.object.is_none() && a.old_object.is_none());
            seen += 1;
        }
        assert!(seen >= 5);
    }

    #[test]
    fn unusual_bodies_fall_back_to_the_full_parse() {
        assert!(parse_header(b"not json").is_none());
        assert!(
            parse_header(
                br#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{}}"#
            )
            .is_none()
        );
        assert!(parse_header(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#).is_none());
    }
}
