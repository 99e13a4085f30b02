//! The names of the installed objects. The gateway's self-protection
//! (`suture_gateway::guard`) derives the same names from `--protect-deployment`.

/// The default namespace.
pub const DEFAULT_NAMESPACE: &str = "suture-system";
/// The Deployment, Service, ServiceAccount, PodDisruptionBudget, ClusterRole(Binding) and
/// ValidatingWebhookConfiguration.
pub const GATEWAY: &str = "suture-gateway";
/// The TLS Secret (`<deployment>-tls`).
pub const TLS_SECRET: &str = "suture-gateway-tls";
/// The cert-manager Certificate.
pub const CERTIFICATE: &str = "suture-gateway";
/// The self-signed cert-manager Issuer.
pub const SELF_SIGNED_ISSUER: &str = "suture-gateway-selfsigned";
/// The ValidatingAdmissionPolicy (and binding) that guards the webhook configuration.
pub const PROTECT_POLICY: &str = "suture-gateway-protect";
/// The webhook that judges the chosen identities' requests.
pub const VALIDATE_WEBHOOK: &str = "validate.suture.dev";
/// The webhook that sends changes to the gateway's own objects to its self-protection.
pub const PROTECT_WEBHOOK: &str = "protect.suture.dev";
/// The prefix of the shared ledger's shards, one ConfigMap per replica in the gateway's namespace.
pub const LEDGER_SHARD_PREFIX: &str = "suture-ledger-";
/// Suture's CRDs (deleting one deletes every object of its kind).
pub const SUTURE_CRDS: [&str; 3] = [
    "safetypolicies.suture.dev",
    "safetypackparams.suture.dev",
    "operatorprofiles.suture.dev",
];
/// Where the TLS Secret is mounted in the container.
pub const TLS_DIR: &str = "/etc/suture/tls";
/// The HTTPS port the container listens on.
pub const HTTPS_PORT: i32 = 8443;
/// The plain-HTTP port of /healthz, /readyz, /metrics.
pub const METRICS_PORT: i32 = 8080;
/// The gateway's drain period on SIGTERM (`--shutdown-grace`), in seconds.
pub const SHUTDOWN_GRACE_SECONDS: i64 = 25;

/// The default image: this version of the gateway.
pub fn default_image() -> String {
    format!("ghcr.io/suture-dev/suture-gateway:v{}", env!("CARGO_PKG_VERSION"))
}

/// The labels every object carries; the pods' selector is the first one.
pub fn labels() -> std::collections::BTreeMap<String, String> {
    [
        ("app.kubernetes.io/name", GATEWAY),
        ("app.kubernetes.io/part-of", "suture"),
        ("app.kubernetes.io/managed-by", "kubectl-suture"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// The pods' selector.
pub fn selector() -> std::collections::BTreeMap<String, String> {
    [("app.kubernetes.io/name".to_owned(), GATEWAY.to_owned())].into()
}

/// The DNS names the serving certificate must carry.
pub fn service_dns_names(namespace: &str) -> Vec<String> {
    vec![
        format!("{GATEWAY}.{namespace}.svc"),
        format!("{GATEWAY}.{namespace}.svc.cluster.local"),
    ]
}
