//! The object a report result (or an Event) concerns: the request's object, or the parent of a
//! subresource (a Deployment for its `scale`, a Pod for its `eviction`).

use kube_core::DynamicObject;
use kube_core::admission::AdmissionRequest;

use crate::cluster::api::kinds::is_cluster_scoped;
use crate::impact::subject::builtin_kind;

/// An object reference (`corev1.ObjectReference`'s fields that reports and Events carry).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Subject {
    /// `group/version`, or `version` for the core group.
    pub api_version: String,
    pub kind: String,
    /// Empty for a cluster-scoped object.
    pub namespace: String,
    pub name: String,
}

impl Subject {
    /// The object `admission` acts on, named `name` (the request's name, or the object's name
    /// of an unnamed request). A subresource's parent kind comes from the resource's plural
    /// (built-in kinds; a custom resource's subresource keeps its plural as the kind).
    pub fn of(admission: &AdmissionRequest<DynamicObject>, name: &str) -> Self {
        let resource = &admission.resource;
        let kind = match admission.sub_resource.as_deref() {
            None | Some("") => admission.kind.kind.clone(),
            Some(_) => builtin_kind(&resource.group, &resource.resource)
                .map_or_else(|| resource.resource.clone(), str::to_owned),
        };
        let api_version = if resource.group.is_empty() {
            resource.version.clone()
        } else {
            format!("{}/{}", resource.group, resource.version)
        };
        let namespace = if is_cluster_scoped(&kind) {
            String::new()
        } else {
            admission.namespace.clone().unwrap_or_default()
        };
        Self {
            api_version,
            kind,
            namespace,
            name: name.to_owned(),
        }
    }

    /// `Kind namespace/name`, or `Kind name` for a cluster-scoped object.
    pub fn display(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn admission(
        resource: (&str, &str, &str),
        sub: &str,
        kind: &str,
        namespace: &str,
    ) -> AdmissionRequest<DynamicObject> {
        serde_json::from_value(serde_json::json!({
            "uid": "u", "kind": {"group": resource.0, "version": resource.1, "kind": kind},
            "resource": {"group": resource.0, "version": resource.1, "resource": resource.2},
            "subResource": if sub.is_empty() { serde_json::Value::Null } else { sub.into() },
            "name": "x", "namespace": namespace, "operation": "UPDATE",
            "userInfo": {"username": "op"}, "dryRun": false, "options": null,
            "object": null, "oldObject": null,
        }))
        .unwrap()
    }

    #[test]
    fn a_subresource_names_its_parent_and_cluster_scoped_objects_no_namespace() {
        let scale = Subject::of(
            &admission(("apps", "v1", "deployments"), "scale", "Scale", "db"),
            "web",
        );
        assert_eq!(scale.display(), "Deployment db/web");
        assert_eq!(scale.api_version, "apps/v1");
        let pvc = Subject::of(
            &admission(
                ("", "v1", "persistentvolumeclaims"),
                "",
                "PersistentVolumeClaim",
                "db",
            ),
            "data",
        );
        assert_eq!(
            (pvc.api_version.as_str(), pvc.display()),
            ("v1", "PersistentVolumeClaim db/data".to_owned())
        );
        // kube-apiserver sets a Namespace's own name as the namespace of its requests.
        let ns = Subject::of(&admission(("", "v1", "namespaces"), "", "Namespace", "db"), "db");
        assert_eq!(ns.namespace, "");
    }
}
