//! Building an AdmissionReview the way kube-apiserver sends it, from the few facts a test case (or
//! `eval`) gives: the operation, the objects and the user. Kind, resource, name, namespace,
//! options and uid are derived when not given (`resolve`, `user`).

pub mod previous;
mod resolve;
mod spec;
mod user;

pub use spec::{
    GroupVersionKind, GroupVersionResource, KindSpec, Operation, RequestSpec, ResourceSpec, ReviewError,
    UserInfoSpec,
};
pub use user::{uid_from, user_info};

use serde_json::{Map, Value as Json, json};

use crate::review::resolve::{
    complete_object, metadata_str, resolve_kind, resolve_namespace, resolve_resource,
};
use crate::review::spec::fail;

/// Builds a whole `admission.k8s.io/v1` AdmissionReview.
pub fn build_review(spec: &RequestSpec) -> Result<Json, ReviewError> {
    Ok(json!({
        "kind": "AdmissionReview",
        "apiVersion": "admission.k8s.io/v1",
        "request": build_request(spec)?,
    }))
}

/// Builds the AdmissionRequest (the review's `request`).
pub fn build_request(spec: &RequestSpec) -> Result<Json, ReviewError> {
    let operation = operation(spec)?;
    let mut object = spec.object.clone();
    let mut old_object = spec.old_object.clone();
    for (field, value) in [("object", &object), ("oldObject", &old_object)] {
        if value.as_ref().is_some_and(|v| !v.is_object()) {
            return fail(format!("{field} must be a mapping (a Kubernetes object)"));
        }
    }
    let subject = object.as_ref().or(old_object.as_ref());
    let kind = resolve_kind(spec, subject)?;
    let sub_resource = spec.sub_resource.clone().or_else(|| match kind.kind.as_str() {
        "Eviction" if kind.group == "policy" => Some("eviction".to_owned()),
        "Scale" if kind.group == "autoscaling" => Some("scale".to_owned()),
        _ => None,
    });
    let resource = resolve_resource(spec, &kind)?;
    let name = spec
        .name
        .clone()
        .or_else(|| subject.and_then(|o| metadata_str(o, "name")))
        .unwrap_or_default();
    let namespace = resolve_namespace(spec, subject, &resource, operation, &name);

    // kube-apiserver hands webhooks complete objects: apiVersion/kind set, namespace from the URL.
    let fills_identity = sub_resource.is_none() || sub_resource.as_deref() == Some("status");
    for value in [&mut object, &mut old_object].into_iter().flatten() {
        complete_object(value, fills_identity.then_some(&kind), namespace.as_deref());
    }

    let mut request = Map::new();
    request.insert(
        "uid".into(),
        Json::String(spec.uid.clone().unwrap_or_else(|| uid_from(&spec.seed))),
    );
    request.insert("kind".into(), json!(kind));
    request.insert("resource".into(), json!(resource));
    if let Some(sub) = &sub_resource {
        request.insert("subResource".into(), Json::String(sub.clone()));
    }
    request.insert("requestKind".into(), json!(kind));
    request.insert("requestResource".into(), json!(resource));
    if let Some(sub) = &sub_resource {
        request.insert("requestSubResource".into(), Json::String(sub.clone()));
    }
    // kube-apiserver leaves an empty name out (a deletecollection's objects, generateName).
    if !name.is_empty() {
        request.insert("name".into(), Json::String(name));
    }
    if let Some(namespace) = namespace {
        request.insert("namespace".into(), Json::String(namespace));
    }
    request.insert("operation".into(), Json::String(operation.as_str().into()));
    request.insert("userInfo".into(), user_info(spec.user_info.as_ref()));
    request.insert("object".into(), object.unwrap_or(Json::Null));
    request.insert("oldObject".into(), old_object.unwrap_or(Json::Null));
    request.insert("dryRun".into(), Json::Bool(spec.dry_run));
    request.insert(
        "options".into(),
        options(operation, spec.options.as_ref(), spec.dry_run)?,
    );
    Ok(Json::Object(request))
}

fn operation(spec: &RequestSpec) -> Result<Operation, ReviewError> {
    let op = match (spec.operation, &spec.object, &spec.old_object) {
        (Some(op), _, _) => op,
        (None, Some(_), Some(_)) => Operation::Update,
        (None, Some(_), None) => Operation::Create,
        (None, None, Some(_)) => Operation::Delete,
        (None, None, None) => {
            return fail("operation is required when neither object nor oldObject is given");
        }
    };
    match (op, spec.object.is_some(), spec.old_object.is_some()) {
        (Operation::Create, false, _) => fail("a CREATE needs the new object (`object`)"),
        (Operation::Create, true, true) => fail("a CREATE has no oldObject"),
        (Operation::Update, false, _) | (Operation::Update, _, false) => {
            fail("an UPDATE needs both `object` and `oldObject`")
        }
        (Operation::Delete, true, _) => {
            fail("a DELETE carries the object being deleted as `oldObject` (`object` is null on DELETE)")
        }
        _ => Ok(op),
    }
}

fn options(operation: Operation, given: Option<&Json>, dry_run: bool) -> Result<Json, ReviewError> {
    let mut options = match operation {
        Operation::Create => json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}),
        Operation::Update => json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}),
        Operation::Delete => {
            json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "propagationPolicy": "Background"})
        }
        Operation::Connect => Json::Object(Map::new()),
    };
    match given {
        None | Some(Json::Null) => {}
        Some(Json::Object(fields)) => {
            if let Some(map) = options.as_object_mut() {
                map.extend(fields.clone());
            }
        }
        Some(_) => return fail("options must be a mapping (e.g. `options: {propagationPolicy: Orphan}`)"),
    }
    if dry_run && let Some(map) = options.as_object_mut() {
        map.entry("dryRun").or_insert(json!(["All"]));
    }
    Ok(if options.as_object().is_some_and(Map::is_empty) {
        Json::Null
    } else {
        options
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn statefulset(replicas: i64) -> Json {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
               "metadata": {"name": "pg", "namespace": "databases"}, "spec": {"replicas": replicas}})
    }

    fn operator() -> Option<UserInfoSpec> {
        Some(UserInfoSpec {
            username: "system:serviceaccount:databases:pg-operator".into(),
            uid: None,
            groups: None,
            extra: BTreeMap::new(),
        })
    }

    #[test]
    fn update_is_derived_from_both_objects() {
        let spec = RequestSpec {
            seed: "s".into(),
            object: Some(statefulset(1)),
            old_object: Some(statefulset(5)),
            user_info: operator(),
            ..RequestSpec::default()
        };
        let request = build_request(&spec).unwrap();
        assert_eq!(request["operation"], "UPDATE");
        assert_eq!(
            request["kind"],
            json!({"group": "apps", "version": "v1", "kind": "StatefulSet"})
        );
        assert_eq!(
            request["resource"],
            json!({"group": "apps", "version": "v1", "resource": "statefulsets"})
        );
        assert_eq!(
            (request["name"].as_str(), request["namespace"].as_str()),
            (Some("pg"), Some("databases"))
        );
        assert_eq!(
            request["userInfo"]["groups"],
            json!([
                "system:serviceaccounts",
                "system:serviceaccounts:databases",
                "system:authenticated"
            ])
        );
        assert_eq!(request["options"]["kind"], "UpdateOptions");
        assert_eq!(
            request["uid"],
            build_request(&spec).unwrap()["uid"],
            "uids are stable"
        );
    }

    #[test]
    fn namespace_delete_reports_its_name_as_namespace() {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "databases"}});
        let spec = RequestSpec {
            old_object: Some(ns),
            dry_run: true,
            ..RequestSpec::default()
        };
        let request = build_request(&spec).unwrap();
        assert_eq!(request["operation"], "DELETE");
        assert_eq!(request["namespace"], "databases");
        assert_eq!(request["object"], Json::Null);
        assert_eq!(request["dryRun"], true);
        assert_eq!(
            request["options"],
            json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "propagationPolicy": "Background", "dryRun": ["All"]})
        );
        assert_eq!(request["oldObject"]["metadata"].get("namespace"), None);
    }

    #[test]
    fn eviction_targets_the_pods_subresource() {
        let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction",
                              "metadata": {"name": "pg-0", "namespace": "databases"}});
        let request = build_request(&RequestSpec {
            object: Some(eviction),
            ..RequestSpec::default()
        })
        .unwrap();
        assert_eq!(
            request["resource"],
            json!({"group": "", "version": "v1", "resource": "pods"})
        );
        assert_eq!(request["subResource"], "eviction");
        assert_eq!(request["requestSubResource"], "eviction");
        assert_eq!(request["name"], "pg-0");
    }

    #[test]
    fn scale_needs_a_resource() {
        let scale = json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "pg"}});
        let mut spec = RequestSpec {
            object: Some(scale.clone()),
            old_object: Some(scale),
            ..RequestSpec::default()
        };
        assert!(build_request(&spec).is_err());
        spec.resource = Some(ResourceSpec::Name("statefulsets".into()));
        let request = build_request(&spec).unwrap();
        assert_eq!(request["resource"]["group"], "apps");
        assert_eq!(request["subResource"], "scale");
        assert_eq!(request["namespace"], "default");
        assert_eq!(request["object"]["kind"], "Scale");
    }

    #[test]
    fn inline_objects_are_completed() {
        let spec = RequestSpec {
            kind: Some(KindSpec::Name("Deployment".into())),
            namespace: Some("shop".into()),
            object: Some(json!({"metadata": {"name": "web"}, "spec": {"replicas": 2}})),
            ..RequestSpec::default()
        };
        let request = build_request(&spec).unwrap();
        assert_eq!(request["object"]["apiVersion"], "apps/v1");
        assert_eq!(request["object"]["metadata"]["namespace"], "shop");
        assert_eq!(request["options"]["kind"], "CreateOptions");
    }

    #[test]
    fn contradictions_are_errors() {
        let obj = Some(statefulset(1));
        let bad = [
            RequestSpec {
                operation: Some(Operation::Delete),
                object: obj.clone(),
                ..RequestSpec::default()
            },
            RequestSpec {
                operation: Some(Operation::Update),
                object: obj.clone(),
                ..RequestSpec::default()
            },
            RequestSpec::default(),
            RequestSpec {
                object: Some(json!({"metadata": {}})),
                ..RequestSpec::default()
            },
        ];
        for spec in bad {
            assert!(build_request(&spec).is_err(), "{spec:?}");
        }
    }

    #[test]
    fn uids_look_like_uuids() {
        let uid = uid_from("x");
        assert_eq!(uid.len(), 36);
        assert_eq!(uid.as_bytes()[14], b'4');
        assert_ne!(uid, uid_from("y"));
    }
}
