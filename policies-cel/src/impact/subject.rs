//! The request as the estimate reads it: operation, target object key, the objects as JSON and
//! the delete options (borrowed from the request: never serialized again; an object's text is
//! parsed only when the estimate of its kind of change reads it).

use std::borrow::Cow;

use serde_json::Value as Json;

use crate::cluster::api::kinds::is_cluster_scoped;
use crate::cluster::{
    ClusterView, ObjectKey, ProjectError, Spec, project_spec, project_spec_text, with_scratch_model,
};
use crate::eval::Request;
use crate::eval::{Found, Objects};

/// What the request is about (its objects borrowed from the request, as they came).
#[derive(Debug)]
pub(crate) struct Subject<'a> {
    pub operation: &'static str,
    pub group: String,
    pub version: String,
    pub sub_resource: String,
    /// The object the request acts on (the parent for a subresource).
    pub key: ObjectKey,
    objects: &'a Objects,
    pub options: Option<&'a Json>,
}

/// The kind of a built-in resource, by its plural.
pub(crate) fn builtin_kind(group: &str, resource: &str) -> Option<&'static str> {
    Some(match (group, resource) {
        ("", "pods") => "Pod",
        ("", "services") => "Service",
        ("", "namespaces") => "Namespace",
        ("", "nodes") => "Node",
        ("", "persistentvolumeclaims") => "PersistentVolumeClaim",
        ("", "persistentvolumes") => "PersistentVolume",
        ("", "configmaps") => "ConfigMap",
        ("", "secrets") => "Secret",
        ("", "replicationcontrollers") => "ReplicationController",
        ("", "serviceaccounts") => "ServiceAccount",
        ("", "endpoints") => "Endpoints",
        ("apps", "deployments") => "Deployment",
        ("apps", "replicasets") => "ReplicaSet",
        ("apps", "statefulsets") => "StatefulSet",
        ("apps", "daemonsets") => "DaemonSet",
        ("apps", "controllerrevisions") => "ControllerRevision",
        ("batch", "jobs") => "Job",
        ("batch", "cronjobs") => "CronJob",
        ("policy", "poddisruptionbudgets") => "PodDisruptionBudget",
        ("discovery.k8s.io", "endpointslices") => "EndpointSlice",
        ("apiextensions.k8s.io", "customresourcedefinitions") => "CustomResourceDefinition",
        ("scheduling.k8s.io", "priorityclasses") => "PriorityClass",
        ("node.k8s.io", "runtimeclasses") => "RuntimeClass",
        _ => return None,
    })
}

/// Cluster-scoped kinds of [`builtin_kind`] the model does not hold (its scopes are the model's
/// kinds'): a what-if naming a namespace for one still acts on the cluster-wide object.
const UNMODELLED_CLUSTER_SCOPED: [&str; 2] = ["PriorityClass", "RuntimeClass"];

/// The key of the object a request acts on (the parent for a subresource): the kind comes from
/// the resource's plural (built-in, or a CRD in the model), and cluster-scoped kinds have no
/// namespace even when kube-apiserver sets one (a Namespace's own name on its requests).
pub(crate) fn target_key(request: &Request, view: &dyn ClusterView) -> ObjectKey {
    let admission = &request.admission;
    let resource = &admission.resource;
    let custom = || {
        view.of_kind("apiextensions.k8s.io", "CustomResourceDefinition")
            .into_iter()
            .find_map(|crd| match &crd.spec {
                Spec::CustomResourceDefinition {
                    group,
                    kind,
                    plural,
                    namespaced,
                } if **group == *resource.group && **plural == *resource.resource => {
                    Some((kind.to_string(), *namespaced))
                }
                _ => None,
            })
    };
    let (kind, namespaced) = match builtin_kind(&resource.group, &resource.resource) {
        Some(kind) => (
            Some(kind.to_owned()),
            !is_cluster_scoped(kind) && !UNMODELLED_CLUSTER_SCOPED.contains(&kind),
        ),
        None => custom().map_or((None, true), |(kind, namespaced)| (Some(kind), namespaced)),
    };
    let kind = kind.unwrap_or_else(|| match admission.sub_resource.as_deref() {
        None | Some("") => admission.kind.kind.clone(),
        Some(_) => resource.resource.clone(),
    });
    let namespace = if namespaced {
        admission.namespace.as_deref().unwrap_or_default()
    } else {
        ""
    };
    ObjectKey::new(&resource.group, &kind, namespace, &request.target_name())
}

impl<'a> Subject<'a> {
    pub fn new(request: &'a Request, view: &dyn ClusterView) -> Self {
        let admission = &request.admission;
        let resource = &admission.resource;
        let objects = request.objects();
        Self {
            operation: request.operation(),
            group: resource.group.clone(),
            version: resource.version.clone(),
            sub_resource: admission.sub_resource.clone().unwrap_or_default(),
            key: target_key(request, view),
            objects,
            options: objects.options.as_ref(),
        }
    }

    /// The request's `object` (none on DELETE), parsed on first read.
    pub fn object(&self) -> Option<&'a Json> {
        self.objects.object.json()
    }

    /// The spec of the request's `object` as the model projects its objects' (`project_spec`),
    /// read from the object's text while nothing has parsed it: only the fields the projection
    /// asks for are looked at, nothing is parsed into a tree. Text this reading leaves to the
    /// tree (an escaped string, an invalid spec, whose error the tree's reading gives) is
    /// projected from the parsed object. `None` without an object.
    pub fn object_spec(&self) -> Option<Result<Spec, ProjectError>> {
        let object = &self.objects.object;
        if let Some((text, outline)) = object.text_outlined()
            && let Some(spec) = with_scratch_model(|model| project_spec_text(text, outline, model))
        {
            return Some(Ok(spec));
        }
        object
            .json()
            .map(|json| with_scratch_model(|model| project_spec(json, model)))
    }

    /// The value at `path` in `object`, read without parsing the rest of the object when
    /// nothing has parsed it yet.
    pub fn object_at(&self, path: &[&str]) -> Option<Found<'a>> {
        self.objects.object.at(path)
    }

    /// `read` of the value at `path` in `object` (parsed alone when nothing has parsed the object
    /// yet); `None` when it is absent or its text does not parse.
    pub fn read_object_at<T>(&self, path: &[&str], read: impl FnOnce(&Json) -> T) -> Option<T> {
        match self.object_at(path)? {
            Found::Tree(value) => Some(read(value)),
            Found::Text(text) => serde_json::from_str::<Json>(text).ok().map(|value| read(&value)),
        }
    }

    /// The request's `oldObject` (none on CREATE), parsed on first read.
    pub fn old_object(&self) -> Option<&'a Json> {
        self.objects.old_object.json()
    }

    /// The value at `path` in `oldObject`, read without parsing the rest of the object when
    /// nothing has parsed it yet (the estimate of an UPDATE often compares one field only).
    pub fn old_object_at(&self, path: &[&str]) -> Option<Found<'a>> {
        self.objects.old_object.at(path)
    }

    /// `verb Kind namespace/name` for the estimate's `action`.
    pub fn describe(&self) -> String {
        let operation = match self.operation {
            "CREATE" if self.sub_resource == "eviction" => return self.phrase(&["evict"]),
            "CREATE" => Cow::Borrowed("create"),
            "UPDATE" => Cow::Borrowed("update"),
            "DELETE" => Cow::Borrowed("delete"),
            "CONNECT" => Cow::Borrowed("connect"),
            other => Cow::Owned(other.to_ascii_lowercase()),
        };
        if self.sub_resource.is_empty() {
            self.phrase(&[&operation])
        } else {
            self.phrase(&[&operation, " ", &self.sub_resource, " of"])
        }
    }

    /// `verbing Kind namespace/name`, to open a sentence (`deleting StatefulSet mq/rabbit`).
    pub fn activity(&self) -> String {
        let verb = match self.operation {
            "CREATE" if self.sub_resource == "eviction" => return self.phrase(&["evicting"]),
            "CREATE" => "creating",
            "UPDATE" => "updating",
            "DELETE" => "deleting",
            "CONNECT" => "connecting to",
            other => return self.phrase(&[&other.to_ascii_lowercase()]),
        };
        if self.sub_resource.is_empty() {
            self.phrase(&[verb])
        } else {
            self.phrase(&[verb, " ", &self.sub_resource, " of"])
        }
    }

    /// `words` joined, a space, then the target as messages print it.
    fn phrase(&self, words: &[&str]) -> String {
        let length = words.iter().map(|w| w.len()).sum::<usize>() + 1 + self.key.display_len();
        let mut text = String::with_capacity(length);
        words.iter().for_each(|w| text.push_str(w));
        text.push(' ');
        self.key.push_display(&mut text);
        text
    }
}
