//! Building the AdmissionReview kube-apiserver would send for a what-if: the object before the
//! change from the cluster snapshot, the operation's options, the user from `--as`.

use anyhow::{Context as _, anyhow, bail};
use policies_cel::ClusterView;
use serde_json::{Value as Json, json};

use crate::known_kinds::{self, KindRef};
use crate::review::previous::{before_update, recorded_template};
use crate::review::{
    GroupVersionKind, GroupVersionResource, KindSpec, Operation, RequestSpec, ResourceSpec, UserInfoSpec,
};
use crate::whatif::args::{DEFAULT_AS, OperationArg, WhatIfArgs};
use crate::whatif::names::{self, Named, NamesError};

/// One object a what-if action names (`delete TYPE/NAME`, `delete TYPE NAME...` and the like),
/// its type resolved against `cluster` (its CRDs), in `-n`'s namespace, else
/// `default_namespace`, when the kind is namespaced.
#[derive(Debug, Clone)]
pub struct ActionTarget<'a> {
    pub verb: &'a str,
    pub kind: KindRef,
    /// `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
    pub name: &'a str,
}

/// The objects `args.action` names, in order; an error says what is wrong with the action.
pub fn action_targets<'a>(
    args: &'a WhatIfArgs,
    default_namespace: Option<&str>,
    cluster: &dyn ClusterView,
) -> anyhow::Result<Vec<ActionTarget<'a>>> {
    let Some((verb, words)) = args.action.split_first() else {
        bail!(NamesError::Missing);
    };
    names::parse(words)?
        .into_iter()
        .map(|Named { type_name, name }| {
            let kind = known_kinds::by_type_name(cluster, type_name).ok_or_else(|| {
                anyhow!(
                    "unknown resource type {type_name:?} (not built in, and no CRD for it in the --cluster snapshot)"
                )
            })?;
            let namespace = kind
                .namespaced
                .then(|| args.namespace_for(None, default_namespace));
            Ok(ActionTarget {
                verb,
                kind,
                namespace,
                name,
            })
        })
        .collect()
}

/// The one object `args.action` names (several are one request each: [`super::actions`]).
pub fn action_target<'a>(
    args: &'a WhatIfArgs,
    default_namespace: Option<&str>,
    cluster: &dyn ClusterView,
) -> anyhow::Result<ActionTarget<'a>> {
    let mut targets = action_targets(args, default_namespace, cluster)?;
    match (targets.pop(), targets.is_empty()) {
        (Some(target), true) => Ok(target),
        _ => bail!("several objects are named: they are judged one request each"),
    }
}

/// The request for an action on its one object (`delete TYPE/NAME`, `scale TYPE/NAME`, `evict
/// pod/NAME`).
pub fn action(
    args: &WhatIfArgs,
    default_namespace: Option<&str>,
    cluster: &dyn ClusterView,
) -> anyhow::Result<RequestSpec> {
    action_for(&action_target(args, default_namespace, cluster)?, args, cluster)
}

/// The request for the action on `target`, its object before the change read from `cluster`.
pub fn action_for(
    target: &ActionTarget<'_>,
    args: &WhatIfArgs,
    cluster: &dyn ClusterView,
) -> anyhow::Result<RequestSpec> {
    let ActionTarget {
        verb,
        kind,
        namespace,
        name,
    } = target;
    let (verb, name) = (*verb, *name);
    let stored = known_kinds::stored(cluster, kind, namespace.as_deref().unwrap_or_default(), name);
    let metadata = json!({"name": name, "namespace": namespace});
    let mut spec = base(args, kind, namespace.clone(), name);
    match verb {
        "delete" => {
            spec.operation = Some(Operation::Delete);
            spec.old_object = Some(stored.unwrap_or_else(|| object_of(kind, metadata)));
            spec.options = args.delete_options();
        }
        "scale" => {
            args.deletion_only("a scale")?;
            let replicas = args.replicas.context("scale needs --replicas N")?;
            let stored = stored.ok_or_else(|| {
                anyhow!(
                    "{} {} is not in the cluster snapshot: its current replicas are unknown (give --cluster)",
                    kind.kind,
                    target_display(namespace, name)
                )
            })?;
            let scale = |replicas: &Json| json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": metadata, "spec": {"replicas": replicas}});
            spec.operation = Some(Operation::Update);
            spec.sub_resource = Some("scale".into());
            spec.kind = Some(KindSpec::Full(GroupVersionKind {
                group: "autoscaling".into(),
                version: "v1".into(),
                kind: "Scale".into(),
            }));
            spec.old_object = Some(scale(&stored["spec"]["replicas"]));
            spec.object = Some(scale(&json!(replicas)));
        }
        "evict" if kind.kind == "Pod" => {
            // An eviction's own DeleteOptions are in its body; kubectl has no --cascade for it.
            args.deletion_only("an eviction")?;
            spec.operation = Some(Operation::Create);
            spec.sub_resource = Some("eviction".into());
            spec.kind = Some(KindSpec::Full(GroupVersionKind {
                group: "policy".into(),
                version: "v1".into(),
                kind: "Eviction".into(),
            }));
            spec.object = Some(json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": metadata}));
        }
        "evict" => bail!("only pods are evicted (evict pod/NAME)"),
        other => bail!("unknown what-if action {other:?}: use delete, scale or evict"),
    }
    Ok(spec)
}

/// The request for a plain manifest given with `-f`.
pub fn manifest(
    args: &WhatIfArgs,
    default_namespace: Option<&str>,
    object: Json,
    cluster: &dyn ClusterView,
) -> anyhow::Result<RequestSpec> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind_name = object["kind"].as_str().unwrap_or_default();
    let name = object["metadata"]["name"].as_str().unwrap_or_default().to_owned();
    if kind_name.is_empty() || api_version.is_empty() || name.is_empty() {
        bail!("a manifest needs apiVersion, kind and metadata.name");
    }
    let kind = manifest_kind(cluster, api_version, kind_name);
    let own_namespace = object["metadata"]["namespace"].as_str().filter(|n| !n.is_empty());
    if let (true, Some(own), Some(flag)) = (kind.namespaced, own_namespace, args.namespace.as_deref())
        && own != flag
    {
        // As kubectl: -n fills in a namespace, it never moves an object out of its own.
        bail!(
            "the namespace from the provided object {own:?} does not match the namespace {flag:?} given with -n"
        );
    }
    let namespace = kind
        .namespaced
        .then(|| args.namespace_for(own_namespace, default_namespace));
    let stored = known_kinds::stored(cluster, &kind, namespace.as_deref().unwrap_or_default(), &name);
    let operation = match args.operation {
        Some(OperationArg::Create) => Operation::Create,
        Some(OperationArg::Update) => Operation::Update,
        Some(OperationArg::Delete) => Operation::Delete,
        None if stored.is_some() => Operation::Update,
        None => Operation::Create,
    };
    let mut spec = base(args, &kind, namespace.clone(), &name);
    spec.operation = Some(operation);
    match operation {
        Operation::Create => {
            args.deletion_only("a CREATE")?;
            spec.object = Some(object);
        }
        Operation::Delete => {
            spec.old_object = Some(stored.unwrap_or(object));
            spec.options = args.delete_options();
        }
        _ => {
            args.deletion_only("an UPDATE (give --operation DELETE)")?;
            let gvk = GroupVersionKind {
                group: kind.group.clone(),
                version: kind.version.clone(),
                kind: kind.kind.clone(),
            };
            // A manifest is a whole new spec: a changed pod template is a rollout, told by the
            // template the cluster recorded when it has it (else any template is taken as new).
            let recorded = recorded_template(cluster, &gvk, namespace.as_deref(), &name);
            let old = before_update(&gvk, None, &object, stored.as_ref(), Some(&object), recorded);
            spec.old_object = Some(old);
            spec.object = Some(object);
        }
    }
    Ok(spec)
}

/// The kind of a manifest's `apiVersion` and `kind`: a built-in or a CRD of the cluster, else a
/// namespaced kind with kubectl's guess at its resource.
pub fn manifest_kind(cluster: &dyn ClusterView, api_version: &str, kind_name: &str) -> KindRef {
    let (group, version) = crate::kinds::split_api_version(api_version);
    known_kinds::by_type_name(cluster, kind_name)
        .filter(|k| k.group == group)
        .map(|k| KindRef {
            version: version.to_owned(),
            ..k
        })
        .unwrap_or_else(|| KindRef {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind_name.to_owned(),
            resource: crate::kinds::guess_resource(kind_name),
            namespaced: true,
        })
}

pub(crate) fn base(args: &WhatIfArgs, kind: &KindRef, namespace: Option<String>, name: &str) -> RequestSpec {
    RequestSpec {
        seed: format!(
            "what-if/{}/{}/{name}",
            kind.kind,
            namespace.as_deref().unwrap_or_default()
        ),
        kind: Some(KindSpec::Full(GroupVersionKind {
            group: kind.group.clone(),
            version: kind.version.clone(),
            kind: kind.kind.clone(),
        })),
        resource: Some(ResourceSpec::Full(GroupVersionResource {
            group: kind.group.clone(),
            version: kind.version.clone(),
            resource: kind.resource.clone(),
        })),
        namespace,
        name: Some(name.to_owned()),
        user_info: Some(UserInfoSpec {
            username: args.as_user.clone().unwrap_or_else(|| DEFAULT_AS.to_owned()),
            uid: None,
            groups: (!args.as_group.is_empty()).then(|| args.as_group.clone()),
            extra: Default::default(),
        }),
        ..RequestSpec::default()
    }
}

fn object_of(kind: &KindRef, metadata: Json) -> Json {
    let api_version = if kind.group.is_empty() {
        kind.version.clone()
    } else {
        format!("{}/{}", kind.group, kind.version)
    };
    json!({"apiVersion": api_version, "kind": kind.kind, "metadata": metadata})
}

fn target_display(namespace: &Option<String>, name: &str) -> String {
    match namespace {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_owned(),
    }
}
