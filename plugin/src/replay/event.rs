//! The fields of a Kubernetes audit event (`audit.k8s.io/v1` `Event`) that replay reads. Unknown
//! fields are ignored: audit policies and API server versions add them freely.

use k8s_openapi::api::authentication::v1::UserInfo;
use serde::Deserialize;
use serde_json::Value as Json;

/// One audit event, as one line of a JSON-lines audit log.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub level: String,
    #[serde(default, rename = "auditID")]
    pub audit_id: String,
    #[serde(default)]
    pub stage: String,
    #[serde(default, rename = "requestURI")]
    pub request_uri: String,
    #[serde(default)]
    pub verb: String,
    #[serde(default)]
    pub user: UserInfo,
    #[serde(default)]
    pub impersonated_user: Option<UserInfo>,
    #[serde(default)]
    pub object_ref: Option<ObjectRef>,
    #[serde(default)]
    pub response_status: Option<Status>,
    #[serde(default)]
    pub request_object: Option<Json>,
    #[serde(default)]
    pub response_object: Option<Json>,
    #[serde(default)]
    pub request_received_timestamp: Option<String>,
    /// When the stage was reached (at ResponseComplete: when the request was answered).
    #[serde(default)]
    pub stage_timestamp: Option<String>,
}

/// `objectRef`: what the request was about.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    #[serde(default)]
    pub resource: String,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub api_group: Option<String>,
    #[serde(default)]
    pub api_version: Option<String>,
    #[serde(default)]
    pub subresource: Option<String>,
}

/// `responseStatus`: only the code matters here.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Status {
    #[serde(default)]
    pub code: Option<u16>,
}

impl Event {
    /// When the request was admitted: the stage's time, else the time it was received.
    pub fn time(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        [&self.stage_timestamp, &self.request_received_timestamp]
            .into_iter()
            .flatten()
            .find_map(|text| chrono::DateTime::parse_from_rfc3339(text).ok())
            .map(|time| time.with_timezone(&chrono::Utc))
    }

    /// The identity the request acted as: the impersonated user when there is one.
    pub fn effective_user(&self) -> &UserInfo {
        self.impersonated_user.as_ref().unwrap_or(&self.user)
    }

    /// True when the request asked for a dry run (`?dryRun=All`).
    pub fn dry_run(&self) -> bool {
        self.request_uri
            .split_once('?')
            .is_some_and(|(_, query)| query.split('&').any(|pair| pair == "dryRun=All"))
    }
}
