//! The object a what-if subject acts on, known before the request is built: live mode reads
//! only what a request on it can reach ([`crate::live::scope`]).

use policies_cel::ClusterView;
use serde_json::Value as Json;

use crate::known_kinds::KindRef;
use crate::live::Target;
use crate::whatif::build::{self, action_target, manifest_kind};
use crate::whatif::{Subject, WhatIfArgs};

/// The target of `subject`, resolving type names against `cluster` (its CRDs), namespaced objects
/// that name no namespace in `default_namespace` (else `default`). `None` when it cannot be told
/// (an unknown type: building the request reports it).
pub fn target(
    subject: &Subject,
    args: &WhatIfArgs,
    default_namespace: Option<&str>,
    cluster: &dyn ClusterView,
) -> Option<Target> {
    match subject {
        Subject::Review { review, .. } => {
            let request = &review["request"];
            let text = |value: &Json| value.as_str().unwrap_or_default().to_owned();
            let (group, resource) = (
                text(&request["resource"]["group"]),
                text(&request["resource"]["resource"]),
            );
            // kube-apiserver names a Namespace's own name as the request's namespace.
            let namespace = text(&request["namespace"]);
            let is_namespace = group.is_empty() && resource == "namespaces";
            let namespaced = !namespace.is_empty() && !is_namespace;
            Some(Target {
                group,
                resource,
                namespace: namespaced.then_some(namespace),
                name: text(&request["name"]),
            })
        }
        Subject::Manifest { object, .. } => manifest_target(object, args, default_namespace, cluster),
        Subject::Action => {
            let action = action_target(args, default_namespace, cluster).ok()?;
            Some(of_kind(action.kind, action.namespace, action.name))
        }
        // Many objects: `cluster::for_collection`, `cluster::for_manifests` and
        // `cluster::for_actions` scope them.
        Subject::Collection | Subject::Manifests { .. } | Subject::Actions => None,
    }
}

/// The object a plain manifest names, its kind resolved against `cluster`.
pub fn manifest_target(
    object: &Json,
    args: &WhatIfArgs,
    default_namespace: Option<&str>,
    cluster: &dyn ClusterView,
) -> Option<Target> {
    let kind = manifest_kind(cluster, object["apiVersion"].as_str()?, object["kind"].as_str()?);
    let namespace = kind
        .namespaced
        .then(|| args.namespace_for(object["metadata"]["namespace"].as_str(), default_namespace));
    Some(of_kind(kind, namespace, object["metadata"]["name"].as_str()?))
}

/// The objects a what-if action names (`delete pod a b`), those whose type is known.
pub fn action_targets(
    args: &WhatIfArgs,
    default_namespace: Option<&str>,
    cluster: &dyn ClusterView,
) -> Vec<Target> {
    build::action_targets(args, default_namespace, cluster)
        .map(|targets| {
            targets
                .into_iter()
                .map(|action| of_kind(action.kind, action.namespace, action.name))
                .collect()
        })
        .unwrap_or_default()
}

fn of_kind(kind: KindRef, namespace: Option<String>, name: &str) -> Target {
    Target {
        group: kind.group,
        resource: kind.resource,
        namespace,
        name: name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use policies_cel::EmptyCluster;
    use serde_json::json;

    fn args(action: &[&str], namespace: Option<&str>) -> WhatIfArgs {
        WhatIfArgs {
            action: action.iter().map(|s| (*s).to_owned()).collect(),
            namespace: namespace.map(str::to_owned),
            ..WhatIfArgs::default()
        }
    }

    #[test]
    fn actions_name_their_target() {
        let target = target(
            &Subject::Action,
            &args(&["scale", "sts/zk"], Some("coordination")),
            Some("context-namespace"),
            &EmptyCluster,
        )
        .unwrap();
        assert_eq!(
            target,
            Target {
                group: "apps".into(),
                resource: "statefulsets".into(),
                namespace: Some("coordination".into()),
                name: "zk".into()
            }
        );
        let node = super::target(
            &Subject::Action,
            &args(&["delete", "node/pool-3"], Some("x")),
            None,
            &EmptyCluster,
        )
        .unwrap();
        assert_eq!((node.resource.as_str(), node.namespace), ("nodes", None));
        assert!(
            super::target(
                &Subject::Action,
                &args(&["delete", "widget/w"], None),
                None,
                &EmptyCluster
            )
            .is_none()
        );
        let in_context = super::target(
            &Subject::Action,
            &args(&["delete", "sts/zk"], None),
            Some("coordination"),
            &EmptyCluster,
        )
        .unwrap();
        assert_eq!(in_context.namespace.as_deref(), Some("coordination"));
    }

    #[test]
    fn reviews_and_manifests_name_their_target() {
        let review = Subject::Review {
            name: "r".into(),
            review: json!({"request": {"resource": {"group": "apps", "version": "v1", "resource": "statefulsets"},
                "namespace": "mq", "name": "rabbit"}}),
        };
        let target = target(&review, &WhatIfArgs::default(), None, &EmptyCluster).unwrap();
        assert_eq!(
            (target.resource.as_str(), target.namespace.as_deref()),
            ("statefulsets", Some("mq"))
        );
        let manifest = Subject::Manifest {
            name: "m".into(),
            object: json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}),
        };
        let target = super::target(&manifest, &WhatIfArgs::default(), None, &EmptyCluster).unwrap();
        assert_eq!(target.namespace.as_deref(), Some("default"));
        assert_eq!(target.resource, "deployments");
        let in_context =
            super::target(&manifest, &WhatIfArgs::default(), Some("web"), &EmptyCluster).unwrap();
        assert_eq!(in_context.namespace.as_deref(), Some("web"));
        let in_own = Subject::Manifest {
            name: "m".into(),
            object: json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "shop"}}),
        };
        let target = super::target(&in_own, &WhatIfArgs::default(), Some("web"), &EmptyCluster).unwrap();
        assert_eq!(
            target.namespace.as_deref(),
            Some("shop"),
            "the manifest's namespace first"
        );
    }
}
