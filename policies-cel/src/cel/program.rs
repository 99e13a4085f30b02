//! A compiled expression: the lowered tree plus what it refers to.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use crate::cel::ast::{Kind, Node};
use crate::cel::{Activation, Budget, EvalError, ExprType, Root, Value, interp};

/// A compiled CEL expression, ready to be evaluated many times (and shared across threads).
pub struct Program {
    pub(crate) source: Arc<str>,
    pub(crate) node: Node,
    pub(crate) roots: u16,
    pub(crate) variables: Vec<usize>,
    pub(crate) result_type: ExprType,
}

impl Program {
    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The type the checker gives the expression's result (`dyn` when only evaluation knows).
    pub fn result_type(&self) -> &ExprType {
        &self.result_type
    }

    /// True when the expression reads `root` (directly; not through variables).
    pub fn uses(&self, root: Root) -> bool {
        self.roots & (1 << root.index()) != 0
    }

    /// What the expression reads of `root` (directly; not through variables): the fields it
    /// selects (`impact.summary`, `has(impact.pods)`, `impact.?notes`), or the whole value when it
    /// uses `root` any other way (`impact['pods']`, `string(impact)`, `impact == x`).
    pub fn fields_read(&self, root: Root) -> FieldsRead {
        let mut read = FieldsRead::Fields(BTreeSet::new());
        fields_read(&self.node, root, &mut read);
        read
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

/// What an expression reads of a root variable, see [`Program::fields_read`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldsRead {
    /// Only these fields (none when the root is not read at all).
    Fields(BTreeSet<String>),
    /// The whole value.
    Whole,
}

fn fields_read(node: &Node, root: Root, read: &mut FieldsRead) {
    if *read == FieldsRead::Whole {
        return;
    }
    match &node.kind {
        Kind::Select { operand, field }
        | Kind::Has { operand, field }
        | Kind::OptSelect { operand, field }
            if matches!(operand.kind, Kind::Root(r) if r == root) =>
        {
            if let FieldsRead::Fields(fields) = read {
                fields.insert(field.to_string());
            }
        }
        Kind::Root(r) if *r == root => *read = FieldsRead::Whole,
        _ => node.for_each_child(&mut |child| fields_read(child, root, read)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::Env;

    fn read(source: &str) -> FieldsRead {
        Env::admission()
            .compile(source)
            .unwrap()
            .fields_read(Root::Impact)
    }

    fn fields(names: &[&str]) -> FieldsRead {
        FieldsRead::Fields(names.iter().map(|n| n.to_string()).collect())
    }

    #[test]
    fn selections_name_their_fields_and_any_other_use_reads_the_whole_value() {
        assert_eq!(read("object.spec.replicas > 1"), fields(&[]));
        assert_eq!(
            read("impact.summary.deleted <= 3 && impact.pods.all(p, p.replaced) && has(impact.notes)"),
            fields(&["notes", "pods", "summary"])
        );
        assert_eq!(
            read("impact.?volumes.orValue([]).size() == 0"),
            fields(&["volumes"])
        );
        assert_eq!(
            read("[1].all(x, cel.bind(s, impact.summary, s.deleted < x))"),
            fields(&["summary"])
        );
        for whole in [
            "impact['pods'].size() == 0",
            "string(impact) != ''",
            "impact == {}",
            "impact.all(k, k != 'pods')",
            "size(impact) > 0 && impact.summary.deleted == 0",
            "cel.bind(i, impact, i.pods.size() == 0)",
        ] {
            assert_eq!(read(whole), FieldsRead::Whole, "{whole}");
        }
    }
}
