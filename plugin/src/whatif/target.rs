//! The object a what-if subject acts on, known before the request is built: live mode reads
//! only what a request on it can reach ([`crate::live::scope`]).

use policies_cel::ClusterView;
use serde_json::Value as Json;

use crate::kinds::{guess_resource, split_api_version};
use crate::known_kinds::{self, KindRef};
use crate::live::Target;
use crate::whatif::{Subject, WhatIfArgs};

/// The target of `subject`, resolving type names against `cluster` (its CRDs). `None` when it
/// cannot be told (an unknown type: building the request reports it).
pub fn target(subject: &Subject, args: &WhatIfArgs, cluster: &dyn ClusterView) -> Option<Target> {
    match subject {
        Subject::Review { review, .. } => {
            let request = &review["request"];
            let text = |value: &Json| value.as_str().unwrap_or_default().to_owned();
            let namespace = text(&request["namespace"]);
            Some(Target {
                group: text(&request["resource"]["group"]),
                resource: text(&request["resource"]["resource"]),
                namespace: (!namespace.is_empty()).then_some(namespace),
                name: text(&request["name"]),
            })
        }
        Subject::Manifest { object, .. } => {
            let kind = object["kind"].as_str()?;
            let (group, version) = split_api_version(object["apiVersion"].as_str()?);
            let kind = known_kinds::by_type_name(cluster, kind)
                .filter(|k| k.group == group)
                .unwrap_or_else(|| KindRef {
                    group: group.to_owned(),
                    version: version.to_owned(),
                    kind: kind.to_owned(),
                    resource: guess_resource(kind),
                    namespaced: true,
                });
            let namespace = args
                .namespace
                .clone()
                .or_else(|| object["metadata"]["namespace"].as_str().map(str::to_owned));
            Some(of_kind(kind, namespace, object["metadata"]["name"].as_str()?))
        }
        Subject::Action => {
            let (type_name, name) = args.action.get(1)?.split_once('/')?;
            let kind = known_kinds::by_type_name(cluster, type_name)?;
            Some(of_kind(kind, args.namespace.clone(), name))
        }
    }
}

fn of_kind(kind: KindRef, namespace: Option<String>, name: &str) -> Target {
    let namespace = kind
        .namespaced
        .then(|| namespace.unwrap_or_else(|| "default".into()));
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
            &EmptyCluster,
        )
        .unwrap();
        assert_eq!((node.resource.as_str(), node.namespace), ("nodes", None));
        assert!(
            super::target(
                &Subject::Action,
                &args(&["delete", "widget/w"], None),
                &EmptyCluster
            )
            .is_none()
        );
    }

    #[test]
    fn reviews_and_manifests_name_their_target() {
        let review = Subject::Review {
            name: "r".into(),
            review: json!({"request": {"resource": {"group": "apps", "version": "v1", "resource": "statefulsets"},
                "namespace": "mq", "name": "rabbit"}}),
        };
        let target = target(&review, &WhatIfArgs::default(), &EmptyCluster).unwrap();
        assert_eq!(
            (target.resource.as_str(), target.namespace.as_deref()),
            ("statefulsets", Some("mq"))
        );
        let manifest = Subject::Manifest {
            name: "m".into(),
            object: json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}),
        };
        let target = super::target(&manifest, &WhatIfArgs::default(), &EmptyCluster).unwrap();
        assert_eq!(target.namespace.as_deref(), Some("default"));
        assert_eq!(target.resource, "deployments");
    }
}
