//! What live mode lists for one request: the namespaces it can reach and the custom resources it
//! can cascade to. The cluster-scoped kinds (Namespaces, Nodes, PersistentVolumes, CRDs) are
//! always read first; this decides the rest from the request's target, so a Pod delete in one
//! namespace never lists the whole cluster.

use std::collections::BTreeSet;

use policies_cel::ClusterView;
use policies_cel::cluster::{ObjectKey, Spec};

/// The object a request acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub group: String,
    /// The resource (plural), as the request names it: `statefulsets`, `rabbitmqclusters`.
    pub resource: String,
    /// `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
    pub name: String,
}

/// The namespaces whose namespaced kinds are listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Namespaces {
    All,
    Only(BTreeSet<String>),
}

/// Whether custom resources are listed (metadata only), in the scope's namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instances {
    /// Every CRD's instances.
    All,
    /// No custom resources.
    None,
}

/// What to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub namespaces: Namespaces,
    pub instances: Instances,
}

impl Scope {
    /// The whole cluster (`-A`, snapshots).
    pub fn everything() -> Self {
        Scope {
            namespaces: Namespaces::All,
            instances: Instances::All,
        }
    }

    /// Only the cluster-scoped kinds, already read.
    pub fn nothing() -> Self {
        Scope {
            namespaces: Namespaces::Only(BTreeSet::new()),
            instances: Instances::None,
        }
    }

    /// The namespaced kinds of `namespaces`, no custom resources.
    pub fn namespaces(namespaces: impl IntoIterator<Item = String>) -> Self {
        Scope {
            namespaces: Namespaces::Only(namespaces.into_iter().collect()),
            instances: Instances::None,
        }
    }

    /// What either scope lists (the scope of several requests).
    pub fn union(self, other: Scope) -> Scope {
        let namespaces = match (self.namespaces, other.namespaces) {
            (Namespaces::Only(mut mine), Namespaces::Only(theirs)) => {
                mine.extend(theirs);
                Namespaces::Only(mine)
            }
            _ => Namespaces::All,
        };
        let instances = match (self.instances, other.instances) {
            (Instances::None, Instances::None) => Instances::None,
            _ => Instances::All,
        };
        Scope {
            namespaces,
            instances,
        }
    }

    /// True when the scope lists a namespace's contents.
    pub fn includes(&self, namespace: &str) -> bool {
        match &self.namespaces {
            Namespaces::All => true,
            Namespaces::Only(names) => names.contains(namespace),
        }
    }
}

/// What a request on `target` can reach, given the cluster-scoped kinds already read:
/// - an object in a namespace: that namespace's contents, custom resources included (owners and
///   dependents live beside it: an operator's custom resource owns its StatefulSet; a missing
///   owner would read as a stale ownerReference);
/// - a Namespace: its contents, custom resources included;
/// - a Node or a CRD (pods everywhere, instances everywhere) and cluster-scoped custom resources
///   (which may own objects in any namespace): everything;
/// - a PersistentVolume: the namespace of the claim bound to it;
/// - other cluster-scoped kinds (RBAC, StorageClasses...): nothing more.
pub fn for_target(target: &Target, cluster: &dyn ClusterView) -> Scope {
    if let Some(namespace) = &target.namespace {
        return Scope {
            namespaces: Namespaces::Only(BTreeSet::from([namespace.clone()])),
            instances: Instances::All,
        };
    }
    match (target.group.as_str(), target.resource.as_str()) {
        ("", "namespaces") => Scope {
            namespaces: Namespaces::Only(BTreeSet::from([target.name.clone()])),
            instances: Instances::All,
        },
        ("", "nodes") | ("apiextensions.k8s.io", "customresourcedefinitions") => Scope::everything(),
        ("", "persistentvolumes") => {
            let key = ObjectKey::new("", "PersistentVolume", "", &target.name);
            match cluster.get(&key).map(|pv| &pv.spec) {
                Some(Spec::PersistentVolume {
                    claim: Some((namespace, _)),
                    ..
                }) => Scope::namespaces([namespace.to_string()]),
                _ => Scope::nothing(),
            }
        }
        _ if crd_of(target, cluster).is_some() => Scope::everything(),
        _ => Scope::nothing(),
    }
}

/// The name of the CRD defining `target`'s resource (`plural.group`), when the cluster has it.
fn crd_of(target: &Target, cluster: &dyn ClusterView) -> Option<String> {
    if target.group.is_empty() {
        return None;
    }
    let name = format!("{}.{}", target.resource, target.group);
    let key = ObjectKey::new("apiextensions.k8s.io", "CustomResourceDefinition", "", &name);
    cluster.get(&key).map(|_| name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_union_of_scopes_lists_what_either_lists() {
        let union = Scope::namespaces(["a".to_owned()]).union(Scope {
            namespaces: Namespaces::Only(BTreeSet::from(["b".to_owned()])),
            instances: Instances::All,
        });
        assert_eq!(
            union.namespaces,
            Namespaces::Only(BTreeSet::from(["a".into(), "b".into()]))
        );
        assert_eq!(union.instances, Instances::All);
        assert_eq!(Scope::nothing().union(Scope::everything()), Scope::everything());
        assert_eq!(Scope::nothing().union(Scope::nothing()), Scope::nothing());
    }
    use policies_cel::cluster::{ClusterModel, project};
    use serde_json::json;

    fn cluster() -> ClusterModel {
        let mut model = ClusterModel::new();
        for object in [
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "rabbitmqclusters.rabbitmq.com"},
                "spec": {"group": "rabbitmq.com", "scope": "Namespaced",
                    "names": {"kind": "RabbitmqCluster", "plural": "rabbitmqclusters"},
                    "versions": [{"name": "v1beta1", "served": true, "storage": true}]}}),
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
                "spec": {"claimRef": {"namespace": "databases", "name": "data-pg-0"},
                    "persistentVolumeReclaimPolicy": "Delete"}}),
        ] {
            let object = project(&object, &mut model).unwrap();
            model.insert(object);
        }
        model
    }

    fn target(group: &str, resource: &str, namespace: Option<&str>, name: &str) -> Target {
        Target {
            group: group.into(),
            resource: resource.into(),
            namespace: namespace.map(str::to_owned),
            name: name.into(),
        }
    }

    #[test]
    fn namespaced_objects_read_their_namespace_and_its_custom_resources() {
        for target in [
            target("apps", "statefulsets", Some("mq"), "rabbit"),
            target("rabbitmq.com", "rabbitmqclusters", Some("mq"), "r"),
        ] {
            let scope = for_target(&target, &cluster());
            assert_eq!(
                scope.namespaces,
                Namespaces::Only(BTreeSet::from(["mq".to_owned()]))
            );
            assert_eq!(scope.instances, Instances::All, "owners may be custom resources");
            assert!(scope.includes("mq") && !scope.includes("kube-system"));
        }
    }

    #[test]
    fn cluster_scoped_targets_reach_as_far_as_they_cascade() {
        let cluster = cluster();
        let namespace = for_target(&target("", "namespaces", None, "mq"), &cluster);
        assert_eq!(
            namespace.namespaces,
            Namespaces::Only(BTreeSet::from(["mq".to_owned()]))
        );
        assert_eq!(namespace.instances, Instances::All);
        assert_eq!(
            for_target(&target("", "nodes", None, "n1"), &cluster),
            Scope::everything()
        );
        assert_eq!(
            for_target(
                &target("apiextensions.k8s.io", "customresourcedefinitions", None, "x"),
                &cluster
            ),
            Scope::everything()
        );
        assert_eq!(
            for_target(&target("", "persistentvolumes", None, "pv-1"), &cluster),
            Scope::namespaces(["databases".to_owned()])
        );
        assert_eq!(
            for_target(&target("", "persistentvolumes", None, "unbound"), &cluster),
            Scope::nothing()
        );
        assert_eq!(
            for_target(
                &target("rbac.authorization.k8s.io", "clusterroles", None, "admin"),
                &cluster
            ),
            Scope::nothing()
        );
    }
}
