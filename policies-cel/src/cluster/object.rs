//! The slim projection of a Kubernetes object: only what the impact estimate and policies need.
//!
//! A 10 KiB Pod becomes its identity, labels, owners, node, readiness, volumes, referenced
//! ConfigMaps/Secrets and tolerations. Strings are shared (`Arc<str>`) so repeated label keys,
//! namespaces and node names cost one allocation each across the model.

use std::sync::Arc;

use crate::cluster::pod_security::Violations;

/// A shared, immutable string.
pub type Text = Arc<str>;

/// Group, kind, namespace and name: how objects are found.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    /// API group; empty for the core group.
    pub group: Text,
    pub kind: Text,
    /// Empty for cluster-scoped objects.
    pub namespace: Text,
    pub name: Text,
}

impl ObjectKey {
    pub fn new(group: &str, kind: &str, namespace: &str, name: &str) -> Self {
        Self {
            group: group.into(),
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// `kind namespace/name`, as messages print it (`StatefulSet mq/rabbitmq`).
    pub fn display(&self) -> String {
        let mut text = String::with_capacity(self.display_len());
        self.push_display(&mut text);
        text
    }

    /// Appends [`Self::display`] to `text` (the estimate's phrases are built on the request
    /// path: plain appends, no formatting machinery).
    pub fn push_display(&self, text: &mut String) {
        self.display_parts()
            .into_iter()
            .for_each(|part| text.push_str(part));
    }

    /// The length of [`Self::display`].
    pub fn display_len(&self) -> usize {
        self.display_parts().iter().map(|part| part.len()).sum()
    }

    /// [`Self::display`] in pieces: kind, a space, then `namespace/` when namespaced, and name.
    fn display_parts(&self) -> [&str; 5] {
        let (namespace, slash) = if self.namespace.is_empty() {
            ("", "")
        } else {
            (&*self.namespace, "/")
        };
        [&self.kind, " ", namespace, slash, &self.name]
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.display_parts()
            .into_iter()
            .try_for_each(|part| f.write_str(part))
    }
}

/// The API group of a built-in kind (`""` for the core group), `None` for other kinds.
pub fn builtin_group(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "Pod"
        | "Service"
        | "Namespace"
        | "Node"
        | "PersistentVolumeClaim"
        | "PersistentVolume"
        | "ConfigMap"
        | "Secret"
        | "ReplicationController"
        | "ServiceAccount"
        | "Endpoints" => "",
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" | "ControllerRevision" => "apps",
        "Job" | "CronJob" => "batch",
        "PodDisruptionBudget" => "policy",
        "HorizontalPodAutoscaler" => "autoscaling",
        "EndpointSlice" => "discovery.k8s.io",
        "CustomResourceDefinition" => "apiextensions.k8s.io",
        "PriorityClass" => "scheduling.k8s.io",
        "RuntimeClass" => "node.k8s.io",
        _ => return None,
    })
}

/// An ownerReference.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OwnerRef {
    pub uid: Text,
    pub api_version: Text,
    pub kind: Text,
    pub name: Text,
    pub controller: bool,
    pub block_owner_deletion: bool,
}

/// Sorted `key=value` pairs. Shared: the model keeps one copy of each distinct list (pods of
/// one workload carry the same labels), see [`ClusterModel::share_labels`](crate::cluster::ClusterModel::share_labels).
pub type Labels = Arc<[(Text, Text)]>;

/// An object's ownerReferences. Shared like [`Labels`]: every pod of a ReplicaSet or
/// StatefulSet holds the same list.
pub type Owners = Arc<[OwnerRef]>;

/// An int or a percentage (`maxUnavailable: 25%`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOrPercent {
    Int(i64),
    Percent(i64),
}

/// A label selector (`matchLabels` + `matchExpressions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    pub match_labels: Labels,
    pub expressions: Box<[Requirement]>,
}

/// One `matchExpressions` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub key: Text,
    pub operator: Operator,
    pub values: Box<[Text]>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

impl Selector {
    /// The selector of equality on each of `labels` (how a Service selects its pods).
    pub fn of_labels(labels: &Labels) -> Self {
        Self {
            match_labels: labels.clone(),
            expressions: Box::default(),
        }
    }

    /// True when `labels` satisfy the selector (an empty selector matches everything).
    pub fn matches(&self, labels: &Labels) -> bool {
        let get = |key: &str| labels.iter().find(|(k, _)| &**k == key).map(|(_, v)| v);
        self.match_labels.iter().all(|(k, v)| get(k) == Some(v))
            && self.expressions.iter().all(|r| {
                let value = get(&r.key);
                match r.operator {
                    Operator::In => value.is_some_and(|v| r.values.contains(v)),
                    Operator::NotIn => value.is_none_or(|v| !r.values.contains(v)),
                    Operator::Exists => value.is_some(),
                    Operator::DoesNotExist => value.is_none(),
                }
            })
    }

    /// True when the selector has no requirement at all (selects everything).
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.expressions.is_empty()
    }
}

/// A toleration of a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toleration {
    pub key: Option<Text>,
    /// `Exists` or `Equal` (default).
    pub exists: bool,
    pub value: Option<Text>,
    /// `NoSchedule`, `PreferNoSchedule`, `NoExecute`, or any when absent.
    pub effect: Option<Text>,
}

/// A node taint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taint {
    pub key: Text,
    pub value: Option<Text>,
    pub effect: Text,
}

impl Toleration {
    /// True when this toleration tolerates `taint` (Kubernetes' `ToleratesTaint`).
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if self.effect.as_ref().is_some_and(|e| *e != taint.effect) {
            return false;
        }
        match &self.key {
            None => self.exists,
            Some(key) if *key != taint.key => false,
            Some(_) if self.exists => true,
            Some(_) => self.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        }
    }
}

/// What a pod consumes from a ConfigMap or Secret.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConfigUse {
    pub name: Text,
    /// Keys read (env `valueFrom`, volume `items`); `None` when the whole object is used
    /// (`envFrom`, a volume without items).
    pub keys: Option<Box<[Text]>>,
    /// False when the reference is marked `optional: true`.
    pub required: bool,
}

/// A pod's ConfigMap or Secret uses. Shared like [`Labels`]: pods of one workload read the
/// same ones.
pub type ConfigUses = Arc<[ConfigUse]>;

/// What kube-apiserver's admission requires of a pod when it is created: that the ServiceAccount
/// it runs as (ServiceAccount admission), its PriorityClass (Priority admission) and
/// RuntimeClass (RuntimeClass admission) exist, and that it meets its namespace's Pod Security
/// level (PodSecurity admission); and the ports it offers Services. Shared like [`Labels`]: the pods of one workload are alike, so
/// a pod holds one pointer to them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct PodRequirements {
    /// `spec.serviceAccountName` (empty stands for `default`, as the API server's ServiceAccount
    /// admission sets it; see [`PodSpec::runs_as`]).
    pub service_account: Text,
    /// `spec.priorityClassName` (the Priority admission writes the global default's name into
    /// a pod that names none, when there is one).
    pub priority_class: Option<Text>,
    /// `spec.runtimeClassName`.
    pub runtime_class: Option<Text>,
    /// The Pod Security Standards checks the pod fails (PodSecurity admission refuses a new pod
    /// like it in a namespace enforcing a level it fails).
    pub pod_security: Violations,
    /// The container ports the pod declares by name ([`crate::cluster::ports`]): a Service's
    /// named `targetPort` reaches the pod only through one of them.
    pub ports: Box<[NamedPort]>,
}

/// A container port declared by name, with its protocol (`TCP` when unset).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamedPort {
    pub name: Text,
    pub protocol: Text,
}

/// A port of a Service: its name (how its endpoints' ports are keyed), number, protocol (`TCP`
/// when unset) and the pods' port it sends to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServicePort {
    pub name: Text,
    pub port: i64,
    pub protocol: Text,
    pub target: PortTarget,
}

/// A Service port's `targetPort`: a number (unset: the port's own), which every pod serves, or
/// the name of a container port, which only the pods declaring it serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortTarget {
    Number(i64),
    Name(Text),
}

/// A kind of class a pod can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClassKind {
    /// `scheduling.k8s.io/v1` PriorityClass.
    Priority,
    /// `node.k8s.io/v1` RuntimeClass.
    Runtime,
}

impl ClassKind {
    /// The kind as Kubernetes names it.
    pub fn kind(self) -> &'static str {
        match self {
            Self::Priority => "PriorityClass",
            Self::Runtime => "RuntimeClass",
        }
    }
}

/// The pod fields the estimate reads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodSpec {
    pub node: Option<Text>,
    /// `status.phase`.
    pub phase: Phase,
    /// The `Ready` condition is true.
    pub ready: bool,
    /// PersistentVolumeClaims mounted (by claim name).
    pub claims: Box<[Text]>,
    pub config_maps: ConfigUses,
    pub secrets: ConfigUses,
    pub tolerations: Box<[Toleration]>,
    /// The ServiceAccount and classes the pod names.
    pub requires: Arc<PodRequirements>,
    /// The pod holds a token of its ServiceAccount (a projected `serviceAccountToken` source, as
    /// the ServiceAccount admission mounts unless `automountServiceAccountToken` is false).
    pub api_token: bool,
}

/// The ServiceAccount of a pod that names none.
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";

impl PodSpec {
    /// The ServiceAccount the pod runs as: `default` when none is named (as the API server's
    /// ServiceAccount admission sets it).
    pub fn runs_as(&self) -> &str {
        let named = &self.requires.service_account;
        if named.is_empty() {
            DEFAULT_SERVICE_ACCOUNT
        } else {
            named
        }
    }

    /// The class of `kind` the pod names, if any.
    pub fn class(&self, kind: ClassKind) -> Option<&str> {
        match kind {
            ClassKind::Priority => self.requires.priority_class.as_deref(),
            ClassKind::Runtime => self.requires.runtime_class.as_deref(),
        }
    }

    /// Finished pods (Succeeded/Failed) are never "disrupted".
    pub fn finished(&self) -> bool {
        matches!(self.phase, Phase::Succeeded | Phase::Failed)
    }
}

/// A pod's `status.phase` (one byte instead of a shared string).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Also the phase of a pod the API server has not seen yet.
    #[default]
    Pending,
    Running,
    Succeeded,
    Failed,
    Unknown,
    /// A value the API server does not produce (hand-written snapshots); ranks as no known phase.
    Other,
}

impl Phase {
    /// The phase named `phase` (`Other` for a name Kubernetes does not define).
    pub fn parse(phase: &str) -> Self {
        match phase {
            "Pending" => Self::Pending,
            "Running" => Self::Running,
            "Succeeded" => Self::Succeeded,
            "Failed" => Self::Failed,
            "Unknown" => Self::Unknown,
            _ => Self::Other,
        }
    }

    /// The phase's name as the API server writes it (`""` for [`Phase::Other`]).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "Pending",
            Self::Running => "Running",
            Self::Succeeded => "Succeeded",
            Self::Failed => "Failed",
            Self::Unknown => "Unknown",
            Self::Other => "",
        }
    }
}

/// Deployment or ReplicaSet rollout settings.
#[derive(Debug, Clone, PartialEq)]
pub enum DeploymentStrategy {
    RollingUpdate {
        max_unavailable: IntOrPercent,
        max_surge: IntOrPercent,
    },
    Recreate,
}

/// StatefulSet update settings.
#[derive(Debug, Clone, PartialEq)]
pub enum StatefulSetStrategy {
    RollingUpdate {
        partition: i64,
        max_unavailable: IntOrPercent,
    },
    OnDelete,
}

/// What happens to a StatefulSet's PVCs (`persistentVolumeClaimRetentionPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Retention {
    pub delete_when_deleted: bool,
    pub delete_when_scaled: bool,
}

/// Node labels whose value names one node: the hostname, and the topology keys of CSI drivers
/// for node-local disks (TopoLVM, OpenEBS LocalPV, the CSI hostpath and LVM drivers). A volume
/// whose required node affinity asks for one value of one of these lives on that node.
pub const NODE_LOCAL_TOPOLOGY_KEYS: &[&str] = &[
    "kubernetes.io/hostname",
    "topology.topolvm.io/node",
    "openebs.io/nodename",
    "topology.hostpath.csi/node",
    "topology.lvm.csi/node",
];

/// The workload fields the estimate reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    Pod(PodSpec),
    Deployment {
        replicas: i64,
        selector: Selector,
        strategy: DeploymentStrategy,
        paused: bool,
    },
    ReplicaSet {
        replicas: i64,
        selector: Selector,
    },
    StatefulSet {
        replicas: i64,
        selector: Selector,
        strategy: StatefulSetStrategy,
        parallel: bool,
        claim_templates: Box<[Text]>,
        retention: Retention,
    },
    DaemonSet {
        selector: Selector,
        max_unavailable: IntOrPercent,
        max_surge: IntOrPercent,
        /// The nodes its pods may run on, from the pod template's `nodeSelector` and required
        /// node affinity: a node fits when its labels match any of these terms (each term holds
        /// the nodeSelector's labels too); none means every node.
        placement: Box<[Selector]>,
    },
    Job {
        selector: Option<Selector>,
    },
    Service {
        selector: Option<Labels>,
        /// A `type: LoadBalancer` Service's external addresses (`status.loadBalancer.ingress`,
        /// IPs and hostnames): what clients and DNS records point at. Empty otherwise.
        external: Box<[Text]>,
        ports: Box<[ServicePort]>,
    },
    PodDisruptionBudget {
        selector: Selector,
        min_available: Option<IntOrPercent>,
        max_unavailable: Option<IntOrPercent>,
        /// `unhealthyPodEvictionPolicy: AlwaysAllow`: a running pod that is not ready may go
        /// whatever the budget. The default, `IfHealthyBudget`, lets it go only while the budget
        /// is met (currentHealthy ≥ desiredHealthy).
        always_allow_unhealthy: bool,
    },
    PersistentVolumeClaim {
        volume: Option<Text>,
    },
    PersistentVolume {
        reclaim_delete: bool,
        claim: Option<(Text, Text)>,
        /// The one node its required node affinity allows (a local volume): the value of a
        /// node-local topology key, or the Node's name (see
        /// [`NODE_LOCAL_TOPOLOGY_KEYS`]).
        node: Option<Text>,
    },
    Node {
        unschedulable: bool,
        taints: Box<[Taint]>,
    },
    Namespace,
    CustomResourceDefinition {
        group: Text,
        kind: Text,
        plural: Text,
        namespaced: bool,
    },
    EndpointSlice {
        service: Option<Text>,
        endpoints: Box<[Endpoint]>,
    },
    ConfigMap {
        keys: Box<[Text]>,
    },
    Secret {
        keys: Box<[Text]>,
    },
    /// An object of a kind an OperatorProfile describes: what the model keeps of it (name,
    /// namespace, labels, finalizers and the fields the profiles name), as JSON.
    Kept(Arc<serde_json::Value>),
    /// Any other kind (custom resources included): identity and owners only.
    Other,
}

/// One endpoint of an EndpointSlice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The pod behind it, when `targetRef` names one.
    pub pod: Option<Text>,
    pub ready: bool,
}

/// A `metadata.deletionTimestamp` (RFC 3339) as [`Object::deletion_timestamp`] keeps it; `None`
/// when it is not a time. The epoch itself is kept as one second past it.
pub fn deletion_timestamp(text: &str) -> Option<std::num::NonZeroI64> {
    let seconds = chrono::DateTime::parse_from_rfc3339(text).ok()?.timestamp();
    std::num::NonZeroI64::new(seconds).or(std::num::NonZeroI64::new(1))
}

/// A slim object.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub key: ObjectKey,
    pub api_version: Text,
    pub uid: Option<Text>,
    pub labels: Labels,
    /// Only the `suture.dev/` annotations (escape hatches and descriptions).
    pub annotations: Labels,
    pub owners: Owners,
    /// `metadata.deletionTimestamp` (seconds since the epoch, the API's precision), when set:
    /// the object is terminating.
    pub deletion_timestamp: Option<std::num::NonZeroI64>,
    pub spec: Spec,
}

impl Object {
    /// The pod fields, when this is a Pod.
    pub fn pod(&self) -> Option<&PodSpec> {
        match &self.spec {
            Spec::Pod(pod) => Some(pod),
            _ => None,
        }
    }

    /// The pod fields of a running pod: a Pod neither terminating nor finished (what the
    /// estimate's rules mean by a pod a request can still take away or leave unreplaceable).
    pub fn running_pod(&self) -> Option<&PodSpec> {
        self.pod().filter(|pod| !pod.finished() && !self.terminating())
    }

    /// True when the object is terminating (`metadata.deletionTimestamp` is set).
    pub fn terminating(&self) -> bool {
        self.deletion_timestamp.is_some()
    }

    /// `metadata.deletionTimestamp` as the API writes it (`2025-03-02T09:19:42Z`), when set.
    pub fn deletion_timestamp_text(&self) -> Option<String> {
        let seconds = self.deletion_timestamp?.get();
        chrono::DateTime::from_timestamp(seconds, 0).map(|time| time.format("%Y-%m-%dT%H:%M:%SZ").to_string())
    }

    /// The owner marked `controller: true`, if any.
    pub fn controller(&self) -> Option<&OwnerRef> {
        self.owners.iter().find(|o| o.controller)
    }

    /// The value of label `key`.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.iter().find(|(k, _)| &**k == key).map(|(_, v)| &**v)
    }

    /// A `suture.dev/` annotation.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| &**v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (Text::from(*k), Text::from(*v)))
            .collect()
    }

    #[test]
    fn a_key_prints_as_kind_then_namespace_and_name() {
        let namespaced = ObjectKey::new("apps", "StatefulSet", "mq", "rabbitmq");
        let cluster_scoped = ObjectKey::new("", "Node", "", "node-a");
        for (key, text) in [
            (namespaced, "StatefulSet mq/rabbitmq"),
            (cluster_scoped, "Node node-a"),
        ] {
            assert_eq!(key.display(), text);
            assert_eq!(key.to_string(), text);
            assert_eq!(key.display_len(), text.len());
        }
    }

    #[test]
    fn selectors_follow_kubernetes() {
        let selector = Selector {
            match_labels: labels(&[("app", "db")]),
            expressions: Box::new([Requirement {
                key: "tier".into(),
                operator: Operator::NotIn,
                values: Box::new(["test".into()]),
            }]),
        };
        assert!(selector.matches(&labels(&[("app", "db")])));
        assert!(selector.matches(&labels(&[("app", "db"), ("tier", "prod")])));
        assert!(!selector.matches(&labels(&[("app", "db"), ("tier", "test")])));
        assert!(!selector.matches(&labels(&[("app", "web")])));
    }

    #[test]
    fn tolerations_follow_kubernetes() {
        let taint = Taint {
            key: "node.kubernetes.io/unreachable".into(),
            value: None,
            effect: "NoExecute".into(),
        };
        let exists = Toleration {
            key: Some(taint.key.clone()),
            exists: true,
            value: None,
            effect: Some("NoExecute".into()),
        };
        let everything = Toleration {
            key: None,
            exists: true,
            value: None,
            effect: None,
        };
        let other_effect = Toleration {
            effect: Some("NoSchedule".into()),
            ..exists.clone()
        };
        assert!(exists.tolerates(&taint));
        assert!(everything.tolerates(&taint));
        assert!(!other_effect.tolerates(&taint));
    }
}

#[cfg(test)]
mod layout {
    use super::*;

    /// Every model object pays these inline sizes; a field that grows them costs every pod.
    #[test]
    fn objects_stay_small() {
        assert_eq!(size_of::<ObjectKey>(), 64);
        // The shared requirements (ServiceAccount and classes, one pointer) took PodSpec from 88
        // to 96 bytes, and an Object stays at 248.
        assert_eq!(size_of::<PodSpec>(), 96);
        assert!(size_of::<Spec>() <= 96, "{}", size_of::<Spec>());
        assert!(size_of::<Object>() <= 248, "{}", size_of::<Object>());
        assert_eq!(size_of::<Option<Object>>(), size_of::<Object>());
        assert_eq!(size_of::<Phase>(), 1);
    }
}
