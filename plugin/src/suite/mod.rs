//! Policy unit-test suites (`kind: SutureTest`): the file format, loading and preparing cases,
//! expectations, and running them against the policies.

pub mod expect;
pub mod load;
pub mod model;
pub mod runner;

pub use load::{Case, Suite, load};
pub use runner::{CaseResult, RunResult, SuiteResult, run};
