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

/// The gateway's `--keep-warm` period an install renders unless told otherwise: inside
/// kube-apiserver it brings a judged request within 0.1 ms of the no-op webhook (docs/benchmarks.md, "Latency
/// inside kube-apiserver") for about 2% of a core per replica while operators are at work.
pub const DEFAULT_KEEP_WARM: &str = "2ms";

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
    /// Also send every service account's requests, except the control plane's controllers' and
    /// the gateway's own.
    pub all_service_accounts: bool,
    /// Users the gateway lets change its own objects (the installer's identity).
    pub allowed_users: Vec<String>,
    /// The webhook's failure policy.
    pub failure_policy: FailurePolicy,
    /// The webhook's timeout; the gateway's evaluation budget is set below it.
    pub timeout_seconds: i32,
    /// Where the serving certificate comes from.
    pub tls: Tls,
    /// The gateway runs outside the cluster (on the control-plane hosts, say) at this HTTPS URL:
    /// the webhooks call it instead of the in-cluster Service, and no Deployment, Service or PDB
    /// is rendered.
    pub webhook_url: Option<WebhookUrl>,
    /// The gateway keeps its judged path warm: after this idle time (e.g. `2ms`) it rehearses the
    /// last judged requests (`suture-gateway --keep-warm`). None: off.
    pub keep_warm: Option<String>,
    /// How long after the last judged request it goes on rehearsing (`--keep-warm-for`). None:
    /// the gateway's default.
    pub keep_warm_for: Option<String>,
    /// Render the wg-policy PolicyReport and ClusterPolicyReport CRDs (off: the cluster has them
    /// from Kyverno, Kubewarden or Policy Reporter, or the gateway's reports are not wanted).
    pub policy_report_crds: bool,
    /// The action of every built-in pack policy in the gateway (`--pack-action`: Audit, Warn or
    /// Deny). None: the pack's own (Deny).
    pub pack_action: Option<String>,
}

/// An HTTPS URL kube-apiserver can call a webhook at: `https://host[:port][/path]`, with no user
/// information, query or fragment (kube-apiserver refuses those).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookUrl {
    base: String,
    host: String,
}

/// Why a `--webhook-url` is not one kube-apiserver accepts.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WebhookUrlError {
    /// Not an `https://` URL.
    #[error("`{0}` is not an https:// URL (kube-apiserver calls webhooks over TLS only)")]
    NotHttps(String),
    /// No host after the scheme.
    #[error("`{0}` names no host")]
    NoHost(String),
    /// User information, a query or a fragment.
    #[error("`{0}` carries {1}, which kube-apiserver refuses in a webhook URL")]
    Forbidden(String, &'static str),
}

impl WebhookUrl {
    /// Reads `text`, the gateway's base URL; `/validate` is appended to its path.
    pub fn parse(text: &str) -> Result<Self, WebhookUrlError> {
        let rest = text
            .strip_prefix("https://")
            .ok_or_else(|| WebhookUrlError::NotHttps(text.to_owned()))?;
        if rest.contains('?') {
            return Err(WebhookUrlError::Forbidden(text.to_owned(), "a query"));
        }
        if rest.contains('#') {
            return Err(WebhookUrlError::Forbidden(text.to_owned(), "a fragment"));
        }
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if authority.contains('@') {
            return Err(WebhookUrlError::Forbidden(text.to_owned(), "user information"));
        }
        let host = match authority.strip_prefix('[') {
            // An IPv6 literal: `[::1]:8443`.
            Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
            None => authority.split(':').next().unwrap_or_default(),
        };
        if host.is_empty() {
            return Err(WebhookUrlError::NoHost(text.to_owned()));
        }
        Ok(Self {
            base: format!("https://{authority}{}", path.trim_end_matches('/')),
            host: host.to_owned(),
        })
    }

    /// The URL the judging and self-protection webhooks call.
    pub fn validate(&self) -> String {
        format!("{}/validate", self.base)
    }

    /// The host kube-apiserver verifies the serving certificate against (a DNS name or an IP).
    pub fn host(&self) -> &str {
        &self.host
    }
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
            webhook_url: None,
            keep_warm: Some(DEFAULT_KEEP_WARM.to_owned()),
            keep_warm_for: None,
            policy_report_crds: false,
            pack_action: None,
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn a_webhook_url_gets_the_validate_path_and_names_its_host() {
        let url = WebhookUrl::parse("https://127.0.0.1:8443").unwrap();
        assert_eq!(url.validate(), "https://127.0.0.1:8443/validate");
        assert_eq!(url.host(), "127.0.0.1");
        let url = WebhookUrl::parse("https://gw.example.com/suture/").unwrap();
        assert_eq!(url.validate(), "https://gw.example.com/suture/validate");
        assert_eq!(url.host(), "gw.example.com");
        let url = WebhookUrl::parse("https://[::1]:9443").unwrap();
        assert_eq!(url.host(), "::1");
    }

    #[test]
    fn urls_kube_apiserver_refuses_are_refused() {
        assert!(matches!(
            WebhookUrl::parse("http://127.0.0.1:8443"),
            Err(WebhookUrlError::NotHttps(_))
        ));
        assert!(matches!(
            WebhookUrl::parse("https://:8443"),
            Err(WebhookUrlError::NoHost(_))
        ));
        assert!(matches!(
            WebhookUrl::parse("https://gw/x?a=b"),
            Err(WebhookUrlError::Forbidden(_, "a query"))
        ));
        assert!(matches!(
            WebhookUrl::parse("https://gw/x#top"),
            Err(WebhookUrlError::Forbidden(_, "a fragment"))
        ));
        assert!(matches!(
            WebhookUrl::parse("https://me:pw@gw"),
            Err(WebhookUrlError::Forbidden(_, "user information"))
        ));
    }
}
