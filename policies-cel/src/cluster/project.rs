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
mod text;
mod workload;

use serde_json::Value;

use crate::cluster::ClusterModel;
use crate::cluster::object::{Labels, Object, ObjectKey, OwnerRef, Owners, Spec, Text};
use crate::policy::path::FieldPath;

use fields::{Fields, Result, Within};
use text::TextObject;

use crate::eval::outline::Outline;

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

/// [`project_spec`] of an object read from its JSON text (checked as JSON, with its
/// [`Outline`]) instead of its parsed tree, for kinds whose spec is read from the spec alone;
/// `None` when the text holds something this reading leaves to the tree (an escaped string, a
/// number that is not a plain integer, a kind read otherwise) or the spec is invalid: the caller
/// then projects the parsed tree, whose spec (or error) this one always equals.
pub(crate) fn project_spec_text(text: &str, outline: &Outline, model: &mut ClusterModel) -> Option<Spec> {
    let root = Fields::of_text(TextObject::Outlined {
        text,
        outline,
        parent: None,
    });
    let Typed {
        root, group, kind, ..
    } = Typed::of_fields(root).ok()?;
    match projected(group, kind)?.spec {
        SpecReader::Spec(read) => read(root, model).ok(),
        SpecReader::WithIdentity(_) => None,
    }
}

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
        Self::of_fields(root)
    }

    fn of_fields(root: Fields<'a>) -> std::result::Result<Self, ProjectError> {
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

    /// Every object of the repository's snapshots and of the recorded reviews, compact and
    /// pretty-printed, and each with a change the text reading leaves to the tree: its spec read
    /// from its text is the spec read from its tree, whenever the text reading gives one.
    #[test]
    fn a_spec_read_from_text_is_the_spec_read_from_the_tree() {
        /// Checks `object`'s spec from its text against its tree's; whether the text gave one.
        fn agrees(object: &Value) -> bool {
            let tree = project_spec(object, &mut ClusterModel::new());
            let mut read = false;
            for text in [object.to_string(), serde_json::to_string_pretty(object).unwrap()] {
                let outline = Outline::of(&text);
                if let Some(spec) = project_spec_text(&text, &outline, &mut ClusterModel::new()) {
                    assert_eq!(Ok(&spec), tree.as_ref(), "{text}");
                    read = true;
                }
            }
            read
        }
        /// `object` with the first string equal to `from` (at any depth) replaced by `to`.
        fn replaced(object: &Value, from: &str, to: Value) -> Option<Value> {
            fn walk(value: &mut Value, from: &str, to: &mut Option<Value>) {
                match value {
                    Value::String(s) if s == from => {
                        if let Some(to) = to.take() {
                            *value = to;
                        }
                    }
                    Value::Array(items) => items.iter_mut().for_each(|item| walk(item, from, to)),
                    Value::Object(map) => map.values_mut().for_each(|item| walk(item, from, to)),
                    _ => {}
                }
            }
            let (mut changed, mut to) = (object.clone(), Some(to));
            walk(&mut changed, from, &mut to);
            to.is_none().then_some(changed)
        }
        let mut objects: Vec<Value> = Vec::new();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/clusters");
        for scene in std::fs::read_dir(&root).unwrap() {
            let path = scene.unwrap().path().join("snapshot.yaml");
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let Ok(list) = serde_yaml_ng::from_str::<Value>(&text) else {
                continue;
            };
            objects.extend(list["items"].as_array().into_iter().flatten().cloned());
        }
        for (_, text) in crate::eval::review::tests::recorded_reviews() {
            let review: Value = serde_json::from_slice(&text).unwrap();
            for key in ["object", "oldObject"] {
                objects.extend(review["request"].get(key).filter(|o| o.is_object()).cloned());
            }
        }
        // Kinds and settings the recorded ones lack.
        objects.push(json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 1}},
                "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]},
                                              {"key": "cores", "operator": "Gt", "values": ["4"]}]},
                        {"matchExpressions": [{"key": "spot", "operator": "DoesNotExist"}]}]}}},
                    "containers": [{"name": "a", "image": "agent"}]}}}}));
        objects.push(
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "b"},
            "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
                "updateStrategy": {"type": "OnDelete"}, "template": {"spec": {}}}}),
        );
        objects.push(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 0, "paused": true, "selector": {"matchLabels": {"app": "web"}},
                "strategy": {"type": "Recreate"}, "template": {"spec": {}}}}),
        );
        objects.push(
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"},
            "spec": {"maxUnavailable": "25%", "unhealthyPodEvictionPolicy": "AlwaysAllow"}}),
        );
        let mut from_text = std::collections::BTreeMap::<String, usize>::new();
        for object in &objects {
            if agrees(object) {
                let kind = object["kind"].as_str().unwrap_or_default().to_owned();
                *from_text.entry(kind).or_default() += 1;
            }
            // What the text reading leaves to the tree, or reads as the tree does.
            let mut changed = Vec::new();
            for (from, to) in [
                ("RollingUpdate", json!("Rolling\"Update")),
                ("RollingUpdate", json!("Recreat\\e")),
                ("Parallel", json!(7)),
                ("OrderedReady", json!(null)),
            ] {
                changed.extend(replaced(object, from, to));
            }
            if object.get("spec").is_some_and(Value::is_object) {
                for (key, value) in [
                    ("replicas", json!(2.0)),
                    ("replicas", json!(-1)),
                    ("replicas", json!("3")),
                    ("replicas", json!(9_223_372_036_854_775_807_i64)),
                    ("selector", json!({"matchLabels": {"a": "b", "c": 1}})),
                    ("selector", json!({"matchLabels": {}})),
                    ("selector", json!([])),
                    (
                        "strategy",
                        json!({"rollingUpdate": {"maxUnavailable": "50%", "maxSurge": 0}}),
                    ),
                    (
                        "updateStrategy",
                        json!({"rollingUpdate": {"partition": 1, "maxUnavailable": "x%"}}),
                    ),
                    (
                        "volumeClaimTemplates",
                        json!([{"metadata": {"name": "d\u{e9}"}}, null]),
                    ),
                    ("volumeClaimTemplates", json!([{"metadata": {}}])),
                    ("paused", json!("yes")),
                ] {
                    let mut with = object.clone();
                    with["spec"][key] = value;
                    changed.push(with);
                }
                let mut without = object.clone();
                without["spec"] = Value::Null;
                changed.push(without);
            }
            for changed in &changed {
                agrees(changed);
            }
        }
        for kind in ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"] {
            assert!(
                from_text.get(kind).copied().unwrap_or_default() > 0,
                "no {kind} read from text: {from_text:?}"
            );
        }
    }

    /// A repeated key keeps its last value in the text reading too, as the tree does.
    #[test]
    fn a_repeated_key_reads_its_last_value_from_text() {
        let text = r#"{"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}},
            "spec": {"replicas": 4, "replicas": 5, "selector": {"matchLabels": {"c": "d"}}}}"#;
        let outline = Outline::of(text);
        let spec = project_spec_text(text, &outline, &mut ClusterModel::new()).unwrap();
        let tree: Value = serde_json::from_str(text).unwrap();
        assert_eq!(Ok(spec), project_spec(&tree, &mut ClusterModel::new()));
        let labels = r#"{"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "spec": {"selector": {"matchLabels": {"a": "b", "a": "c"}}}}"#;
        assert_eq!(
            project_spec_text(labels, &Outline::of(labels), &mut ClusterModel::new()),
            None,
            "repeated label keys are left to the tree"
        );
    }

    /// Text whose reading only the tree knows (`-0` is a float to serde_json, and so an invalid
    /// replica count) is left to the tree.
    #[test]
    fn numbers_the_tree_reads_otherwise_are_left_to_it() {
        for replicas in ["-0", "1.0", "1e1", "18446744073709551615"] {
            let text = format!(
                r#"{{"apiVersion":"apps/v1","kind":"ReplicaSet","spec":{{"replicas":{replicas},"selector":{{"matchLabels":{{"a":"b"}}}}}}}}"#
            );
            assert_eq!(
                project_spec_text(&text, &Outline::of(&text), &mut ClusterModel::new()),
                None,
                "{replicas}"
            );
            let tree: Value = serde_json::from_str(&text).unwrap();
            assert!(
                project_spec(&tree, &mut ClusterModel::new()).is_err(),
                "{replicas}"
            );
        }
    }

    mod text_agrees {
        //! Property: a workload spec read from its text is the spec read from its tree, on
        //! random specs written as text (keys the readers ask for, repeated or escaped; values of
        //! every JSON type, numbers serde_json reads as floats or beyond `i64`, strings with
        //! escapes).

        use proptest::prelude::*;

        use super::super::{ClusterModel, Outline, Value, project_spec, project_spec_text};

        const KEYS: &[&str] = &[
            "replicas",
            "selector",
            "matchLabels",
            "matchExpressions",
            "key",
            "operator",
            "values",
            "strategy",
            "type",
            "rollingUpdate",
            "maxUnavailable",
            "maxSurge",
            "partition",
            "paused",
            "updateStrategy",
            "podManagementPolicy",
            "volumeClaimTemplates",
            "metadata",
            "name",
            "persistentVolumeClaimRetentionPolicy",
            "whenDeleted",
            "whenScaled",
            "template",
            "spec",
            "nodeSelector",
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
            "a",
            r"r\u0065plicas",
        ];
        const NUMBERS: &[&str] = &[
            "0",
            "-0",
            "1",
            "3",
            "-1",
            "2.0",
            "1e2",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "true",
            "false",
            "null",
        ];
        const STRINGS: &[&str] = &[
            "RollingUpdate",
            "OnDelete",
            "Recreate",
            "Parallel",
            "OrderedReady",
            "Retain",
            "Delete",
            "25%",
            "x%",
            "0%",
            "-5%",
            "In",
            "NotIn",
            "Exists",
            "DoesNotExist",
            "Gt",
            "a",
            "b",
            "",
            "data",
            r"Rolling\u0055pdate",
            r#"a\"b"#,
            r"\\",
        ];

        /// The keys of a spec the readers ask for (and one they do not).
        const SPEC_KEYS: &[&str] = &[
            "replicas",
            "selector",
            "strategy",
            "updateStrategy",
            "paused",
            "podManagementPolicy",
            "volumeClaimTemplates",
            "persistentVolumeClaimRetentionPolicy",
            "minAvailable",
            "maxUnavailable",
            "unhealthyPodEvictionPolicy",
            "template",
            "a",
        ];

        fn key() -> impl Strategy<Value = String> {
            prop::sample::select(KEYS).prop_map(str::to_owned)
        }

        fn leaf() -> impl Strategy<Value = String> + Clone {
            prop_oneof![
                prop::sample::select(NUMBERS).prop_map(str::to_owned),
                prop::sample::select(STRINGS).prop_map(|s| format!("\"{s}\"")),
            ]
        }

        /// A spec's value: a scalar as often as a container.
        fn spec_value() -> impl Strategy<Value = String> {
            prop_oneof![leaf(), value()]
        }

        fn value() -> impl Strategy<Value = String> {
            leaf().prop_recursive(4, 48, 5, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4)
                        .prop_map(|items| format!("[{}]", items.join(","))),
                    prop::collection::vec((key(), inner), 0..5).prop_map(|fields| object(&fields)),
                ]
            })
        }

        fn object(fields: &[(String, String)]) -> String {
            let members: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
            format!("{{{}}}", members.join(", "))
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(4096))]
            #[test]
            fn a_spec_from_text_is_the_spec_from_the_tree(
                kind in prop::sample::select(&["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "PodDisruptionBudget"][..]),
                selector in prop::option::of(Just(r#""selector": {"matchLabels": {"app": "x"}}"#)),
                fields in prop::collection::vec((prop::sample::select(SPEC_KEYS).prop_map(str::to_owned), spec_value()), 0..4),
            ) {
                let api_version = match kind {
                    "Job" => "batch/v1",
                    "PodDisruptionBudget" => "policy/v1",
                    _ => "apps/v1",
                };
                let mut spec = object(&fields);
                if let Some(selector) = selector {
                    spec = format!("{{{selector}{}{}", if fields.is_empty() { "" } else { ", " }, &spec[1..]);
                }
                let text = format!(r#"{{"apiVersion": "{api_version}", "kind": "{kind}", "metadata": {{"name": "w"}}, "spec": {spec}}}"#);
                let tree: Value = serde_json::from_str(&text).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
                if let Some(read) = project_spec_text(&text, &Outline::of(&text), &mut ClusterModel::new()) {
                    prop_assert_eq!(Ok(read), project_spec(&tree, &mut ClusterModel::new()), "{}", text);
                }
            }
        }
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
