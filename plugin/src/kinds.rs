//! Kinds and resources: the group/version, plural and scope of the common Kubernetes kinds, and
//! Kubernetes' own rule for guessing the plural resource of any other kind.

/// What Kubernetes knows about one built-in kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindInfo {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    /// The plural resource name (`deployments`).
    pub resource: &'static str,
    /// False for cluster-scoped kinds (Namespace, Node, PersistentVolume, ...).
    pub namespaced: bool,
}

const fn k(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    resource: &'static str,
    namespaced: bool,
) -> KindInfo {
    KindInfo {
        group,
        version,
        kind,
        resource,
        namespaced,
    }
}

/// The built-in kinds a policy test is likely to use.
pub const KNOWN: &[KindInfo] = &[
    k("", "v1", "Pod", "pods", true),
    k("", "v1", "Service", "services", true),
    k("", "v1", "ConfigMap", "configmaps", true),
    k("", "v1", "Secret", "secrets", true),
    k("", "v1", "ServiceAccount", "serviceaccounts", true),
    k("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", true),
    k("", "v1", "Endpoints", "endpoints", true),
    k("", "v1", "Event", "events", true),
    // Also served by events.k8s.io; lookups by kind or resource find the core row first.
    k("events.k8s.io", "v1", "Event", "events", true),
    k("", "v1", "ResourceQuota", "resourcequotas", true),
    k("", "v1", "LimitRange", "limitranges", true),
    k("", "v1", "ReplicationController", "replicationcontrollers", true),
    k("", "v1", "PodTemplate", "podtemplates", true),
    k("", "v1", "Namespace", "namespaces", false),
    k("", "v1", "Node", "nodes", false),
    k("", "v1", "PersistentVolume", "persistentvolumes", false),
    k("apps", "v1", "Deployment", "deployments", true),
    k("apps", "v1", "StatefulSet", "statefulsets", true),
    k("apps", "v1", "DaemonSet", "daemonsets", true),
    k("apps", "v1", "ReplicaSet", "replicasets", true),
    k("apps", "v1", "ControllerRevision", "controllerrevisions", true),
    k("batch", "v1", "Job", "jobs", true),
    k("batch", "v1", "CronJob", "cronjobs", true),
    k(
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
    ),
    k(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
    ),
    k("networking.k8s.io", "v1", "Ingress", "ingresses", true),
    k(
        "networking.k8s.io",
        "v1",
        "NetworkPolicy",
        "networkpolicies",
        true,
    ),
    k("networking.k8s.io", "v1", "IngressClass", "ingressclasses", false),
    k("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", true),
    k("coordination.k8s.io", "v1", "Lease", "leases", true),
    k("rbac.authorization.k8s.io", "v1", "Role", "roles", true),
    k(
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
        true,
    ),
    k(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        false,
    ),
    k(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        false,
    ),
    k("storage.k8s.io", "v1", "StorageClass", "storageclasses", false),
    k(
        "storage.k8s.io",
        "v1",
        "VolumeAttachment",
        "volumeattachments",
        false,
    ),
    k("storage.k8s.io", "v1", "CSIDriver", "csidrivers", false),
    k("storage.k8s.io", "v1", "CSINode", "csinodes", false),
    k(
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        false,
    ),
    k("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", false),
    k(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
    ),
    k(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicy",
        "validatingadmissionpolicies",
        false,
    ),
    k(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicyBinding",
        "validatingadmissionpolicybindings",
        false,
    ),
    k(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
    ),
    k(
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        false,
    ),
    k(
        "certificates.k8s.io",
        "v1",
        "CertificateSigningRequest",
        "certificatesigningrequests",
        false,
    ),
];

/// The built-in kind named `kind` (exact spelling, e.g. `StatefulSet`).
pub fn by_kind(kind: &str) -> Option<&'static KindInfo> {
    KNOWN.iter().find(|info| info.kind == kind)
}

/// The built-in kind whose plural resource is `resource` (e.g. `statefulsets`).
pub fn by_resource(resource: &str) -> Option<&'static KindInfo> {
    KNOWN.iter().find(|info| info.resource == resource)
}

/// The plural resource for `kind`, by Kubernetes' rule (`meta.UnsafeGuessKindToResource`):
/// lower-case, then `s` → `ses`, `y` → `ies`, `endpoints` unchanged, otherwise add `s` — except
/// that a vowel before the `y` just takes an `s` (`Gateway` → `gateways`), as CRDs declare it.
pub fn guess_resource(kind: &str) -> String {
    let singular = kind.to_lowercase();
    if singular.is_empty() || singular.ends_with("endpoints") {
        return singular;
    }
    if singular.ends_with('s') {
        return format!("{singular}es");
    }
    if let Some(stem) = singular.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    format!("{singular}s")
}

/// Splits an `apiVersion` into group and version (`apps/v1` → (`apps`, `v1`); `v1` → (``, `v1`)).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// The table above as the lint's catalog: which API groups serve a resource.
#[derive(Debug, Clone, Copy, Default)]
pub struct KnownResources;

impl policies_cel::lint::ResourceCatalog for KnownResources {
    fn groups_serving(&self, resource: &str) -> Option<Vec<String>> {
        let groups: Vec<String> = KNOWN
            .iter()
            .filter(|info| info.resource == resource)
            .map(|info| info.group.to_owned())
            .collect();
        (!groups.is_empty()).then_some(groups)
    }

    fn knows_group(&self, group: &str) -> bool {
        KNOWN.iter().any(|info| info.group == group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guess_agrees_with_every_known_plural() {
        for info in KNOWN {
            assert_eq!(guess_resource(info.kind), info.resource, "{}", info.kind);
        }
    }

    #[test]
    fn guesses_like_kubernetes() {
        assert_eq!(guess_resource("PostgresCluster"), "postgresclusters");
        assert_eq!(guess_resource("Gateway"), "gateways");
        assert_eq!(guess_resource("Policy"), "policies");
        assert_eq!(guess_resource("Redis"), "redises");
    }

    #[test]
    fn looks_up_both_ways() {
        assert_eq!(by_kind("StatefulSet").map(|i| i.group), Some("apps"));
        assert_eq!(by_resource("namespaces").map(|i| i.namespaced), Some(false));
        assert_eq!(split_api_version("apps/v1"), ("apps", "v1"));
        assert_eq!(split_api_version("v1"), ("", "v1"));
    }
}
