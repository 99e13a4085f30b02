//! `kubectl suture install`: the gateway's manifests, built as typed Kubernetes objects
//! (k8s-openapi) and serialized, so they are valid by construction. Each document carries a
//! comment header saying what it is and why it is so. `docs/gateway.md` explains the choices.

mod conditions;
mod document;
mod headers;
pub mod names;
mod options;
mod parse;
mod policy_reports;
mod rbac;
pub mod tls;
mod webhook;
mod workload;

pub use document::{Document, InstallError, stream};
pub use options::{
    DEFAULT_KEEP_WARM, FailurePolicy, InstallOptions, IssuerRef, Tls, TlsMaterial, WebhookUrl,
    WebhookUrlError,
};
pub use parse::{Manifest, ParseError, parse_stream};
pub use rbac::WATCHED;

/// The Kubernetes API types the manifests are built from (for readers of [`Manifest`]).
pub use k8s_openapi::api as k8s;

/// Every document of the install, in the order `kubectl apply` should create them.
pub fn render(options: &InstallOptions) -> Result<Vec<Document>, InstallError> {
    let mut documents = vec![Document::of(
        "00-namespace.yaml",
        "Namespace",
        &headers::namespace(options),
        &rbac::namespace(options),
    )?];
    for (file, _, crd) in policies_cel::crds::all() {
        let header = headers::crd(&crd.spec.names.kind);
        documents.push(Document::of(
            &format!("01-crd-{file}"),
            "CustomResourceDefinition",
            &header,
            &crd,
        )?);
    }
    if options.policy_report_crds {
        let crds = policy_reports::crds().map_err(InstallError::from)?;
        for crd in crds {
            let kind = crd.spec.names.kind.clone();
            documents.push(Document::of(
                &format!("01-crd-{}.yaml", crd.spec.names.plural),
                "CustomResourceDefinition",
                &headers::policy_report_crd(&kind),
                &crd,
            )?);
        }
    }
    documents.extend([
        Document::of(
            "02-serviceaccount.yaml",
            "ServiceAccount",
            headers::SERVICE_ACCOUNT,
            &rbac::service_account(options),
        )?,
        Document::of(
            "03-clusterrole.yaml",
            "ClusterRole",
            headers::CLUSTER_ROLE,
            &rbac::cluster_role(),
        )?,
        Document::of(
            "04-clusterrolebinding.yaml",
            "ClusterRoleBinding",
            headers::CLUSTER_ROLE_BINDING,
            &rbac::cluster_role_binding(options),
        )?,
        Document::of(
            "04-ledger-role.yaml",
            "Role",
            headers::LEDGER_ROLE,
            &rbac::ledger_role(options),
        )?,
        Document::of(
            "04-ledger-rolebinding.yaml",
            "RoleBinding",
            headers::LEDGER_ROLE_BINDING,
            &rbac::ledger_role_binding(options),
        )?,
        Document::of(
            "04-reports-clusterrole.yaml",
            "ClusterRole",
            headers::REPORTS_ROLE,
            &rbac::reports_cluster_role(),
        )?,
        Document::of(
            "04-reports-clusterrolebinding.yaml",
            "ClusterRoleBinding",
            headers::REPORTS_ROLE_BINDING,
            &rbac::reports_cluster_role_binding(options),
        )?,
    ]);
    match &options.tls {
        Tls::Material(material) => documents.push(Document::of(
            "05-tls-secret.yaml",
            "Secret",
            headers::SECRET,
            &tls::secret(options, material),
        )?),
        Tls::CaBundle { .. } => {}
        Tls::CertManager { issuer } => {
            if issuer.is_none() {
                documents.push(Document::of(
                    "05-issuer.yaml",
                    "Issuer",
                    headers::ISSUER,
                    &tls::self_signed_issuer(options),
                )?);
            }
            documents.push(Document::of(
                "06-certificate.yaml",
                "Certificate",
                headers::CERTIFICATE,
                &tls::certificate(options, issuer.as_ref()),
            )?);
        }
    }
    if options.webhook_url.is_none() {
        documents.extend(in_cluster_workload(options)?);
    }
    documents.extend([
        Document::of(
            "10-validatingwebhookconfiguration.yaml",
            "ValidatingWebhookConfiguration",
            &headers::webhook(options),
            &webhook::configuration(options),
        )?,
        Document::of(
            "11-protect-policy.yaml",
            "ValidatingAdmissionPolicy",
            headers::PROTECT_POLICY,
            &webhook::protect_policy(options),
        )?,
        Document::of(
            "12-protect-policy-binding.yaml",
            "ValidatingAdmissionPolicyBinding",
            headers::PROTECT_BINDING,
            &webhook::protect_binding(),
        )?,
    ]);
    Ok(documents)
}

/// The gateway as an in-cluster workload: its Service, Deployment and disruption budget (not
/// rendered with a webhook URL: the gateway then runs outside the cluster).
fn in_cluster_workload(options: &InstallOptions) -> Result<Vec<Document>, InstallError> {
    Ok(vec![
        Document::of(
            "07-service.yaml",
            "Service",
            headers::SERVICE,
            &workload::service(options),
        )?,
        Document::of(
            "08-deployment.yaml",
            "Deployment",
            &headers::deployment(options),
            &workload::deployment(options),
        )?,
        Document::of(
            "09-poddisruptionbudget.yaml",
            "PodDisruptionBudget",
            headers::DISRUPTION_BUDGET,
            &workload::disruption_budget(options),
        )?,
    ])
}

/// The install as one stream, with a header naming the command that rendered it.
pub fn render_stream(options: &InstallOptions, command: &str) -> Result<String, InstallError> {
    Ok(format!(
        "# Suture admission gateway, rendered by `{command}`.\n# Apply with: kubectl apply --server-side -f <this file>\n{}",
        stream(&render(options)?)
    ))
}
