//! The Namespace, the gateway's ServiceAccount, its read-only ClusterRole and binding (get, list
//! and watch on exactly the kinds its model projects and the policies it loads), and the Role
//! and binding that let it write its shard of the shared ledger (ConfigMaps in its own
//! namespace only) and hold the reports' Lease, and the ClusterRole and binding that let it
//! write PolicyReports and Events.

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::install::names;
use crate::install::options::InstallOptions;

/// Object metadata with the common labels.
pub fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: namespace.map(str::to_owned),
        labels: Some(names::labels()),
        ..ObjectMeta::default()
    }
}

/// The gateway's namespace, enforcing the `restricted` Pod Security Standard.
pub fn namespace(options: &InstallOptions) -> Namespace {
    let mut metadata = meta(&options.namespace, None);
    let labels = metadata.labels.get_or_insert_default();
    labels.insert(
        "pod-security.kubernetes.io/enforce".to_owned(),
        "restricted".to_owned(),
    );
    Namespace {
        metadata,
        ..Namespace::default()
    }
}

/// The identity the gateway's watches run as.
pub fn service_account(options: &InstallOptions) -> ServiceAccount {
    ServiceAccount {
        metadata: meta(names::GATEWAY, Some(&options.namespace)),
        ..ServiceAccount::default()
    }
}

/// The kinds the gateway reads, by API group: what `policies_cel::cluster::project` keeps (the
/// impact estimate's inputs), the owners that take part in cascades (ReplicationControllers,
/// CronJobs), and the policies it loads from the cluster (`suture_gateway::live::kinds`).
pub const WATCHED: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "pods",
            "services",
            "persistentvolumeclaims",
            "persistentvolumes",
            "nodes",
            "namespaces",
            "configmaps",
            "secrets",
            "replicationcontrollers",
        ],
    ),
    (
        "apps",
        &["deployments", "replicasets", "statefulsets", "daemonsets"],
    ),
    ("batch", &["jobs", "cronjobs"]),
    ("policy", &["poddisruptionbudgets"]),
    ("autoscaling", &["horizontalpodautoscalers"]),
    ("discovery.k8s.io", &["endpointslices"]),
    ("apiextensions.k8s.io", &["customresourcedefinitions"]),
    (
        "suture.dev",
        &["safetypolicies", "safetypackparams", "operatorprofiles"],
    ),
    (
        "admissionregistration.k8s.io",
        &["validatingadmissionpolicies", "validatingadmissionpolicybindings"],
    ),
];

/// Read-only access to the watched kinds, and list/watch of every resource: deleting a CRD deletes
/// its instances, so the gateway watches the metadata of every custom resource, whose kinds are
/// only known at run time (RBAC cannot name "all custom resources" otherwise).
pub fn cluster_role() -> ClusterRole {
    let mut rules: Vec<PolicyRule> = WATCHED
        .iter()
        .map(|(group, resources)| PolicyRule {
            api_groups: Some(vec![(*group).to_owned()]),
            resources: Some(resources.iter().map(|r| (*r).to_owned()).collect()),
            verbs: ["get", "list", "watch"].map(str::to_owned).to_vec(),
            ..PolicyRule::default()
        })
        .collect();
    rules.push(PolicyRule {
        api_groups: Some(vec!["*".to_owned()]),
        resources: Some(vec!["*".to_owned()]),
        verbs: ["list", "watch"].map(str::to_owned).to_vec(),
        ..PolicyRule::default()
    });
    ClusterRole {
        metadata: meta(names::GATEWAY, None),
        rules: Some(rules),
        ..ClusterRole::default()
    }
}

/// Binds the ClusterRole to the gateway's ServiceAccount.
pub fn cluster_role_binding(options: &InstallOptions) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: meta(names::GATEWAY, None),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".to_owned(),
            kind: "ClusterRole".to_owned(),
            name: names::GATEWAY.to_owned(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".to_owned(),
            name: names::GATEWAY.to_owned(),
            namespace: Some(options.namespace.clone()),
            ..Subject::default()
        }]),
    }
}

/// The name of the Role (and binding) for the ledger's shards.
pub const LEDGER_ROLE: &str = "suture-gateway-ledger";

/// Writing the ledger's shards: ConfigMaps in the gateway's namespace (each replica applies its
/// own and deletes those of replicas whose records aged out; the watch reads them all).
pub fn ledger_role(options: &InstallOptions) -> Role {
    Role {
        metadata: meta(LEDGER_ROLE, Some(&options.namespace)),
        rules: Some(vec![
            PolicyRule {
                api_groups: Some(vec![String::new()]),
                resources: Some(vec!["configmaps".to_owned()]),
                verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
                    .map(str::to_owned)
                    .to_vec(),
                ..PolicyRule::default()
            },
            // The Lease whose holder writes the policy reports (`--report-lease`).
            PolicyRule {
                api_groups: Some(vec!["coordination.k8s.io".to_owned()]),
                resources: Some(vec!["leases".to_owned()]),
                verbs: ["get", "create", "update"].map(str::to_owned).to_vec(),
                ..PolicyRule::default()
            },
        ]),
    }
}

/// The name of the ClusterRole (and binding) for the reports and Events.
pub const REPORTS_ROLE: &str = "suture-gateway-reports";

/// Writing what the gateway reports: its PolicyReport in each namespace and its
/// ClusterPolicyReport (applied, read back when a replica takes over, deleted when empty), and
/// Events on denied or warned objects (created, their counts patched).
pub fn reports_cluster_role() -> ClusterRole {
    ClusterRole {
        metadata: meta(REPORTS_ROLE, None),
        rules: Some(vec![
            PolicyRule {
                api_groups: Some(vec!["wgpolicyk8s.io".to_owned()]),
                resources: Some(vec![
                    "policyreports".to_owned(),
                    "clusterpolicyreports".to_owned(),
                ]),
                verbs: ["get", "list", "create", "patch", "delete"]
                    .map(str::to_owned)
                    .to_vec(),
                ..PolicyRule::default()
            },
            PolicyRule {
                api_groups: Some(vec!["events.k8s.io".to_owned()]),
                resources: Some(vec!["events".to_owned()]),
                verbs: ["create", "patch"].map(str::to_owned).to_vec(),
                ..PolicyRule::default()
            },
        ]),
        ..ClusterRole::default()
    }
}

/// Binds the reports ClusterRole to the gateway's ServiceAccount.
pub fn reports_cluster_role_binding(options: &InstallOptions) -> ClusterRoleBinding {
    ClusterRoleBinding {
        metadata: meta(REPORTS_ROLE, None),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".to_owned(),
            kind: "ClusterRole".to_owned(),
            name: REPORTS_ROLE.to_owned(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".to_owned(),
            name: names::GATEWAY.to_owned(),
            namespace: Some(options.namespace.clone()),
            ..Subject::default()
        }]),
    }
}

/// Binds the ledger Role to the gateway's ServiceAccount.
pub fn ledger_role_binding(options: &InstallOptions) -> RoleBinding {
    RoleBinding {
        metadata: meta(LEDGER_ROLE, Some(&options.namespace)),
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".to_owned(),
            kind: "Role".to_owned(),
            name: LEDGER_ROLE.to_owned(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".to_owned(),
            name: names::GATEWAY.to_owned(),
            namespace: Some(options.namespace.clone()),
            ..Subject::default()
        }]),
    }
}
