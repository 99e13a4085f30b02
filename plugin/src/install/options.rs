//! What an install is rendered from: plain data, filled by the command line (or by tests).

use crate::install::names;

/// How kube-apiserver treats a gateway it cannot reach (or that times out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailurePolicy {
    /// Refuse the request: the chosen identities cannot act while the gateway is down.
    #[default]
    Fail,
    /// Admit the request unjudged: availability over safety.
    Ignore,
}

impl FailurePolicy {
    /// As the webhook configuration spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            FailurePolicy::Fail => "Fail",
            FailurePolicy::Ignore => "Ignore",
        }
    }
}

/// The issuer of a cert-manager Certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuerRef {
    /// `Issuer` (in the gateway's namespace) or `ClusterIssuer`.
    pub kind: String,
    /// Its name.
    pub name: String,
}

/// A serving certificate and the CA that signed it, as PEM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsMaterial {
    /// The serving certificate chain (`tls.crt`).
    pub cert_pem: String,
    /// Its private key (`tls.key`).
    pub key_pem: String,
    /// The CA kube-apiserver trusts (`caBundle`).
    pub ca_pem: String,
}

/// Where the serving certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tls {
    /// cert-manager issues it; cainjector writes the caBundle. Without an issuer, a self-signed
    /// `Issuer` is rendered beside the Certificate.
    CertManager { issuer: Option<IssuerRef> },
    /// The Secret and caBundle are rendered from this material (`--self-signed`, or files).
    Material(TlsMaterial),
    /// Only the caBundle is known; the Secret is created by other means.
    CaBundle { ca_pem: String },
}

impl Default for Tls {
    fn default() -> Self {
        Tls::CertManager { issuer: None }
    }
}

/// Everything an install is rendered from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallOptions {
    /// The gateway's namespace.
    pub namespace: String,
    /// The gateway's container image.
    pub image: String,
    /// Deployment replicas.
    pub replicas: i32,
    /// Usernames whose requests are sent to the gateway (`system:serviceaccount:ns:name`, ...).
    pub identities: Vec<String>,
    /// Also send every service account's requests, except kube-system's and the gateway's own.
    pub all_service_accounts: bool,
    /// Users the gateway lets change its own objects (the installer's identity).
    pub allowed_users: Vec<String>,
    /// The webhook's failure policy.
    pub failure_policy: FailurePolicy,
    /// The webhook's timeout; the gateway's evaluation budget is set below it.
    pub timeout_seconds: i32,
    /// Where the serving certificate comes from.
    pub tls: Tls,
}

impl Default for InstallOptions {
    fn default() -> Self {
        Self {
            namespace: names::DEFAULT_NAMESPACE.to_owned(),
            image: names::default_image(),
            replicas: 2,
            identities: Vec::new(),
            all_service_accounts: false,
            allowed_users: Vec::new(),
            failure_policy: FailurePolicy::default(),
            timeout_seconds: 5,
            tls: Tls::default(),
        }
    }
}

impl InstallOptions {
    /// True when every service account is sent: asked for, or implied by naming nobody.
    pub fn sends_all_service_accounts(&self) -> bool {
        self.all_service_accounts || self.identities.is_empty()
    }

    /// The gateway's per-request budget: a second below the webhook timeout (half of it for a
    /// 1-second timeout), so the gateway answers by its failure policy before kube-apiserver gives up.
    pub fn eval_timeout(&self) -> String {
        if self.timeout_seconds >= 2 {
            format!("{}s", self.timeout_seconds - 1)
        } else {
            format!("{}ms", self.timeout_seconds.max(1) * 500)
        }
    }
}
