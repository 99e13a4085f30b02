//! The ledger as one request sees it: the `history` CEL variable's answers. The scopes are the
//! request's requester, its namespace, the workload its target belongs to (looked up on first
//! use), and the whole cluster; the window ends at the request's `now`.

use std::cell::OnceCell;
use std::fmt;

use chrono::{DateTime, Utc};

use crate::cluster::ClusterView;
use crate::eval::Request;
use crate::history::ledger::{Ledger, Totals, WindowError};
use crate::history::record::WorkloadRef;
use crate::history::workload::workload_of;

/// Which records a query totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Those of the request's user (`history.byRequester`).
    Requester,
    /// Those in the request's namespace (`history.inNamespace`).
    Namespace,
    /// Those that disrupted the workload of the request's target (`history.onWorkload`);
    /// nothing when the target belongs to none.
    Workload,
    /// All of them (`history.inCluster`).
    Cluster,
    /// The deletions of the request's own target (`history.onObject`), whoever asked: the
    /// records whose action is `delete <the target>`.
    Object,
}

/// The history one request is judged with.
pub struct RequestHistory<'a> {
    ledger: Option<&'a Ledger>,
    /// The time the window ends at: given, or the clock's when first needed.
    now: OnceCell<DateTime<Utc>>,
    request: &'a Request,
    cluster: &'a dyn ClusterView,
    workload: OnceCell<Option<WorkloadRef>>,
}

impl fmt::Debug for RequestHistory<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestHistory")
            .field("records", &self.ledger.map_or(0, Ledger::len))
            .field("now", &self.now.get())
            .finish()
    }
}

impl<'a> RequestHistory<'a> {
    /// `ledger` (none: nothing recorded) seen by `request` at `now` (none: the clock's time,
    /// read when a policy first asks).
    pub fn new(
        ledger: Option<&'a Ledger>,
        now: Option<DateTime<Utc>>,
        request: &'a Request,
        cluster: &'a dyn ClusterView,
    ) -> Self {
        Self {
            ledger,
            now: now.map(OnceCell::from).unwrap_or_default(),
            request,
            cluster,
            workload: OnceCell::new(),
        }
    }

    /// The workload of the request's target, when it belongs to one.
    pub fn workload(&self) -> Option<&WorkloadRef> {
        self.workload
            .get_or_init(|| workload_of(self.request, self.cluster))
            .as_ref()
    }

    /// The time the windows end at.
    pub fn now(&self) -> DateTime<Utc> {
        *self.now.get_or_init(Utc::now)
    }

    /// The totals of `scope` over the `window` that ends now.
    pub fn totals(&self, scope: Scope, window: chrono::Duration) -> Result<Totals, WindowError> {
        let now = self.now();
        let empty = Ledger::default();
        let ledger = self.ledger.unwrap_or(&empty);
        let admission = &self.request.admission;
        match scope {
            Scope::Requester => {
                let user = admission.user_info.username.as_deref().unwrap_or_default();
                ledger.totals(now, window, |r| r.user == user)
            }
            Scope::Namespace => {
                let namespace = admission.namespace.as_deref().unwrap_or_default();
                ledger.totals(now, window, |r| r.namespace == namespace)
            }
            Scope::Workload => {
                // Finding the workload walks the target's owners in the model: not worth it for
                // a window that holds no records (this also refuses a window the ledger cannot
                // answer).
                let all = ledger.totals(now, window, |_| true)?;
                if all.requests == 0 {
                    return Ok(all);
                }
                match self.workload() {
                    Some(workload) => ledger.totals(now, window, |r| r.workload.as_ref() == Some(workload)),
                    None => Ok(Totals::default()),
                }
            }
            Scope::Cluster => ledger.totals(now, window, |_| true),
            Scope::Object => {
                let all = ledger.totals(now, window, |_| true)?;
                if all.requests == 0 {
                    return Ok(all);
                }
                let target = crate::impact::subject::target_key(self.request, self.cluster);
                let action = format!("delete {target}");
                ledger.totals(now, window, |r| r.action == action)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::cluster::ClusterModel;
    use crate::history::{Figures, Record};
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap()
    }

    /// A pod of StatefulSet db/pg.
    fn cluster() -> ClusterModel {
        let mut model = ClusterModel::new();
        let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "pg", "namespace": "db", "uid": "sts-uid"}, "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "pg"}}}});
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "pg-0", "namespace": "db", "uid": "pod-uid", "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "pg", "uid": "sts-uid", "controller": true}]}});
        model.insert_json(&sts).unwrap();
        model.insert_json(&pod).unwrap();
        model
    }

    fn delete_pod() -> Request {
        let admission = serde_json::from_value(json!({
            "uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "name": "pg-0", "namespace": "db", "operation": "DELETE",
            "userInfo": {"username": "system:serviceaccount:db:op"}, "dryRun": false
        }))
        .unwrap();
        Request::new(admission)
    }

    #[test]
    fn the_workload_is_looked_up_only_when_the_window_holds_records() {
        let (cluster, request) = (cluster(), delete_pod());
        let mut ledger = Ledger::default();
        // Outside a 5m window.
        ledger.record(Record::new(
            now() - chrono::Duration::minutes(8),
            "x",
            "db",
            Figures::default(),
        ));
        let history = RequestHistory::new(Some(&ledger), Some(now()), &request, &cluster);
        let quiet = history
            .totals(Scope::Workload, chrono::Duration::minutes(5))
            .unwrap();
        assert_eq!(quiet, Totals::default());
        assert!(
            history.workload.get().is_none(),
            "an empty window walks no owners"
        );
        // A bad window is still refused.
        assert!(history.totals(Scope::Workload, chrono::Duration::zero()).is_err());

        // The 10m window holds the record, which names no workload: now the pod's is looked up.
        let other = history
            .totals(Scope::Workload, chrono::Duration::minutes(10))
            .unwrap();
        assert_eq!(other.requests, 0);
        let looked_up = history.workload.get().and_then(Option::as_ref);
        assert_eq!(looked_up.map(|w| w.name.as_str()), Some("pg"));
    }

    #[test]
    fn the_object_scope_counts_the_deletions_of_the_target_alone() {
        let (cluster, request) = (cluster(), delete_pod());
        let mut ledger = Ledger::default();
        let deletion = |minutes: i64, action: &str| {
            let mut record = Record::new(
                now() - chrono::Duration::minutes(minutes),
                "anyone",
                "db",
                Figures {
                    deleted: 1,
                    ..Figures::default()
                },
            );
            record.action = action.to_owned();
            record
        };
        ledger.record(deletion(9, "delete Pod db/pg-0"));
        ledger.record(deletion(4, "delete Pod db/pg-0"));
        ledger.record(deletion(3, "delete Pod db/pg-1"));
        ledger.record(deletion(2, "update StatefulSet db/pg"));
        ledger.record(deletion(20, "delete Pod db/pg-0"));
        let history = RequestHistory::new(Some(&ledger), Some(now()), &request, &cluster);
        let totals = history
            .totals(Scope::Object, chrono::Duration::minutes(10))
            .unwrap();
        assert_eq!(totals.requests, 2, "the two deletions of pg-0 in the window");
    }
}
