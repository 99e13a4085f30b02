//! Policies: the one internal model both formats load into, and the loader that fills it.
//!
//! Kubernetes `ValidatingAdmissionPolicy` + `ValidatingAdmissionPolicyBinding` and Suture's
//! `SafetyPolicy` become the same [`Policy`]; every CEL expression is compiled when loaded, so a
//! [`PolicySet`] that exists can be evaluated without compile errors.

mod body;
pub(crate) mod context;
mod error;
mod load;
pub(crate) mod marked;
mod model;
mod param_objects;
pub(crate) mod path;
pub(crate) mod read;
pub mod safety;
mod scalar;
pub mod severity;
mod source;
pub mod vap;

pub use error::{LoadError, TypeMismatch};
pub use load::{Loader, load_paths};
pub use model::{
    Action, AuditAnnotation, Binding, EvalOptions, FailurePolicy, MatchCondition, NamedExpr, ParamRefSpec,
    Policy, PolicyKind, PolicySet, Subjects, Validation,
};
pub use param_objects::ParamObjects;
pub use source::{Document, SourceRef, split_documents};
