//! Operators' custom resources whose consequences go by ownerReferences, acted out with the real
//! garbage collector and no operator running: the objects are created as each operator writes
//! them (the owner, and what it owns with `controller: true`), then the custom resource is
//! deleted. A cert-manager Certificate owns its Secret (`--enable-certificate-owner-ref`); a
//! CloudNativePG Cluster owns its instances' pods and claims; a prometheus-operator Prometheus
//! owns its StatefulSet, whose claims stay. The estimate's figures (an operator's own controller
//! of pods counts as a workload) are compared with what happens.

use crate::reality::request::{CERTIFICATE, CNPG_CLUSTER, CRD, Kind, PROMETHEUS, Request, named};
use crate::reality::scenario::Scenario;
use crate::reality::scenarios::deletes::{GC_DISCOVERY, owned_by};
use crate::reality::scenarios::yaml::{claim, deployment, mounting, pod, service, stateful_set};

/// The CRD of `kind`, schemaless.
fn crd(kind: Kind) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
         metadata: {{name: {plural}.{group}}}\nspec:\n  group: {group}\n  scope: Namespaced\n  \
         names: {{plural: {plural}, singular: {singular}, kind: {kind}}}\n  versions:\n  - name: {version}\n    \
         served: true\n    storage: true\n    schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}\n",
        plural = kind.plural,
        group = kind.group,
        singular = kind.kind.to_ascii_lowercase(),
        kind = kind.kind,
        version = kind.version,
    )
}

fn crd_name(kind: Kind) -> String {
    format!("{}.{}", kind.plural, kind.group)
}

fn delete(kind: Kind, name: &str) -> Request {
    Request::Delete {
        kind,
        name: named(name),
        propagation: None,
    }
}

/// `yaml` with `ownerReferences` to `owner` in the metadata of the object `name`.
fn owned(yaml: String, ns: &str, name: &str, owner: &str) -> String {
    yaml.replace(
        &format!("metadata: {{name: {name}, namespace: {ns}"),
        &format!("metadata: {{name: {name}, namespace: {ns}, {owner}"),
    )
}

/// The operator scenarios.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "operators/cert-manager-certificate",
            "DELETE a cert-manager Certificate: the Secret it owns goes; pods mounting it keep running",
            delete(CERTIFICATE, "web-tls"),
        )
        .stage(|_| crd(CERTIFICATE))
        .stage(|ns| {
            format!(
                "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {{name: web-tls, namespace: {ns}}}\n\
                 spec: {{secretName: web-tls, dnsNames: [web.example.com], issuerRef: {{name: ca, kind: ClusterIssuer}}}}\n"
            )
        })
        .stage(|ns| {
            let owner = owned_by("cert-manager.io/v1", "Certificate", "web-tls", "certificates");
            format!(
                "---\napiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\n\
                 metadata: {{name: web-tls, namespace: {ns}, {owner}}}\n\
                 data: {{tls.crt: \"\", tls.key: \"\"}}\n{}",
                deployment(
                    ns,
                    "web",
                    2,
                    "",
                    "volumes: [{name: tls, secret: {secretName: web-tls}}]"
                )
            )
        })
        .owns(CRD, &crd_name(CERTIFICATE))
        .watch(CERTIFICATE)
        .warm_up(GC_DISCOVERY),
        Scenario::new(
            "operators/cloudnative-pg-cluster",
            "DELETE a CloudNativePG Cluster: its instances' pods and claims (controller-owned) and their data",
            delete(CNPG_CLUSTER, "orders"),
        )
        .stage(|_| crd(CNPG_CLUSTER))
        .stage(|ns| {
            format!(
                "apiVersion: postgresql.cnpg.io/v1\nkind: Cluster\nmetadata: {{name: orders, namespace: {ns}}}\n\
                 spec: {{instances: 2, storage: {{size: 1Gi}}}}\n"
            )
        })
        .stage(|ns| {
            let owner = owned_by("postgresql.cnpg.io/v1", "Cluster", "orders", "clusters");
            let instances: String = ["orders-1", "orders-2"]
                .iter()
                .map(|instance| {
                    format!(
                        "{}{}",
                        owned(claim(ns, instance), ns, instance, &owner),
                        owned(pod(ns, instance, "orders", &mounting(instance)), ns, instance, &owner)
                    )
                })
                .collect();
            format!("{instances}{}", service(ns, "orders-rw", "orders"))
        })
        .owns(CRD, &crd_name(CNPG_CLUSTER))
        .watch(CNPG_CLUSTER)
        .warm_up(GC_DISCOVERY),
        Scenario::new(
            "operators/prometheus-operator-prometheus",
            "DELETE a Prometheus: the StatefulSet it owns and its pods go, its claims stay",
            delete(PROMETHEUS, "k8s"),
        )
        .stage(|_| crd(PROMETHEUS))
        .stage(|ns| {
            format!(
                "apiVersion: monitoring.coreos.com/v1\nkind: Prometheus\nmetadata: {{name: k8s, namespace: {ns}}}\n\
                 spec: {{replicas: 2, retention: 15d}}\n"
            )
        })
        .stage(|ns| {
            let owner = owned_by("monitoring.coreos.com/v1", "Prometheus", "k8s", "prometheuses");
            owned(stateful_set(ns, "prometheus-k8s", 2, true, ""), ns, "prometheus-k8s", &owner)
        })
        .owns(CRD, &crd_name(PROMETHEUS))
        .watch(PROMETHEUS)
        .warm_up(GC_DISCOVERY),
    ]
}
