//! The CEL environment of Kubernetes admission, with Suture's additions.
//!
//! Expressions are parsed by the `cel` crate (optional syntax on) and lowered into our own tree
//! ([`ast`]), which a bounded interpreter ([`interp`]) evaluates over `cel::Value`s. The
//! Kubernetes libraries come from `kube-cel`, called through [`functions::bridge`]; only what no
//! maintained crate offers is implemented here (two-variable comprehensions, `cel.bind`, the
//! authorizer, `type()`, lazy composited variables, cost budgets), plus the functions `kube-cel`
//! gets wrong (see [`functions`]).
//!
//! Why not `cel`'s own interpreter: it copies whole lists and maps on every variable access, treats
//! a field selection on a non-map as `false`, and has no hook to stop a runaway comprehension.

mod activation;
mod ast;
mod budget;
mod check;
pub(crate) mod compile;
mod env;
mod error;
pub mod functions;
mod interp;
mod macros;
pub(crate) mod map_shape;
mod nesting;
mod ops;
pub(crate) mod parsed;
mod position;
mod program;
pub(crate) mod quotes;
pub mod serialize;
pub mod value;
mod version;

pub use activation::{Activation, Bindings, LazyField, LazyVariables, VariablePrograms};
pub use budget::{Budget, DEFAULT_COST_LIMIT};
pub use check::ExprType;
pub use env::{Env, Root};
pub use error::{CompileError, EvalError, Requirement};
pub use functions::authorizer::{AuthorizerMode, authorizer_for_request, authorizer_value};
pub use kube_cel::cel as upstream;
pub use program::{FieldsRead, Program};
pub use upstream::Value;
pub use version::{KubernetesVersion, VersionError};
