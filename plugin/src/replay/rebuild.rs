//! One audit event back into the admission requests kube-apiserver sent its webhooks: the
//! operation from the verb, the user (the impersonated one when there is one), the objects from
//! the event's request and response bodies and — where the log cannot have it, the object
//! before an update or a delete — from the cluster snapshot. A `deletecollection` becomes one
//! unnamed DELETE per object it deleted, as kube-apiserver judges it.

use policies_cel::ClusterView;
use policies_cel::cluster::json::to_json;
use serde_json::{Value as Json, json};

use crate::kinds::split_api_version;
use crate::known_kinds;
use crate::replay::event::{Event, ObjectRef};
use crate::review::previous::{before_update, recorded_template};
use crate::review::{
    GroupVersionKind, GroupVersionResource, KindSpec, Operation, RequestSpec, ResourceSpec, UserInfoSpec,
};
use crate::selector::{Selectors, select};

/// Why an event is not replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Skip {
    /// get, list, watch and the like: admission never sees them.
    ReadOnly,
    /// RequestReceived / ResponseStarted: the same request is replayed at ResponseComplete.
    NotComplete,
    /// The API server refused it (authorization, validation, another webhook): it never happened.
    Failed,
    /// A deletecollection whose objects cannot be told: the log does not list them, and its
    /// field selector names a field the model does not keep.
    DeleteCollection,
    /// A create or update logged below the Request level: no object to judge.
    NoBody,
    /// The kind behind the resource is unknown (a custom resource the snapshot has no CRD for).
    UnknownKind,
}

impl Skip {
    /// How the report names the reason.
    pub fn describe(self) -> &'static str {
        match self {
            Skip::ReadOnly => "read-only verbs",
            Skip::NotComplete => "stages other than ResponseComplete",
            Skip::Failed => "requests the API server refused",
            Skip::DeleteCollection => {
                "deletecollection whose objects cannot be told (not listed in the log; a field selector on other fields than metadata.name/namespace)"
            }
            Skip::NoBody => "create/update logged without a request body (level below Request)",
            Skip::UnknownKind => "resources of an unknown kind",
        }
    }
}

/// The admission requests of `event`: its one request, or for a `deletecollection` one DELETE
/// per object it deleted, as kube-apiserver judges a collection: each without a name, the
/// object as `oldObject`. The objects are the ones the log lists (the response of a
/// RequestResponse-level event), else those of the model the request's namespace and selectors
/// select, in name order.
pub fn rebuild_all(event: &Event, cluster: &dyn ClusterView) -> Result<Vec<RequestSpec>, Skip> {
    if event.verb != "deletecollection" {
        return rebuild(event, cluster).map(|spec| vec![spec]);
    }
    completed(event)?;
    let object_ref = event.object_ref.clone().ok_or(Skip::ReadOnly)?;
    let kind = kind_of(event, &object_ref, None, cluster).ok_or(Skip::UnknownKind)?;
    let namespace = object_ref.namespace.clone().filter(|n| !n.is_empty());
    let objects = match listed(event, &kind.kind) {
        Some(items) => items,
        None => {
            let selectors = Selectors::of_uri(&event.request_uri).map_err(|_| Skip::DeleteCollection)?;
            select(
                cluster,
                (&kind.group, &kind.kind),
                namespace.as_deref(),
                &selectors,
            )
            .into_iter()
            .map(to_json)
            .collect()
        }
    };
    let options = delete_options(event);
    Ok(objects
        .into_iter()
        .enumerate()
        .map(|(index, object)| RequestSpec {
            uid: Some(format!("{}-{index}", event.audit_id)),
            seed: format!("{}-{index}", event.audit_id),
            operation: Some(Operation::Delete),
            object: None,
            old_object: Some(object),
            kind: Some(KindSpec::Full(kind.clone())),
            resource: Some(resource_of(&object_ref)),
            sub_resource: None,
            namespace: namespace.clone(),
            name: Some(String::new()),
            user_info: Some(user_of(event)),
            dry_run: event.dry_run(),
            options: options.clone(),
        })
        .collect())
}

/// The objects a deletecollection's logged response lists (a `…List` of `kind`).
fn listed(event: &Event, kind: &str) -> Option<Vec<Json>> {
    let items = event.response_object.as_ref()?.get("items")?.as_array()?;
    Some(
        items
            .iter()
            .filter(|item| item.get("kind").is_none() || is_object_of(item, kind))
            .cloned()
            .collect(),
    )
}

/// Err when the event is not a request that took effect: an earlier stage, or refused.
fn completed(event: &Event) -> Result<(), Skip> {
    if event.stage != "ResponseComplete" {
        return Err(Skip::NotComplete);
    }
    if event
        .response_status
        .as_ref()
        .and_then(|s| s.code)
        .is_some_and(|code| code >= 400)
    {
        return Err(Skip::Failed);
    }
    Ok(())
}

/// The admission request of `event` (one object: a deletecollection is [`rebuild_all`]'s), or why
/// there is none.
fn rebuild(event: &Event, cluster: &dyn ClusterView) -> Result<RequestSpec, Skip> {
    let operation = match event.verb.as_str() {
        "create" => Operation::Create,
        "update" | "patch" => Operation::Update,
        "delete" => Operation::Delete,
        "deletecollection" => return Err(Skip::DeleteCollection),
        _ => return Err(Skip::ReadOnly),
    };
    completed(event)?;
    let object_ref = event.object_ref.clone().ok_or(Skip::ReadOnly)?;
    let sub_resource = object_ref.subresource.clone().filter(|s| !s.is_empty());
    let kind = kind_of(event, &object_ref, sub_resource.as_deref(), cluster).ok_or(Skip::UnknownKind)?;
    let name = object_ref.name.clone().unwrap_or_default();
    let namespace = object_ref.namespace.clone().filter(|n| !n.is_empty());
    let stored = stored(&object_ref, cluster);

    let body = |value: &Option<Json>| value.clone().filter(|v| is_object_of(v, &kind.kind));
    let new_object = body(&event.response_object).or_else(|| body(&event.request_object));
    let (object, old_object) = match operation {
        Operation::Create => (Some(new_object.ok_or(Skip::NoBody)?), None),
        Operation::Update => {
            let object = new_object.ok_or(Skip::NoBody)?;
            let patch = (event.verb == "patch")
                .then_some(event.request_object.as_ref())
                .flatten();
            let recorded = recorded_template(cluster, &kind, namespace.as_deref(), &name);
            let old = before_update(
                &kind,
                sub_resource.as_deref(),
                &object,
                stored.as_ref(),
                patch,
                recorded,
            );
            (Some(object), Some(old))
        }
        _ => {
            let old = body(&event.response_object)
                .or(stored)
                .unwrap_or_else(|| json!({"metadata": {"name": name, "namespace": namespace}}));
            (None, Some(old))
        }
    };
    let options = (operation == Operation::Delete)
        .then(|| delete_options(event))
        .flatten();
    Ok(RequestSpec {
        uid: Some(event.audit_id.clone()).filter(|id| !id.is_empty()),
        seed: event.audit_id.clone(),
        operation: Some(operation),
        object,
        old_object,
        kind: Some(KindSpec::Full(kind)),
        resource: Some(resource_of(&object_ref)),
        sub_resource,
        namespace,
        name: Some(name),
        user_info: Some(user_of(event)),
        dry_run: event.dry_run(),
        options,
    })
}

/// The DeleteOptions the request sent, when the log has them.
fn delete_options(event: &Event) -> Option<Json> {
    event
        .request_object
        .clone()
        .filter(|o| o["kind"] == "DeleteOptions")
}

fn resource_of(object_ref: &ObjectRef) -> ResourceSpec {
    ResourceSpec::Full(GroupVersionResource {
        group: object_ref.api_group.clone().unwrap_or_default(),
        version: object_ref.api_version.clone().unwrap_or_else(|| "v1".into()),
        resource: object_ref.resource.clone(),
    })
}

/// Who the request acted as.
fn user_of(event: &Event) -> UserInfoSpec {
    let user = event.effective_user();
    UserInfoSpec {
        username: user.username.clone().unwrap_or_default(),
        uid: user.uid.clone(),
        groups: user.groups.clone(),
        extra: user.extra.clone().unwrap_or_default(),
    }
}

/// True when `value` is an object of `kind` (not a Status or options document).
fn is_object_of(value: &Json, kind: &str) -> bool {
    value.get("kind").and_then(Json::as_str) == Some(kind)
}

/// The kind of the request's object: the subresource's own kind (Scale, Eviction), the kind in
/// the logged bodies, or the kind the snapshot knows at the resource.
fn kind_of(
    event: &Event,
    object_ref: &ObjectRef,
    sub_resource: Option<&str>,
    cluster: &dyn ClusterView,
) -> Option<GroupVersionKind> {
    let gvk = |group: &str, version: &str, kind: &str| GroupVersionKind {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
    };
    match sub_resource {
        Some("scale") => return Some(gvk("autoscaling", "v1", "Scale")),
        Some("eviction") => return Some(gvk("policy", "v1", "Eviction")),
        _ => {}
    }
    let group = object_ref.api_group.as_deref().unwrap_or_default();
    let version = object_ref.api_version.as_deref().unwrap_or("v1");
    let logged = [&event.response_object, &event.request_object]
        .into_iter()
        .flatten()
        .find_map(|body| {
            let (body_group, body_version) = split_api_version(body.get("apiVersion")?.as_str()?);
            let kind = body.get("kind")?.as_str()?;
            // A list (a deletecollection's response) names its items' kind `…List`.
            let listing = body.get("items").is_some_and(Json::is_array);
            (body_group == group && !listing && !matches!(kind, "Status" | "DeleteOptions"))
                .then(|| gvk(body_group, body_version, kind))
        });
    logged.or_else(|| {
        known_kinds::by_resource(cluster, group, &object_ref.resource).map(|k| gvk(group, version, &k.kind))
    })
}

/// The object as the snapshot holds it.
fn stored(object_ref: &ObjectRef, cluster: &dyn ClusterView) -> Option<Json> {
    let group = object_ref.api_group.as_deref().unwrap_or_default();
    let kind = known_kinds::by_resource(cluster, group, &object_ref.resource)?;
    known_kinds::stored(
        cluster,
        &kind,
        object_ref.namespace.as_deref().unwrap_or_default(),
        object_ref.name.as_deref().unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use policies_cel::EmptyCluster;
    use policies_cel::cluster::{ClusterModel, project};

    use super::*;

    fn event(value: Json) -> Event {
        serde_json::from_value(value).unwrap()
    }

    fn delete_pvc() -> Json {
        json!({"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "RequestResponse", "auditID": "a-1",
               "stage": "ResponseComplete", "requestURI": "/api/v1/namespaces/db/persistentvolumeclaims/data-0?dryRun=All",
               "verb": "delete", "user": {"username": "system:serviceaccount:db:operator"},
               "objectRef": {"resource": "persistentvolumeclaims", "namespace": "db", "name": "data-0", "apiVersion": "v1"},
               "responseStatus": {"code": 200}})
    }

    #[test]
    fn a_delete_becomes_a_delete_of_the_named_object_with_its_dry_run() {
        let spec = rebuild(&event(delete_pvc()), &EmptyCluster).unwrap();
        assert_eq!(spec.operation, Some(Operation::Delete));
        assert_eq!(spec.uid.as_deref(), Some("a-1"));
        assert!(spec.dry_run);
        assert_eq!(spec.old_object.unwrap()["metadata"]["name"], "data-0");
        let Some(KindSpec::Full(kind)) = spec.kind else {
            panic!("no kind")
        };
        assert_eq!(kind.kind, "PersistentVolumeClaim");
    }

    #[test]
    fn the_impersonated_user_is_the_one_judged() {
        let mut value = delete_pvc();
        value["impersonatedUser"] = json!({"username": "system:serviceaccount:db:backup"});
        let spec = rebuild(&event(value), &EmptyCluster).unwrap();
        assert_eq!(
            spec.user_info.unwrap().username,
            "system:serviceaccount:db:backup"
        );
    }

    #[test]
    fn reads_incomplete_failed_and_bodiless_events_are_skipped() {
        let with = |field: &str, value: Json| {
            let mut v = delete_pvc();
            v[field] = value;
            rebuild(&event(v), &EmptyCluster).err()
        };
        assert_eq!(with("verb", json!("list")), Some(Skip::ReadOnly));
        let mut collection = delete_pvc();
        collection["verb"] = json!("deletecollection");
        collection["requestURI"] =
            json!("/api/v1/namespaces/db/persistentvolumeclaims?fieldSelector=status.phase%3DBound");
        assert_eq!(
            rebuild_all(&event(collection), &EmptyCluster).err(),
            Some(Skip::DeleteCollection),
            "a field the model does not keep"
        );
        assert_eq!(with("stage", json!("RequestReceived")), Some(Skip::NotComplete));
        assert_eq!(with("responseStatus", json!({"code": 409})), Some(Skip::Failed));
        assert_eq!(with("verb", json!("create")), Some(Skip::NoBody));
        let mut custom = delete_pvc();
        custom["objectRef"] =
            json!({"resource": "widgets", "apiGroup": "example.com", "apiVersion": "v1", "name": "w"});
        assert_eq!(
            rebuild(&event(custom), &EmptyCluster).err(),
            Some(Skip::UnknownKind)
        );
    }

    #[test]
    fn a_scale_patch_is_judged_against_the_stored_replicas() {
        let mut model = ClusterModel::new();
        let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "pg", "namespace": "db", "uid": "u"},
                         "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "pg"}}}});
        let object = project(&sts, &mut model).unwrap();
        model.insert(object);
        let patch = json!({"kind": "Event", "apiVersion": "audit.k8s.io/v1", "auditID": "a-2", "stage": "ResponseComplete",
            "verb": "patch", "user": {"username": "system:serviceaccount:db:operator"},
            "objectRef": {"resource": "statefulsets", "namespace": "db", "name": "pg", "apiGroup": "apps", "apiVersion": "v1", "subresource": "scale"},
            "requestObject": {"spec": {"replicas": 1}},
            "responseObject": {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "pg", "namespace": "db"}, "spec": {"replicas": 1}}});
        let spec = rebuild(&event(patch), &model).unwrap();
        assert_eq!(spec.operation, Some(Operation::Update));
        assert_eq!(spec.old_object.unwrap()["spec"]["replicas"], 3);
        assert_eq!(spec.object.unwrap()["spec"]["replicas"], 1);
    }
}
