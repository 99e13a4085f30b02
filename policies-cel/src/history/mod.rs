//! History across requests: a ledger of admitted disruption ([`Ledger`] of [`Record`]s: time,
//! requester, namespace, workload and summary figures, never object bodies), bounded and
//! compacted by window; how one request sees it ([`RequestHistory`], the `history` CEL
//! variable); recording a decision into it ([`record_decision`]); and the fixtures tests and
//! `kubectl suture check --history` write ([`HistoryFixture`]).
//!
//! Pure and synchronous like the rest of the crate: the gateway keeps the shared ledger and
//! calls [`record_decision`]; `replay` builds one from the audit log's timeline.

pub mod duration;
mod fixture;
mod ledger;
mod lens;
mod record;
mod recording;
mod workload;

pub use fixture::{FixtureError, FixtureRecord, HistoryFixture};
pub use ledger::{DEFAULT_MAX_RECORDS, DEFAULT_RETENTION_SECONDS, Ledger, Totals, WindowError};
pub use lens::{RequestHistory, Scope};
pub use record::{Figures, Record, WorkloadRef};
pub use recording::{record_decision, record_of};
pub use workload::workload_of;
