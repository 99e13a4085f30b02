//! Policy reports: the failures of judged requests gathered into `wgpolicyk8s.io/v1alpha2`
//! `PolicyReport`s (one per namespace) and a `ClusterPolicyReport` (cluster-scoped objects), as
//! Kyverno's and Kubewarden's users read them (Policy Reporter, `kubectl get policyreports -A`).
//!
//! One result per policy × rule (the validation) × object × requester, refreshed by every
//! repeat (its count and last time); results age out after a window and each report holds a
//! bounded number of them. The gateway feeds a [`ReportBook`] from its decisions and writes what
//! changed; `kubectl suture replay -o policyreport` feeds one from an audit log. Nothing here
//! does I/O: the book renders objects, callers send them.

/// The most results a report holds (the least recently seen go first): well under the 1 MiB an
/// object may hold (a result is about 600 bytes).
pub const MAX_RESULTS: usize = 1000;

mod book;
mod read;
mod render;
mod subject;

pub use book::{Entry, Outcome, ReportBook, ResultKey, Seen};
pub use read::adopt;
pub use render::{API_VERSION, CLUSTER_KIND, KIND, SOURCE, render};
pub use subject::Subject;
