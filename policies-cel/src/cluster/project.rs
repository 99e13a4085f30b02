//! Projection: a Kubernetes object as `kubectl get -o json` prints it → the slim [`Object`].
//!
//! Only what the impact estimate and policies read is kept (identity, labels, `suture.dev/`
//! annotations, owners, and per kind a few spec fields). Strings that repeat across objects
//! (label keys and values, namespaces, kinds, owners...) go through [`ClusterModel::intern`];
//! an object's own name and uid, and other one-off names, do not ([`ClusterModel::share`]).
//! Every list is a boxed slice built to size, so no spare capacity lives as long as the object.
//! Fields the API server defaults are defaulted exactly as it does, so a
//! hand-written snapshot that leaves them out means what it would mean in a cluster. Secret
//! values are never read. Kinds the estimate does not know, custom resources included, keep
//! their identity and owners ([`Spec::Other`]): they still take part in cascades.

mod fields;
mod pod;
mod resources;
mod workload;

use serde_json::Value;

use crate::cluster::ClusterModel;
use crate::cluster::object::{Labels, Object, ObjectKey, OwnerRef, Owners, Spec, Text};
use crate::policy::path::FieldPath;

use fields::{Fields, Result, Within};

/// The prefix of the annotations kept on slim objects.
const SUTURE_ANNOTATIONS: &str = "suture.dev/";

/// Why an object could not be projected: which field, and what is wrong with it
/// (`spec.replicas: expected an integer, found "three"`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ProjectError {
    path: FieldPath,
    message: String,
}

impl ProjectError {
    /// The field's path in the object (`spec.template.spec.volumes[2].configMap.items`).
    pub fn field(&self) -> String {
        self.path.to_string()
    }

    /// What is wrong with the field.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The field's path, for locating it in a source document.
    pub(crate) fn path(&self) -> &FieldPath {
        &self.path
    }

    /// An error about the top-level field `key` (for readers that check objects before projecting).
    pub(crate) fn at_field(key: &str, message: impl Into<String>) -> Self {
        Self::field_error(key, message)
    }
}

/// Projects one Kubernetes object (JSON as the API server serves it) into a slim [`Object`],
/// interning its strings in `model`. The object is not inserted.
pub fn project(json: &Value, model: &mut ClusterModel) -> std::result::Result<Object, ProjectError> {
    let root = Fields::of(json).map_err(|_| {
        ProjectError::here("expected a Kubernetes object (a mapping with apiVersion and kind)")
    })?;
    let api_version = root.required_str("apiVersion")?;
    let kind = root.required_str("kind")?;
    let group = api_version.split_once('/').map_or("", |(group, _)| group);
    let (identity, owners) = root.nested("metadata", |meta| metadata(meta, model))?;
    let Identity {
        name,
        namespace,
        uid,
        labels,
        annotations,
        terminating,
    } = identity;
    let spec = match PROJECTED.iter().find(|p| p.group == group && p.kind == kind) {
        Some(projected) => (projected.spec)(root, &name, &labels, model)?,
        None => Spec::Other,
    };
    let key = ObjectKey {
        group: model.intern(group),
        kind: model.intern(kind),
        namespace,
        name,
    };
    let object = Object {
        key,
        api_version: model.intern(api_version),
        uid,
        labels,
        annotations,
        owners,
        terminating,
        spec,
    };
    Ok(object)
}

/// A kind projected into a spec of its own.
struct Projected {
    group: &'static str,
    kind: &'static str,
    /// Reads the spec from the object, given its name and labels.
    spec: for<'a> fn(Fields<'a>, &str, &Labels, &mut ClusterModel) -> Result<Spec>,
}

/// Every kind projected into a spec of its own; any other is [`Spec::Other`]. The one list of
/// them: a live model watches each ([`kinds::builtin`](crate::cluster::api::kinds::builtin)).
const PROJECTED: &[Projected] = &[
    Projected {
        group: "",
        kind: "Pod",
        spec: |root, name, _, model| Ok(Spec::Pod(pod::project(root, name, model)?)),
    },
    Projected {
        group: "apps",
        kind: "Deployment",
        spec: |root, _, _, model| workload::deployment(root, model),
    },
    Projected {
        group: "apps",
        kind: "ReplicaSet",
        spec: |root, _, _, model| workload::replica_set(root, model),
    },
    Projected {
        group: "apps",
        kind: "StatefulSet",
        spec: |root, _, _, model| workload::stateful_set(root, model),
    },
    Projected {
        group: "apps",
        kind: "DaemonSet",
        spec: |root, _, _, model| workload::daemon_set(root, model),
    },
    Projected {
        group: "batch",
        kind: "Job",
        spec: |root, _, _, model| workload::job(root, model),
    },
    Projected {
        group: "policy",
        kind: "PodDisruptionBudget",
        spec: |root, _, _, model| workload::disruption_budget(root, model),
    },
    Projected {
        group: "",
        kind: "Service",
        spec: |root, _, _, model| resources::service(root, model),
    },
    Projected {
        group: "discovery.k8s.io",
        kind: "EndpointSlice",
        spec: |root, _, labels, model| resources::endpoint_slice(root, labels, model),
    },
    Projected {
        group: "",
        kind: "PersistentVolumeClaim",
        spec: |root, _, _, model| resources::claim(root, model),
    },
    Projected {
        group: "",
        kind: "PersistentVolume",
        spec: |root, _, _, model| resources::volume(root, model),
    },
    Projected {
        group: "",
        kind: "Node",
        spec: |root, _, _, model| resources::node(root, model),
    },
    Projected {
        group: "",
        kind: "Namespace",
        spec: |_, _, _, _| Ok(Spec::Namespace),
    },
    Projected {
        group: "apiextensions.k8s.io",
        kind: "CustomResourceDefinition",
        spec: |root, _, _, model| resources::definition(root, model),
    },
    Projected {
        group: "",
        kind: "ConfigMap",
        spec: |root, _, _, model| resources::config_map(root, model),
    },
    Projected {
        group: "",
        kind: "Secret",
        spec: |root, _, _, model| resources::secret(root, model),
    },
];

/// The API group and kind of every kind projected into a spec of its own.
#[cfg(test)]
pub(crate) fn projected_kinds() -> impl Iterator<Item = (&'static str, &'static str)> {
    PROJECTED.iter().map(|p| (p.group, p.kind))
}

/// What `metadata` contributes besides the owners.
struct Identity {
    name: Text,
    namespace: Text,
    uid: Option<Text>,
    labels: Labels,
    annotations: Labels,
    terminating: bool,
}

fn metadata(meta: Fields<'_>, model: &mut ClusterModel) -> Result<(Identity, Owners)> {
    let name = model.share(meta.required_str("name")?);
    let namespace = model.intern(meta.non_empty("namespace")?.unwrap_or(""));
    let uid = meta.non_empty("uid")?.map(|uid| model.share(uid));
    let labels = meta.labels("labels", model)?;
    let mut annotations = Vec::new();
    let all_annotations = meta.obj("annotations")?;
    for key in meta
        .keys("annotations")?
        .filter(|key| key.starts_with(SUTURE_ANNOTATIONS))
    {
        let value = all_annotations
            .str(key)
            .in_key("annotations")?
            .unwrap_or_default();
        annotations.push((model.intern(key), Text::from(value)));
    }
    annotations.sort();
    let terminating = meta.get("deletionTimestamp").is_some();
    let mut owners = Vec::new();
    meta.each("ownerReferences", |owner| {
        owners.push(OwnerRef {
            uid: model.intern(owner.required_str("uid")?),
            api_version: model.intern(owner.required_str("apiVersion")?),
            kind: model.intern(owner.required_str("kind")?),
            name: model.intern(owner.required_str("name")?),
            controller: owner.bool("controller")?.unwrap_or(false),
            block_owner_deletion: owner.bool("blockOwnerDeletion")?.unwrap_or(false),
        });
        Ok(())
    })?;
    Ok((
        Identity {
            name,
            namespace,
            uid,
            labels,
            annotations: model.share_labels(annotations),
            terminating,
        },
        model.share_owners(owners),
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn identity_owners_and_suture_annotations() {
        let mut model = ClusterModel::new();
        let object = project(
            &json!({
                "apiVersion": "rabbitmq.com/v1beta1",
                "kind": "RabbitmqCluster",
                "metadata": {
                    "name": "rabbit", "namespace": "mq", "uid": "u-1",
                    "labels": {"b": "2", "a": "1"},
                    "annotations": {"suture.dev/description": "queue", "other/x": "y"},
                    "deletionTimestamp": "2025-01-01T00:00:00Z",
                    "ownerReferences": [{"apiVersion": "v1", "kind": "Namespace", "name": "mq", "uid": "u-0", "controller": true}]
                },
                "spec": {"replicas": 3}
            }),
            &mut model,
        )
        .unwrap();
        assert_eq!(
            object.key,
            ObjectKey::new("rabbitmq.com", "RabbitmqCluster", "mq", "rabbit")
        );
        assert_eq!(object.uid.as_deref(), Some("u-1"));
        assert_eq!(
            object.labels,
            Labels::from([("a".into(), "1".into()), ("b".into(), "2".into())])
        );
        assert_eq!(object.annotation("suture.dev/description"), Some("queue"));
        assert_eq!(object.annotations.len(), 1);
        assert!(object.terminating);
        assert_eq!(object.controller().map(|o| &*o.uid), Some("u-0"));
        assert!(!object.owners[0].block_owner_deletion);
        assert_eq!(object.spec, Spec::Other);
    }

    #[test]
    fn errors_name_the_field() {
        let mut model = ClusterModel::new();
        let error = project(
            &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}}),
            &mut model,
        )
        .unwrap_err();
        assert_eq!(error.to_string(), "metadata.name: Required value");
        let error = project(
            &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": 1}}}),
            &mut model,
        )
        .unwrap_err();
        assert_eq!(error.to_string(), "metadata.labels.a: expected a string, found 1");
        let error = project(&json!({"kind": "Pod"}), &mut model).unwrap_err();
        assert_eq!(error.to_string(), "apiVersion: Required value");
        let error = project(&json!([1]), &mut model).unwrap_err();
        assert_eq!(
            error.to_string(),
            "(document): expected a Kubernetes object (a mapping with apiVersion and kind)"
        );
    }
}
