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
    let Typed {
        root,
        api_version,
        group,
        kind,
    } = Typed::of(json)?;
    let (identity, owners) = root.nested("metadata", |meta| metadata(meta, model))?;
    let Identity {
        name,
        namespace,
        uid,
        labels,
        annotations,
        deletion_timestamp,
    } = identity;
    let spec = match projected(group, kind).map(|p| p.spec) {
        Some(SpecReader::Spec(read)) => read(root, model)?,
        Some(SpecReader::WithIdentity(read)) => read(root, &name, &labels, model)?,
        None => model
            .kept_of(group, kind, json)
            .map_or(Spec::Other, |kept| Spec::Kept(std::sync::Arc::new(kept))),
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
        deletion_timestamp,
        spec,
    };
    Ok(object)
}

/// Projects only the spec of `json`, for a reader that needs nothing else of the object (the
/// estimate of a workload UPDATE wants the new spec, not a second copy of the identity it has).
/// Kinds whose spec is read with their name or labels are projected whole; the spec is the one
/// [`project`] gives either way.
pub fn project_spec(json: &Value, model: &mut ClusterModel) -> std::result::Result<Spec, ProjectError> {
    let Typed {
        root, group, kind, ..
    } = Typed::of(json)?;
    match projected(group, kind).map(|p| p.spec) {
        Some(SpecReader::Spec(read)) => read(root, model),
        Some(SpecReader::WithIdentity(_)) => project(json, model).map(|object| object.spec),
        None => Ok(model
            .kept_of(group, kind, json)
            .map_or(Spec::Other, |kept| Spec::Kept(std::sync::Arc::new(kept)))),
    }
}

/// What [`project_spec`] never reads of a Deployment, ReplicaSet, StatefulSet or DaemonSet:
/// a reader of their new spec may leave these out of the tree it projects
/// (`WireObject::json_without`; `*` is each element of a list). The slim model keeps no pod
/// templates, and of a StatefulSet's claim templates only their names.
pub const UNREAD_BY_WORKLOAD_SPECS: &[&[&str]] = &[
    &["metadata"],
    &["status"],
    &["spec", "template"],
    &["spec", "volumeClaimTemplates", "*", "spec"],
    &["spec", "volumeClaimTemplates", "*", "status"],
];

/// An object's fields with the type its `apiVersion` and `kind` give.
struct Typed<'a> {
    root: Fields<'a>,
    api_version: &'a str,
    group: &'a str,
    kind: &'a str,
}

impl<'a> Typed<'a> {
    fn of(json: &'a Value) -> std::result::Result<Self, ProjectError> {
        let root = Fields::of(json).map_err(|_| {
            ProjectError::here("expected a Kubernetes object (a mapping with apiVersion and kind)")
        })?;
        let api_version = root.required_str("apiVersion")?;
        let kind = root.required_str("kind")?;
        let group = api_version.split_once('/').map_or("", |(group, _)| group);
        Ok(Self {
            root,
            api_version,
            group,
            kind,
        })
    }
}

/// A kind projected into a spec of its own.
struct Projected {
    group: &'static str,
    kind: &'static str,
    spec: SpecReader,
}

/// How a kind's spec is read from the object.
#[derive(Clone, Copy)]
enum SpecReader {
    /// From the object's fields alone.
    Spec(for<'a> fn(Fields<'a>, &mut ClusterModel) -> Result<Spec>),
    /// Given also its name and labels (a pod names its own volumes' claims; an EndpointSlice
    /// names its Service in a label).
    WithIdentity(for<'a> fn(Fields<'a>, &str, &Labels, &mut ClusterModel) -> Result<Spec>),
}

/// The entry of kind `kind` in API group `group`, when it has a spec of its own.
fn projected(group: &str, kind: &str) -> Option<&'static Projected> {
    PROJECTED.iter().find(|p| p.group == group && p.kind == kind)
}

/// Every kind projected into a spec of its own; any other is [`Spec::Other`]. The one list of
/// them: a live model watches each ([`kinds::builtin`](crate::cluster::api::kinds::builtin)).
const PROJECTED: &[Projected] = &[
    Projected {
        group: "",
        kind: "Pod",
        spec: SpecReader::WithIdentity(|root, name, _, model| {
            Ok(Spec::Pod(pod::project(root, name, model)?))
        }),
    },
    Projected {
        group: "apps",
        kind: "Deployment",
        spec: SpecReader::Spec(workload::deployment),
    },
    Projected {
        group: "apps",
        kind: "ReplicaSet",
        spec: SpecReader::Spec(workload::replica_set),
    },
    Projected {
        group: "apps",
        kind: "StatefulSet",
        spec: SpecReader::Spec(workload::stateful_set),
    },
    Projected {
        group: "apps",
        kind: "DaemonSet",
        spec: SpecReader::Spec(workload::daemon_set),
    },
    Projected {
        group: "batch",
        kind: "Job",
        spec: SpecReader::Spec(workload::job),
    },
    Projected {
        group: "policy",
        kind: "PodDisruptionBudget",
        spec: SpecReader::Spec(workload::disruption_budget),
    },
    Projected {
        group: "",
        kind: "Service",
        spec: SpecReader::Spec(resources::service),
    },
    Projected {
        group: "discovery.k8s.io",
        kind: "EndpointSlice",
        spec: SpecReader::WithIdentity(|root, _, labels, model| {
            resources::endpoint_slice(root, labels, model)
        }),
    },
    Projected {
        group: "",
        kind: "PersistentVolumeClaim",
        spec: SpecReader::Spec(resources::claim),
    },
    Projected {
        group: "",
        kind: "PersistentVolume",
        spec: SpecReader::Spec(resources::volume),
    },
    Projected {
        group: "",
        kind: "Node",
        spec: SpecReader::Spec(resources::node),
    },
    Projected {
        group: "",
        kind: "Namespace",
        spec: SpecReader::Spec(|_, _| Ok(Spec::Namespace)),
    },
    Projected {
        group: "apiextensions.k8s.io",
        kind: "CustomResourceDefinition",
        spec: SpecReader::Spec(resources::definition),
    },
    Projected {
        group: "",
        kind: "ConfigMap",
        spec: SpecReader::Spec(resources::config_map),
    },
    Projected {
        group: "",
        kind: "Secret",
        spec: SpecReader::Spec(resources::secret),
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
    deletion_timestamp: Option<std::num::NonZeroI64>,
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
    let deletion_timestamp = match meta.non_empty("deletionTimestamp")? {
        Some(text) => Some(crate::cluster::object::deletion_timestamp(text).ok_or_else(|| {
            ProjectError::field_error(
                "deletionTimestamp",
                format!("Invalid value: {text:?}: not an RFC 3339 time"),
            )
        })?),
        None => None,
    };
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
            deletion_timestamp,
        },
        model.share_owners(owners),
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::{Map, json};

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
        assert!(object.terminating());
        // The time is kept, and written back as the API writes it (the what-if's oldObject).
        assert_eq!(
            object.deletion_timestamp_text().as_deref(),
            Some("2025-01-01T00:00:00Z")
        );
        let error = project(
            &json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "namespace": "n", "deletionTimestamp": "terminating"}}),
            &mut model,
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "metadata.deletionTimestamp: Invalid value: \"terminating\": not an RFC 3339 time"
        );
        assert_eq!(object.controller().map(|o| &*o.uid), Some("u-0"));
        assert!(!object.owners[0].block_owner_deletion);
        assert_eq!(object.spec, Spec::Other);
    }

    /// `project_spec` gives the spec `project` gives, for every object of every kind in the
    /// repository's snapshots; and it reads a spec whose object has no identity to project.
    #[test]
    fn spec_alone_is_the_spec_of_the_whole_projection() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/clusters");
        let mut objects = 0;
        let mut kinds = std::collections::BTreeSet::new();
        for cluster in ["database", "operator", "platform", "web"] {
            let text = std::fs::read_to_string(root.join(cluster).join("snapshot.yaml")).unwrap();
            let list: Value = serde_yaml_ng::from_str(&text).unwrap();
            for item in list["items"].as_array().unwrap() {
                let whole = project(item, &mut ClusterModel::new()).unwrap();
                let spec = project_spec(item, &mut ClusterModel::new()).unwrap();
                assert_eq!(spec, whole.spec, "{}", whole.key);
                kinds.insert(whole.key.kind.as_ref().to_owned());
                objects += 1;
            }
        }
        assert!(objects > 50, "{objects} objects");
        for kind in ["Pod", "StatefulSet", "Deployment", "EndpointSlice", "Service"] {
            assert!(kinds.contains(kind), "no {kind} in the snapshots: {kinds:?}");
        }
        let nameless = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {
            "replicas": 2, "selector": {"matchLabels": {"app": "db"}}
        }});
        assert!(project(&nameless, &mut ClusterModel::new()).is_err());
        assert!(
            matches!(
                project_spec(&nameless, &mut ClusterModel::new()),
                Ok(Spec::StatefulSet { replicas: 2, .. })
            ),
            "a spec is read without the identity"
        );
    }

    /// The spec of every workload in the repository's snapshots is the same when the parts
    /// `UNREAD_BY_WORKLOAD_SPECS` names are left out or hold garbage: no reader looks there.
    #[test]
    fn workload_specs_never_read_what_a_reader_may_leave_out() {
        /// Calls `edit` with each map holding the value at `path` and the value's key (`*`: each
        /// element of a list).
        fn each_parent(tree: &mut Value, path: &[&str], edit: &mut dyn FnMut(&mut Map<String, Value>, &str)) {
            match (tree, path) {
                (Value::Object(map), [last]) => edit(map, last),
                (Value::Array(items), ["*", rest @ ..]) => {
                    items.iter_mut().for_each(|item| each_parent(item, rest, edit));
                }
                (Value::Object(map), [first, rest @ ..]) => {
                    if let Some(below) = map.get_mut(*first) {
                        each_parent(below, rest, edit);
                    }
                }
                _ => {}
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/clusters");
        let mut kinds = std::collections::BTreeSet::new();
        for cluster in ["database", "operator", "platform", "web"] {
            let text = std::fs::read_to_string(root.join(cluster).join("snapshot.yaml")).unwrap();
            let list: Value = serde_yaml_ng::from_str(&text).unwrap();
            for item in list["items"].as_array().unwrap() {
                let kind = item["kind"].as_str().unwrap();
                if !["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"].contains(&kind) {
                    continue;
                }
                let spec = project_spec(item, &mut ClusterModel::new()).unwrap();
                let (mut left_out, mut garbage) = (item.clone(), item.clone());
                for path in UNREAD_BY_WORKLOAD_SPECS {
                    each_parent(&mut left_out, path, &mut |map, key| drop(map.remove(key)));
                    each_parent(&mut garbage, path, &mut |map, key| {
                        map.insert(key.to_owned(), json!(["not", {"what": "a reader expects"}]));
                    });
                }
                assert_ne!(&left_out, item, "the snapshot's {kind} has parts to leave out");
                for changed in [left_out, garbage] {
                    let read = project_spec(&changed, &mut ClusterModel::new());
                    assert_eq!(read.as_ref(), Ok(&spec), "{kind}: {changed}");
                }
                kinds.insert(kind.to_owned());
            }
        }
        assert!(kinds.len() >= 3, "workload kinds in the snapshots: {kinds:?}");
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
