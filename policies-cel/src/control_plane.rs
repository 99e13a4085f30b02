//! The Kubernetes control plane's own identities, which safety policies exempt by identity
//! (`subjects.exclude.controlPlane`) rather than by namespace, so that a third-party operator
//! installed in kube-system is still judged: kube-controller-manager's per-controller service
//! accounts in kube-system (it runs each controller with its own under
//! `--use-service-account-credentials`, the default of kubeadm and most distributions), those of
//! cloud-controller-manager, the components' own users, and nodes.

/// Service accounts in kube-system that kube-controller-manager and cloud-controller-manager
/// give their controllers, as of Kubernetes 1.36: every name a controller asks its client
/// builder for (`ClientOrDie`, `NewClient`, `ClientName`), and every controller's own name (which
/// several controllers use for their client), sorted.
pub const CONTROLLER_SERVICE_ACCOUNTS: &[&str] = &[
    "attachdetach-controller",
    "bootstrap-signer",
    "bootstrap-signer-controller",
    "certificate-controller",
    "certificatesigningrequest-approving-controller",
    "certificatesigningrequest-cleaner-controller",
    "certificatesigningrequest-signing-controller",
    "cloud-controller-manager",
    "clusterrole-aggregation-controller",
    "controller-discovery",
    "cronjob-controller",
    "daemon-set-controller",
    "daemonset-controller",
    "deployment-controller",
    "device-taint-eviction-controller",
    "disruption-controller",
    "endpoint-controller",
    "endpoints-controller",
    "endpointslice-controller",
    "endpointslice-mirroring-controller",
    "endpointslicemirroring-controller",
    "ephemeral-volume-controller",
    "expand-controller",
    "garbage-collector-controller",
    "generic-garbage-collector",
    "horizontal-pod-autoscaler",
    "horizontal-pod-autoscaler-controller",
    "job-controller",
    "kube-apiserver-serving-clustertrustbundle-publisher",
    "kube-apiserver-serving-clustertrustbundle-publisher-controller",
    "legacy-service-account-token-cleaner",
    "legacy-serviceaccount-token-cleaner-controller",
    "metadata-informers",
    "namespace-controller",
    "node-controller",
    "node-ipam-controller",
    "node-lifecycle-controller",
    "persistent-volume-binder",
    "persistentvolume-attach-detach-controller",
    "persistentvolume-binder-controller",
    "persistentvolume-expander-controller",
    "persistentvolume-protection-controller",
    "persistentvolumeclaim-protection-controller",
    "pod-garbage-collector",
    "pod-garbage-collector-controller",
    "podcertificaterequest-cleaner-controller",
    "podcertificaterequestcleaner",
    "podgroup-protection-controller",
    "pv-protection-controller",
    "pvc-protection-controller",
    "replicaset-controller",
    "replication-controller",
    "replicationcontroller-controller",
    "resource-claim-controller",
    "resourceclaim-controller",
    "resourcepoolstatusrequest-controller",
    "resourcequota-controller",
    "root-ca-cert-publisher",
    "root-ca-certificate-publisher-controller",
    "route-controller",
    "selinux-warning-controller",
    "service-account-controller",
    "service-ca-cert-publisher",
    "service-ca-certificate-publisher-controller",
    "service-cidr-controller",
    "service-cidrs-controller",
    "service-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "shared-informers",
    "statefulset-controller",
    "storage-version-garbage-collector",
    "storage-version-migrator-controller",
    "storageversion-garbage-collector-controller",
    "taint-eviction-controller",
    "token-cleaner",
    "token-cleaner-controller",
    "tokens-controller",
    "ttl-after-finished-controller",
    "ttl-controller",
    "validatingadmissionpolicy-status-controller",
    "volumeattributesclass-protection-controller",
];

/// The control plane components' own users (kube-controller-manager without per-controller
/// credentials, the scheduler, kube-proxy, kube-apiserver's loopback client).
pub const COMPONENT_USERS: &[&str] = &[
    "system:kube-controller-manager",
    "system:kube-scheduler",
    "system:kube-proxy",
    "system:apiserver",
];

/// The user names of [`CONTROLLER_SERVICE_ACCOUNTS`] (`system:serviceaccount:kube-system:NAME`).
pub fn controller_usernames() -> Vec<String> {
    CONTROLLER_SERVICE_ACCOUNTS
        .iter()
        .map(|name| format!("system:serviceaccount:kube-system:{name}"))
        .collect()
}

/// True when `username` (with `groups`) is the control plane's own: a controller's service
/// account, a component's user, or a node (`system:node:NAME` in group `system:nodes`).
pub fn is_control_plane(username: &str, groups: &[String]) -> bool {
    if let Some(name) = username.strip_prefix("system:serviceaccount:kube-system:") {
        return CONTROLLER_SERVICE_ACCOUNTS.binary_search(&name).is_ok();
    }
    COMPONENT_USERS.contains(&username)
        || (username.starts_with("system:node:") && groups.iter().any(|g| g == "system:nodes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controllers_components_and_nodes_are_the_control_plane_and_other_kube_system_accounts_are_not() {
        let none: Vec<String> = Vec::new();
        let nodes = vec!["system:nodes".to_owned(), "system:authenticated".to_owned()];
        assert!(is_control_plane(
            "system:serviceaccount:kube-system:generic-garbage-collector",
            &none
        ));
        assert!(is_control_plane(
            "system:serviceaccount:kube-system:statefulset-controller",
            &none
        ));
        assert!(is_control_plane("system:kube-scheduler", &none));
        assert!(is_control_plane("system:node:worker-3", &nodes));
        // A third-party operator installed in kube-system is judged.
        assert!(!is_control_plane(
            "system:serviceaccount:kube-system:ebs-csi-controller-sa",
            &none
        ));
        assert!(!is_control_plane(
            "system:serviceaccount:kube-system:aws-load-balancer-controller",
            &none
        ));
        // A controller's name in another namespace is not the control plane's.
        assert!(!is_control_plane(
            "system:serviceaccount:ops:deployment-controller",
            &none
        ));
        // A user named like a node, without the nodes group, is not a node.
        assert!(!is_control_plane("system:node:worker-3", &none));
        assert!(
            CONTROLLER_SERVICE_ACCOUNTS.windows(2).all(|w| w[0] < w[1]),
            "kept sorted"
        );
        assert_eq!(controller_usernames().len(), CONTROLLER_SERVICE_ACCOUNTS.len());
    }
}
