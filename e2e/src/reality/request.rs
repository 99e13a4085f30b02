//! The request a scenario makes: a DELETE (with its propagationPolicy), a merge patch (an UPDATE),
//! a scale through the `scale` subresource, or an eviction. The same request is both performed
//! for real (as the admin, whom the pack does not judge) and turned into the AdmissionReview
//! kube-apiserver would send for it, so the estimate judges exactly what the controllers act out.

use anyhow::Context;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, EvictParams, ListParams, Patch, PatchParams, PropagationPolicy,
};
use serde_json::{Value, json};

/// A kind the scenarios touch, as the API serves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
}

impl Kind {
    const fn new(
        group: &'static str,
        version: &'static str,
        kind: &'static str,
        plural: &'static str,
    ) -> Self {
        Self {
            group,
            version,
            kind,
            plural,
            namespaced: true,
        }
    }

    const fn cluster(self) -> Self {
        Self {
            namespaced: false,
            ..self
        }
    }

    /// The resource kube's dynamic client reaches it through.
    pub fn resource(&self) -> ApiResource {
        let api_version = if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        };
        ApiResource {
            group: self.group.to_owned(),
            version: self.version.to_owned(),
            api_version,
            kind: self.kind.to_owned(),
            plural: self.plural.to_owned(),
        }
    }

    /// Its dynamic API in `namespace` (ignored for a cluster-scoped kind).
    pub fn api(&self, client: &kube::Client, namespace: &str) -> Api<DynamicObject> {
        if self.namespaced {
            Api::namespaced_with(client.clone(), namespace, &self.resource())
        } else {
            Api::all_with(client.clone(), &self.resource())
        }
    }
}

pub const POD: Kind = Kind::new("", "v1", "Pod", "pods");
pub const SERVICE: Kind = Kind::new("", "v1", "Service", "services");
pub const CONFIG_MAP: Kind = Kind::new("", "v1", "ConfigMap", "configmaps");
pub const SECRET: Kind = Kind::new("", "v1", "Secret", "secrets");
pub const CLAIM: Kind = Kind::new("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims");
pub const REPLICATION_CONTROLLER: Kind =
    Kind::new("", "v1", "ReplicationController", "replicationcontrollers");
pub const DEPLOYMENT: Kind = Kind::new("apps", "v1", "Deployment", "deployments");
pub const REPLICA_SET: Kind = Kind::new("apps", "v1", "ReplicaSet", "replicasets");
pub const STATEFUL_SET: Kind = Kind::new("apps", "v1", "StatefulSet", "statefulsets");
pub const DAEMON_SET: Kind = Kind::new("apps", "v1", "DaemonSet", "daemonsets");
pub const JOB: Kind = Kind::new("batch", "v1", "Job", "jobs");
pub const CRON_JOB: Kind = Kind::new("batch", "v1", "CronJob", "cronjobs");
/// Not a kind the model holds (its slices stand for it): only ever a scenario's target.
pub const ENDPOINTS: Kind = Kind::new("", "v1", "Endpoints", "endpoints");
pub const ENDPOINT_SLICE: Kind = Kind::new("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices");
pub const PDB: Kind = Kind::new("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets");
pub const HPA: Kind = Kind::new(
    "autoscaling",
    "v2",
    "HorizontalPodAutoscaler",
    "horizontalpodautoscalers",
);
pub const NAMESPACE: Kind = Kind::new("", "v1", "Namespace", "namespaces").cluster();
pub const NODE: Kind = Kind::new("", "v1", "Node", "nodes").cluster();
pub const VOLUME: Kind = Kind::new("", "v1", "PersistentVolume", "persistentvolumes").cluster();
pub const CRD: Kind = Kind::new(
    "apiextensions.k8s.io",
    "v1",
    "CustomResourceDefinition",
    "customresourcedefinitions",
)
.cluster();
/// The suite's namespaced custom resource (`scenes::WIDGET_CRD`).
pub const WIDGET: Kind = Kind::new("e2e.suture.dev", "v1", "Widget", "widgets");
/// A cluster-scoped custom resource some scenarios define (`Tenant`, group reality.suture.dev).
pub const TENANT: Kind = Kind::new("reality.suture.dev", "v1", "Tenant", "tenants").cluster();

/// A namespaced custom resource whose CRD one scenario creates and deletes (`Gizmo`).
pub const GIZMO: Kind = Kind::new("crd.reality.suture.dev", "v1", "Gizmo", "gizmos");

/// Operators' custom resources whose deletions go by ownerReferences, acted out without the
/// operator: a cert-manager Certificate, a CloudNativePG Cluster, a prometheus-operator
/// Prometheus (their CRDs are created and removed by the scenarios).
pub const CERTIFICATE: Kind = Kind::new("cert-manager.io", "v1", "Certificate", "certificates");
pub const CNPG_CLUSTER: Kind = Kind::new("postgresql.cnpg.io", "v1", "Cluster", "clusters");
pub const PROMETHEUS: Kind = Kind::new("monitoring.coreos.com", "v1", "Prometheus", "prometheuses");

/// The built-in kinds the cluster model holds, so the kinds whose deletions are compared.
pub const MODEL_KINDS: &[Kind] = &[
    NAMESPACE,
    NODE,
    POD,
    SERVICE,
    ENDPOINT_SLICE,
    CLAIM,
    VOLUME,
    CONFIG_MAP,
    SECRET,
    REPLICATION_CONTROLLER,
    DEPLOYMENT,
    REPLICA_SET,
    STATEFUL_SET,
    DAEMON_SET,
    JOB,
    CRON_JOB,
    PDB,
    HPA,
    CRD,
];

/// The kind of plural `plural` among the model's and the scenarios' custom kinds.
pub fn by_plural(plural: &str) -> Option<Kind> {
    MODEL_KINDS
        .iter()
        .chain([WIDGET, TENANT, GIZMO, CERTIFICATE, CNPG_CLUSTER, PROMETHEUS].iter())
        .find(|k| k.plural == plural)
        .copied()
}

/// Which object a request names: fixed, or the first (by name) carrying a label selector, for
/// objects whose names controllers choose (a Deployment's pods).
#[derive(Debug, Clone)]
pub enum Name {
    Fixed(String),
    FirstWith(String),
}

/// A name fixed by the scenario.
pub fn named(name: &str) -> Name {
    Name::Fixed(name.to_owned())
}

/// The first object (by name) matching the label selector `selector`.
pub fn first_with(selector: &str) -> Name {
    Name::FirstWith(selector.to_owned())
}

/// What a scenario asks of the API.
#[derive(Debug, Clone)]
pub enum Request {
    /// DELETE, with `propagationPolicy` when given (else the kind's default applies).
    Delete {
        kind: Kind,
        name: Name,
        propagation: Option<&'static str>,
    },
    /// A JSON merge patch: an UPDATE as admission sees it.
    Patch { kind: Kind, name: Name, patch: Value },
    /// `spec.replicas` through the `scale` subresource.
    Scale { kind: Kind, name: Name, replicas: i64 },
    /// An eviction (`pods/eviction`).
    Evict { pod: Name },
}

/// A request with its object's name resolved in the scenario's namespace.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub request: Request,
    pub kind: Kind,
    pub namespace: String,
    pub name: String,
}

impl Request {
    fn target(&self) -> (Kind, &Name) {
        match self {
            Request::Delete { kind, name, .. }
            | Request::Patch { kind, name, .. }
            | Request::Scale { kind, name, .. } => (*kind, name),
            Request::Evict { pod } => (POD, pod),
        }
    }

    /// One line: `delete Deployment web (Orphan)`.
    pub fn describe(&self) -> String {
        let (kind, name) = self.target();
        let name = match name {
            Name::Fixed(name) => name.clone(),
            Name::FirstWith(selector) => format!("first of {selector}"),
        };
        match self {
            Request::Delete { propagation, .. } => match propagation {
                Some(policy) => format!("delete {} {name} ({policy})", kind.kind),
                None => format!("delete {} {name}", kind.kind),
            },
            Request::Patch { patch, .. } => format!("patch {} {name} {patch}", kind.kind),
            Request::Scale { replicas, .. } => format!("scale {} {name} to {replicas}", kind.kind),
            Request::Evict { .. } => format!("evict Pod {name}"),
        }
    }

    /// Resolves the object's name in `namespace`.
    pub async fn resolve(&self, client: &kube::Client, namespace: &str) -> anyhow::Result<Resolved> {
        let (kind, name) = self.target();
        let name = match name {
            Name::Fixed(name) => name.clone(),
            Name::FirstWith(selector) => {
                let mut names: Vec<String> = kind
                    .api(client, namespace)
                    .list(&ListParams::default().labels(selector))
                    .await?
                    .items
                    .into_iter()
                    .filter(|o| o.metadata.deletion_timestamp.is_none())
                    .filter_map(|o| o.metadata.name)
                    .collect();
                names.sort();
                names
                    .into_iter()
                    .next()
                    .with_context(|| format!("no {} with {selector} in {namespace}", kind.kind))?
            }
        };
        Ok(Resolved {
            request: self.clone(),
            kind,
            namespace: if kind.namespaced {
                namespace.to_owned()
            } else {
                String::new()
            },
            name,
        })
    }
}

fn group_version_kind(group: &str, version: &str, kind: &str) -> Value {
    json!({"group": group, "version": version, "kind": kind})
}

impl Resolved {
    fn api(&self, client: &kube::Client) -> Api<DynamicObject> {
        self.kind.api(client, &self.namespace)
    }

    /// The AdmissionReview kube-apiserver would send for the request, made from the cluster as
    /// it is now (an UPDATE's new object is the server's own dry run of the patch).
    pub async fn review(&self, client: &kube::Client) -> anyhow::Result<Value> {
        let api = self.api(client);
        let kind = self.kind;
        let mut request = json!({
            "uid": "00000000-0000-0000-0000-00000000e2e0",
            "kind": group_version_kind(kind.group, kind.version, kind.kind),
            "resource": {"group": kind.group, "version": kind.version, "resource": kind.plural},
            "name": self.name,
            "userInfo": {"username": "system:serviceaccount:reality:operator",
                         "groups": ["system:serviceaccounts", "system:authenticated"]},
            "dryRun": false,
        });
        if kind.namespaced {
            request["namespace"] = json!(self.namespace);
        }
        match &self.request {
            Request::Delete { propagation, .. } => {
                let old = api.get(&self.name).await?;
                request["operation"] = json!("DELETE");
                request["oldObject"] = with_type(serde_json::to_value(old)?, kind);
                let mut options = json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"});
                if let Some(policy) = propagation {
                    options["propagationPolicy"] = json!(policy);
                }
                request["options"] = options;
            }
            Request::Patch { patch, .. } => {
                let old = api.get(&self.name).await?;
                let new = api
                    .patch(
                        &self.name,
                        &PatchParams::default().dry_run(),
                        &Patch::Merge(patch),
                    )
                    .await?;
                request["operation"] = json!("UPDATE");
                request["oldObject"] = with_type(serde_json::to_value(old)?, kind);
                request["object"] = with_type(serde_json::to_value(new)?, kind);
                request["options"] = json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"});
            }
            Request::Scale { replicas, .. } => {
                let old = api.get_subresource("scale", &self.name).await?;
                let new = api
                    .patch_subresource(
                        "scale",
                        &self.name,
                        &PatchParams::default().dry_run(),
                        &Patch::Merge(json!({"spec": {"replicas": replicas}})),
                    )
                    .await?;
                request["operation"] = json!("UPDATE");
                request["subResource"] = json!("scale");
                request["kind"] = group_version_kind("autoscaling", "v1", "Scale");
                request["oldObject"] = scale(serde_json::to_value(old)?);
                request["object"] = scale(serde_json::to_value(new)?);
                request["options"] = json!({"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"});
            }
            Request::Evict { .. } => {
                request["operation"] = json!("CREATE");
                request["subResource"] = json!("eviction");
                request["kind"] = group_version_kind("policy", "v1", "Eviction");
                request["object"] = json!({
                    "apiVersion": "policy/v1", "kind": "Eviction",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                });
                request["options"] = json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"});
            }
        }
        Ok(json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}))
    }

    /// Performs the request for real.
    pub async fn perform(&self, client: &kube::Client) -> anyhow::Result<()> {
        let api = self.api(client);
        match &self.request {
            Request::Delete { propagation, .. } => {
                let params = DeleteParams {
                    propagation_policy: propagation.map(|p| match p {
                        "Orphan" => PropagationPolicy::Orphan,
                        "Foreground" => PropagationPolicy::Foreground,
                        _ => PropagationPolicy::Background,
                    }),
                    ..DeleteParams::default()
                };
                api.delete(&self.name, &params).await?;
            }
            Request::Patch { patch, .. } => {
                api.patch(&self.name, &PatchParams::default(), &Patch::Merge(patch))
                    .await?;
            }
            Request::Scale { replicas, .. } => {
                api.patch_subresource(
                    "scale",
                    &self.name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"replicas": replicas}})),
                )
                .await?;
            }
            Request::Evict { .. } => {
                Api::<Pod>::namespaced(client.clone(), &self.namespace)
                    .evict(&self.name, &EvictParams::default())
                    .await?;
            }
        }
        Ok(())
    }
}

/// An object as read through the dynamic client, with its type stated (an admission request's
/// objects always carry it).
fn with_type(mut object: Value, kind: Kind) -> Value {
    object["apiVersion"] = json!(kind.resource().api_version);
    object["kind"] = json!(kind.kind);
    object
}

fn scale(object: Value) -> Value {
    let mut object = object;
    object["apiVersion"] = json!("autoscaling/v1");
    object["kind"] = json!("Scale");
    object
}

#[cfg(test)]
mod tests {
    use super::*;
    use policies_cel::cluster::api::kinds;

    #[test]
    fn the_kinds_compared_are_the_kinds_the_model_holds() {
        let mut model: Vec<(String, String, String, String, bool)> = kinds::builtin()
            .into_iter()
            .map(|r| {
                let namespaced = !kinds::is_cluster_scoped(&r.kind);
                (r.group, r.version, r.kind, r.plural, namespaced)
            })
            .collect();
        let mut compared: Vec<(String, String, String, String, bool)> = MODEL_KINDS
            .iter()
            .map(|k| {
                let text = |s: &str| s.to_owned();
                (
                    text(k.group),
                    text(k.version),
                    text(k.kind),
                    text(k.plural),
                    k.namespaced,
                )
            })
            .collect();
        model.sort();
        compared.sort();
        assert_eq!(compared, model);
    }
}
