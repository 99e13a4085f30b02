//! A compiled expression: the lowered tree plus what it refers to.

use std::fmt;
use std::sync::Arc;

use crate::cel::ast::Node;
use crate::cel::{Activation, Budget, EvalError, Root, Value, interp};

/// A compiled CEL expression, ready to be evaluated many times (and shared across threads).
pub struct Program {
    pub(crate) source: Arc<str>,
    pub(crate) node: Node,
    pub(crate) roots: u16,
    pub(crate) variables: Vec<usize>,
}

impl Program {
    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// True when the expression reads `root` (directly; not through variables).
    pub fn uses(&self, root: Root) -> bool {
        self.roots & (1 << root.index()) != 0
    }

    /// The composited variables the expression reads directly, by index.
    pub fn variables_used(&self) -> &[usize] {
        &self.variables
    }

    /// Evaluates the expression, charging `budget`.
    pub fn eval(&self, activation: &dyn Activation, budget: &Budget) -> Result<Value, EvalError> {
        interp::eval(&self.node, activation, budget)
    }
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program").field("source", &self.source).finish()
    }
}
