//! Deriving what a request is about — kind, resource, namespace — from the case and its objects,
//! as kube-apiserver fills them from the URL, and completing the objects the same way.

use serde_json::{Value as Json, json};

use crate::kinds::{self, split_api_version};
use crate::review::spec::{
    GroupVersionKind, GroupVersionResource, KindSpec, Operation, RequestSpec, ResourceSpec, ReviewError, fail,
};

fn object_gvk(object: &Json) -> Option<GroupVersionKind> {
    let api_version = object.get("apiVersion")?.as_str()?;
    let kind = object.get("kind")?.as_str()?;
    let (group, version) = split_api_version(api_version);
    Some(GroupVersionKind {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
    })
}

fn known_gvk(info: &kinds::KindInfo) -> GroupVersionKind {
    GroupVersionKind {
        group: info.group.into(),
        version: info.version.into(),
        kind: info.kind.into(),
    }
}

pub(crate) fn resolve_kind(
    spec: &RequestSpec,
    subject: Option<&Json>,
) -> Result<GroupVersionKind, ReviewError> {
    let from_object = subject.and_then(object_gvk);
    match &spec.kind {
        Some(KindSpec::Full(gvk)) => Ok(gvk.clone()),
        Some(KindSpec::Name(kind)) => match from_object.filter(|gvk| gvk.kind == *kind) {
            Some(gvk) => Ok(gvk),
            None => kinds::by_kind(kind).map(known_gvk).ok_or_else(|| {
                ReviewError(format!(
                    "cannot tell the group and version of kind {kind:?}: write `kind: {{group, version, kind}}` \
                     or give an object with apiVersion"
                ))
            }),
        },
        None => from_object.ok_or_else(|| {
            ReviewError("cannot tell the kind of the request: give `kind`, or an object with apiVersion and kind".into())
        }),
    }
}

pub(crate) fn resolve_resource(
    spec: &RequestSpec,
    kind: &GroupVersionKind,
) -> Result<GroupVersionResource, ReviewError> {
    let gvr = |group: &str, version: &str, resource: &str| GroupVersionResource {
        group: group.into(),
        version: version.into(),
        resource: resource.into(),
    };
    match &spec.resource {
        Some(ResourceSpec::Full(full)) => Ok(full.clone()),
        Some(ResourceSpec::Name(text)) => match text.split('/').collect::<Vec<_>>().as_slice() {
            [group, version, resource] => Ok(gvr(group, version, resource)),
            [version, resource] => Ok(gvr("", version, resource)),
            [resource] => Ok(match kinds::by_resource(resource) {
                Some(info) => gvr(info.group, info.version, info.resource),
                None => gvr(&kind.group, &kind.version, resource),
            }),
            _ => fail(format!(
                "resource {text:?} is not `plural`, `version/plural` or `group/version/plural`"
            )),
        },
        None => match (kind.group.as_str(), kind.kind.as_str()) {
            ("policy", "Eviction") => Ok(gvr("", "v1", "pods")),
            ("autoscaling", "Scale") => {
                fail("a scale subresource request needs `resource` (e.g. `resource: statefulsets`)")
            }
            _ => {
                let known = kinds::by_kind(&kind.kind).filter(|info| info.group == kind.group);
                let plural =
                    known.map_or_else(|| kinds::guess_resource(&kind.kind), |info| info.resource.into());
                Ok(gvr(&kind.group, &kind.version, &plural))
            }
        },
    }
}

pub(crate) fn metadata_str(object: &Json, field: &str) -> Option<String> {
    object.get("metadata")?.get(field)?.as_str().map(str::to_owned)
}

pub(crate) fn resolve_namespace(
    spec: &RequestSpec,
    subject: Option<&Json>,
    resource: &GroupVersionResource,
    operation: Operation,
    name: &str,
) -> Option<String> {
    let given = spec
        .namespace
        .clone()
        .or_else(|| subject.and_then(|o| metadata_str(o, "namespace")));
    if resource.group.is_empty() && resource.resource == "namespaces" {
        // The request path of an existing Namespace is /api/v1/namespaces/<name>: kube-apiserver
        // reports <name> as the request's namespace (a CREATE posts to /api/v1/namespaces).
        return (operation != Operation::Create && !name.is_empty()).then(|| name.to_owned());
    }
    match kinds::by_resource(&resource.resource).filter(|info| info.group == resource.group) {
        Some(info) if !info.namespaced => None,
        Some(_) => Some(given.unwrap_or_else(|| "default".to_owned())),
        None => given,
    }
}

pub(crate) fn complete_object(object: &mut Json, kind: Option<&GroupVersionKind>, namespace: Option<&str>) {
    let Some(map) = object.as_object_mut() else { return };
    if let Some(kind) = kind {
        let api_version = if kind.group.is_empty() {
            kind.version.clone()
        } else {
            format!("{}/{}", kind.group, kind.version)
        };
        map.entry("apiVersion").or_insert(Json::String(api_version));
        map.entry("kind").or_insert(Json::String(kind.kind.clone()));
    }
    if let Some(namespace) = namespace
        && kind.is_none_or(|k| !(k.group.is_empty() && k.kind == "Namespace"))
        && let Some(metadata) = map.entry("metadata").or_insert_with(|| json!({})).as_object_mut()
    {
        metadata
            .entry("namespace")
            .or_insert(Json::String(namespace.to_owned()));
    }
}
