//! One entry of the ledger: an admitted, non-dry-run request that disrupted something — when,
//! who, where, which workload, and its summary figures. Never an object's body: names and
//! counts only.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::impact::Summary;

/// The workload a request disrupted: the controlling StatefulSet, Deployment, DaemonSet, ... of
/// its target, or the target itself when it is one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkloadRef {
    pub kind: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
}

impl WorkloadRef {
    /// `Kind namespace/name`.
    pub fn display(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// What one request disrupted, as counted by the impact summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Figures {
    /// API objects deleted.
    #[serde(default)]
    pub deleted: u64,
    /// Pods stopped.
    #[serde(default)]
    pub pods_disrupted: u64,
    /// Volumes whose data was destroyed.
    #[serde(default)]
    pub data_loss: u64,
    /// Workloads left without a ready pod.
    #[serde(default)]
    pub workloads_down: u64,
}

impl Figures {
    /// The figures of an impact summary.
    pub fn of(summary: &Summary) -> Self {
        Self {
            deleted: summary.deleted as u64,
            pods_disrupted: summary.pods_disrupted as u64,
            data_loss: summary.data_loss as u64,
            workloads_down: summary.workloads_down as u64,
        }
    }

    /// True when the request disrupted nothing worth recording.
    pub fn is_empty(&self) -> bool {
        *self == Figures::default()
    }

    /// The sum of `self` and `other` (saturating: a ledger is bounded, but a fixture is not).
    pub fn plus(self, other: &Figures) -> Figures {
        Figures {
            deleted: self.deleted.saturating_add(other.deleted),
            pods_disrupted: self.pods_disrupted.saturating_add(other.pods_disrupted),
            data_loss: self.data_loss.saturating_add(other.data_loss),
            workloads_down: self.workloads_down.saturating_add(other.workloads_down),
        }
    }
}

/// One admitted request that disrupted something.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Record {
    /// When it was admitted.
    pub time: DateTime<Utc>,
    /// `request.userInfo.username`.
    pub user: String,
    /// The request's namespace (empty for cluster-scoped requests).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The workload it disrupted, when its target belongs to one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadRef>,
    /// What the request was, as the estimate names it (`delete Pod db/pg-0`), for messages.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub action: String,
    /// What it disrupted (kept flat, so a fixture's record reads as one line of figures).
    #[serde(default)]
    pub deleted: u64,
    #[serde(default)]
    pub pods_disrupted: u64,
    #[serde(default)]
    pub data_loss: u64,
    #[serde(default)]
    pub workloads_down: u64,
}

impl Record {
    /// A record of `figures`, at `time`, by `user`, in `namespace`.
    pub fn new(time: DateTime<Utc>, user: &str, namespace: &str, figures: Figures) -> Self {
        Self {
            time,
            user: user.to_owned(),
            namespace: namespace.to_owned(),
            workload: None,
            action: String::new(),
            deleted: figures.deleted,
            pods_disrupted: figures.pods_disrupted,
            data_loss: figures.data_loss,
            workloads_down: figures.workloads_down,
        }
    }

    /// The record's figures.
    pub fn figures(&self) -> Figures {
        Figures {
            deleted: self.deleted,
            pods_disrupted: self.pods_disrupted,
            data_loss: self.data_loss,
            workloads_down: self.workloads_down,
        }
    }
}
