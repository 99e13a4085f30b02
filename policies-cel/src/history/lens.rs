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
            Scope::Workload => match self.workload() {
                Some(workload) => ledger.totals(now, window, |r| r.workload.as_ref() == Some(workload)),
                // Still refuse a window the ledger cannot answer.
                None => ledger.totals(now, window, |_| false),
            },
            Scope::Cluster => ledger.totals(now, window, |_| true),
        }
    }
}
