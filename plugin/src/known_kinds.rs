//! Which kind a resource or a kubectl type name (`sts`, `statefulset`, `statefulsets.apps`,
//! `rabbitmqclusters`) means: the built-in table, then the CustomResourceDefinitions of the
//! cluster snapshot; and the object of that kind as the snapshot holds it.

use policies_cel::ClusterView;
use policies_cel::cluster::{ObjectKey, Spec, json::to_json};
use serde_json::Value as Json;

use crate::kinds;

/// A kind and its resource, as a request names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindRef {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub resource: String,
    pub namespaced: bool,
}

/// kubectl's short names of the built-in kinds.
const SHORT_NAMES: &[(&str, &str)] = &[
    ("po", "pods"),
    ("svc", "services"),
    ("cm", "configmaps"),
    ("sa", "serviceaccounts"),
    ("pvc", "persistentvolumeclaims"),
    ("pv", "persistentvolumes"),
    ("ns", "namespaces"),
    ("no", "nodes"),
    ("ep", "endpoints"),
    ("deploy", "deployments"),
    ("sts", "statefulsets"),
    ("ds", "daemonsets"),
    ("rs", "replicasets"),
    ("cj", "cronjobs"),
    ("ing", "ingresses"),
    ("pdb", "poddisruptionbudgets"),
    ("pc", "priorityclasses"),
    ("crd", "customresourcedefinitions"),
    ("crds", "customresourcedefinitions"),
];

fn builtin(info: &kinds::KindInfo) -> KindRef {
    KindRef {
        group: info.group.into(),
        version: info.version.into(),
        kind: info.kind.into(),
        resource: info.resource.into(),
        namespaced: info.namespaced,
    }
}

/// The CRDs of the snapshot as kinds (version from an instance in the snapshot, else `v1`).
fn custom(cluster: &dyn ClusterView) -> Vec<KindRef> {
    cluster
        .of_kind("apiextensions.k8s.io", "CustomResourceDefinition")
        .into_iter()
        .filter_map(|crd| match &crd.spec {
            Spec::CustomResourceDefinition {
                group,
                kind,
                plural,
                namespaced,
            } => {
                let version = cluster
                    .of_kind(group, kind)
                    .first()
                    .and_then(|o| o.api_version.rsplit_once('/').map(|(_, v)| v.to_owned()))
                    .unwrap_or_else(|| "v1".to_owned());
                Some(KindRef {
                    group: group.to_string(),
                    version,
                    kind: kind.to_string(),
                    resource: plural.to_string(),
                    namespaced: *namespaced,
                })
            }
            _ => None,
        })
        .collect()
}

/// The kind served at `group`/`resource`.
pub fn by_resource(cluster: &dyn ClusterView, group: &str, resource: &str) -> Option<KindRef> {
    kinds::by_resource(resource)
        .filter(|info| info.group == group)
        .map(builtin)
        .or_else(|| {
            custom(cluster)
                .into_iter()
                .find(|k| k.group == group && k.resource == resource)
        })
}

/// The kind a kubectl type name means: a kind, its singular or plural resource, a short name,
/// optionally qualified by its group (`statefulsets.apps`), case-insensitively.
pub fn by_type_name(cluster: &dyn ClusterView, name: &str) -> Option<KindRef> {
    let name = name.to_ascii_lowercase();
    let (name, group) = match name.split_once('.') {
        Some((name, group)) => (name.to_owned(), Some(group.to_owned())),
        None => (name, None),
    };
    let name = SHORT_NAMES
        .iter()
        .find(|(short, _)| *short == name)
        .map_or(name.clone(), |(_, resource)| (*resource).to_owned());
    let matches = |k: &KindRef| {
        let kind = k.kind.to_ascii_lowercase();
        (k.resource == name || kind == name) && group.as_deref().is_none_or(|g| g == k.group)
    };
    kinds_known(cluster).into_iter().find(matches)
}

fn kinds_known(cluster: &dyn ClusterView) -> Vec<KindRef> {
    let mut all: Vec<KindRef> = kinds::KNOWN.iter().map(builtin).collect();
    all.extend(custom(cluster));
    all
}

/// The object as the snapshot holds it (slim: the fields the estimate reads), as JSON.
pub fn stored(cluster: &dyn ClusterView, kind: &KindRef, namespace: &str, name: &str) -> Option<Json> {
    let namespace = if kind.namespaced { namespace } else { "" };
    let key = ObjectKey::new(&kind.group, &kind.kind, namespace, name);
    cluster.get(&key).map(to_json)
}

#[cfg(test)]
mod tests {
    use policies_cel::EmptyCluster;

    use super::*;

    #[test]
    fn kubectl_type_names_resolve_like_kubectl() {
        for name in [
            "sts",
            "statefulset",
            "statefulsets",
            "StatefulSet",
            "statefulsets.apps",
        ] {
            let kind = by_type_name(&EmptyCluster, name).map(|k| k.kind);
            assert_eq!(kind.as_deref(), Some("StatefulSet"), "{name}");
        }
        assert_eq!(
            by_type_name(&EmptyCluster, "pdb").map(|k| k.group),
            Some("policy".to_owned())
        );
        assert_eq!(by_type_name(&EmptyCluster, "statefulsets.batch"), None);
        assert_eq!(by_type_name(&EmptyCluster, "widgets"), None);
    }
}
