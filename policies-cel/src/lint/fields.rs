//! The fields an expression selects below `object` and `oldObject` that a kind's schema does not
//! declare, as kube-apiserver's ValidatingAdmissionPolicy type check finds them (`undefined field
//! 'replicsa'`, see [`crate::lint::kinds`]).
//!
//! Followed: selections (`object.spec.replicas`), `has(...)`, optional selections
//! (`object.?spec.?replicas`), indexing (`x[0]`, `x[?k]`, into a list's items or a map's values),
//! and the iteration variables of macros over a list whose item schema is known
//! (`object.spec.containers.all(c, c.image != '')`, the two-variable forms too). Anything else
//! (variables, function results, `orValue`, an iteration over a map's keys) is not typed: nothing
//! below it is judged.

use crate::cel::upstream::common::ast::{Expr, IdedExpr, LiteralValue, operators};

use crate::cel::parsed::children;
use crate::lint::schema::{At, Field};

/// A field an expression selects that the schema does not declare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Undefined {
    /// The selecting node (a select, or an optional select call).
    pub(crate) id: u64,
    pub(crate) field: String,
}

/// The macros (left to the engine by the parser) whose first two arguments are iteration
/// variables over their target: index or key, then item or value.
const TWO_VARIABLE: [&str; 6] = [
    "all",
    "exists",
    "existsOne",
    "transformList",
    "transformMap",
    "transformMapEntry",
];

/// Every undefined field `root` selects, with `object` and `oldObject` typed by `schema`.
pub(crate) fn undefined(root: &IdedExpr, schema: At<'_>) -> Vec<Undefined> {
    let mut walk = Walk {
        scope: vec![("object", Some(schema)), ("oldObject", Some(schema))],
        found: Vec::new(),
    };
    walk.visit(root);
    walk.found
}

struct Walk<'e, 's> {
    /// The names in scope, innermost last, with their schema when it is known.
    scope: Vec<(&'e str, Option<At<'s>>)>,
    found: Vec<Undefined>,
}

impl<'e, 's> Walk<'e, 's> {
    /// Visits `node` and its sub-expressions; returns `node`'s schema when it is known.
    fn visit(&mut self, node: &'e IdedExpr) -> Option<At<'s>> {
        match &node.expr {
            Expr::Ident(name) => self
                .scope
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .and_then(|(_, at)| *at),
            Expr::Select(select) => {
                let operand = self.visit(&select.operand)?;
                self.select(node.id, operand, &select.field)
            }
            Expr::Call(call) if call.func_name == operators::OPT_SELECT && call.args.len() == 2 => {
                let operand = self.visit(&call.args[0]);
                let Expr::Literal(LiteralValue::String(field)) = &call.args[1].expr else {
                    return None;
                };
                self.select(node.id, operand?, field.inner())
            }
            Expr::Call(call)
                if [operators::INDEX, operators::OPT_INDEX].contains(&call.func_name.as_str())
                    && call.args.len() == 2 =>
            {
                let operand = self.visit(&call.args[0]);
                self.visit(&call.args[1]);
                operand?.element()
            }
            Expr::Call(call)
                if TWO_VARIABLE.contains(&call.func_name.as_str())
                    && matches!(call.args.len(), 3 | 4)
                    && call.target.is_some() =>
            {
                let range = call.target.as_deref().and_then(|target| self.visit(target));
                let (Expr::Ident(first), Expr::Ident(second)) = (&call.args[0].expr, &call.args[1].expr)
                else {
                    for arg in &call.args {
                        self.visit(arg);
                    }
                    return None;
                };
                self.within(&[(first, None), (second, range.and_then(At::element))], |walk| {
                    for arg in &call.args[2..] {
                        walk.visit(arg);
                    }
                });
                None
            }
            Expr::Comprehension(c) => {
                let range = self.visit(&c.iter_range);
                self.visit(&c.accu_init);
                let (first, second) = match (&c.iter_var2, range) {
                    (None, Some(range)) if !range.is_map() => (range.items(), None),
                    (Some(_), range) => (None, range.and_then(At::element)),
                    (None, _) => (None, None),
                };
                let mut names = vec![(c.iter_var.as_str(), first), (c.accu_var.as_str(), None)];
                if let Some(second_name) = &c.iter_var2 {
                    names.push((second_name.as_str(), second));
                }
                self.within(&names, |walk| {
                    for part in [&c.loop_cond, &c.loop_step, &c.result] {
                        walk.visit(part);
                    }
                });
                None
            }
            _ => {
                for child in children(node) {
                    self.visit(child);
                }
                None
            }
        }
    }

    /// Runs `body` with `names` in scope.
    fn within(&mut self, names: &[(&'e str, Option<At<'s>>)], body: impl FnOnce(&mut Self)) {
        let depth = self.scope.len();
        self.scope.extend_from_slice(names);
        body(self);
        self.scope.truncate(depth);
    }

    fn select(&mut self, id: u64, operand: At<'s>, field: &str) -> Option<At<'s>> {
        match operand.field(field) {
            Field::Found(at) => Some(at),
            Field::Unknown => None,
            Field::Undefined => {
                self.found.push(Undefined {
                    id,
                    field: field.to_owned(),
                });
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::parsed::Parsed;
    use crate::lint::builtin::BuiltinKind;

    fn undefined_in(source: &str, group: &str, resource: &str) -> Vec<String> {
        let parsed = Parsed::new(source).unwrap();
        let kind = BuiltinKind::find(group, "v1", resource).unwrap();
        undefined(&parsed.root, At::root(kind.schema()))
            .into_iter()
            .map(|u| u.field)
            .collect()
    }

    fn deployment(source: &str) -> Vec<String> {
        undefined_in(source, "apps", "deployments")
    }

    #[test]
    fn direct_chains() {
        assert_eq!(deployment("object.spec.replicsa > 1"), ["replicsa"]);
        assert!(deployment("object.spec.replicas > 1 && oldObject.spec.replicas > 1").is_empty());
        assert_eq!(
            deployment("has(object.spec.template.spec.hostNetwrok)"),
            ["hostNetwrok"]
        );
        assert_eq!(deployment("object.?spec.?replicsa.orValue(1) > 0"), ["replicsa"]);
        assert_eq!(deployment("oldObject.metadata.lables['a'] == 'b'"), ["lables"]);
        // Only the first undefined field of a chain: nothing is known below it.
        assert_eq!(deployment("object.spek.replicsa == 1"), ["spek"]);
    }

    #[test]
    fn maps_lists_and_leaves() {
        assert!(deployment("object.metadata.labels.app == 'x'").is_empty());
        assert!(deployment("object.spec.strategy.rollingUpdate.maxSurge.whatever == 1").is_empty());
        assert_eq!(
            deployment("object.spec.template.spec.containers[0].imgae == ''"),
            ["imgae"]
        );
        assert!(deployment("variables.x.anything && params.spec.y == 1").is_empty());
    }

    #[test]
    fn macros_type_their_variables() {
        let source =
            "object.spec.template.spec.containers.all(c, c.image != '' && c.securityContext.privilegd)";
        assert_eq!(deployment(source), ["privilegd"]);
        let source = "object.spec.template.spec.containers.exists(c, c.ports.exists(p, p.hostPrt > 0))";
        assert_eq!(deployment(source), ["hostPrt"]);
        let source = "object.spec.template.spec.containers.all(i, c, c.nmae != '')";
        assert_eq!(deployment(source), ["nmae"]);
        // Over a map, one variable is the key: a string, nothing to judge.
        assert!(deployment("object.metadata.labels.all(k, k.size() > 0)").is_empty());
        // A variable named `object` shadows the object.
        assert!(deployment("[{'a': 1}].all(object, object.a == 1)").is_empty());
        let source = "object.spec.template.spec.containers.map(c, c.name).all(n, n.x == '')";
        assert!(deployment(source).is_empty());
    }

    #[test]
    fn other_kinds() {
        assert!(undefined_in("object.spec.containers.all(c, c.image != '')", "", "pods").is_empty());
        assert_eq!(undefined_in("object.dat.x == ''", "", "configmaps"), ["dat"]);
    }
}
