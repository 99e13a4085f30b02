//! Self-protection: the gateway refuses requests that would disable or alter its own webhook
//! configuration or deployment, whoever sends them through the webhook (a compromised or buggy
//! operator must not be able to switch Suture off before doing harm).
//!
//! Skeleton: the signature is fixed here; the rules are built with the install manifests.

use policies_cel::Request;

/// What the gateway protects: its own objects, and who may still change them.
#[derive(Debug, Clone, Default)]
pub struct SelfProtection {
    /// The gateway's namespace.
    pub namespace: String,
    /// The gateway Deployment's name.
    pub deployment: String,
    /// The ValidatingWebhookConfiguration's name.
    pub webhook_configuration: String,
    /// Users allowed to change them anyway (e.g. the installer's identity).
    pub allowed_users: Vec<String>,
}

impl SelfProtection {
    /// The denial message when `request` would disable or alter the gateway; `None` otherwise.
    pub fn check(&self, request: &Request) -> Option<String> {
        let _ = request;
        None
    }
}
