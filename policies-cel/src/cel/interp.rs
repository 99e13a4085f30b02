//! Placeholder: being written.
use crate::cel::ast::Node;
use crate::cel::{Activation, Budget, EvalError, Value};
pub(crate) fn eval(_node: &Node, _act: &dyn Activation, _budget: &Budget) -> Result<Value, EvalError> {
    Err(EvalError::Other("not written yet".into()))
}
