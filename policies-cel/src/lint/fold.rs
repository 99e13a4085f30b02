//! Constant folding: which boolean expressions are decided before any request is seen.
//!
//! Follows CEL's semantics: `x && false` is false and `x || true` is true whatever `x` is (even an
//! error), comparisons of literals are computed, and a conjunction that bounds one field from both
//! sides with no room between (`object.spec.replicas < 0 && object.spec.replicas > 5`), or asks
//! for a negative size, can never hold.

use crate::cel::upstream::common::ast::{Expr, IdedExpr, LiteralValue, operators};

/// A boolean decided statically: its value, the node that decides it and why.
#[derive(Debug)]
pub(crate) struct Decided<'a> {
    pub(crate) value: bool,
    pub(crate) at: &'a IdedExpr,
    pub(crate) why: String,
}

/// The value of `node` when it does not depend on the request.
pub(crate) fn truth(node: &IdedExpr) -> Option<Decided<'_>> {
    match &node.expr {
        Expr::Literal(LiteralValue::Boolean(b)) => Some(Decided {
            value: *b.inner(),
            at: node,
            why: format!("it is the literal `{}`", b.inner()),
        }),
        Expr::Call(call) => {
            let args = call.args.as_slice();
            match (call.func_name.as_str(), args) {
                (operators::LOGICAL_NOT, [inner]) => truth(inner).map(|d| Decided {
                    value: !d.value,
                    at: node,
                    why: format!("it negates a constant ({})", d.why),
                }),
                (operators::NOT_STRICTLY_FALSE, [inner]) => truth(inner),
                (operators::LOGICAL_AND, [left, right]) => and(node, left, right),
                (operators::LOGICAL_OR, [left, right]) => or(left, right),
                (operators::CONDITIONAL, [cond, yes, no]) => match truth(cond) {
                    Some(c) => truth(if c.value { yes } else { no }),
                    None => match (truth(yes), truth(no)) {
                        (Some(a), Some(b)) if a.value == b.value => Some(Decided {
                            why: "both branches are the same constant".into(),
                            at: node,
                            value: a.value,
                        }),
                        _ => None,
                    },
                },
                (op, [left, right]) => match (constant(left), constant(right)) {
                    (Some(left), Some(right)) => Some(Decided {
                        value: compare(op, &left, &right)?,
                        at: node,
                        why: "it compares two constants".into(),
                    }),
                    _ => contradiction(node).map(|why| Decided {
                        value: false,
                        at: node,
                        why,
                    }),
                },
                _ => None,
            }
        }
        _ => None,
    }
}

fn and<'a>(node: &'a IdedExpr, left: &'a IdedExpr, right: &'a IdedExpr) -> Option<Decided<'a>> {
    let (l, r) = (truth(left), truth(right));
    for side in [&l, &r].into_iter().flatten() {
        if !side.value {
            return Some(Decided {
                value: false,
                at: side.at,
                why: format!("one side of `&&` is always false ({})", side.why),
            });
        }
    }
    if let (Some(_), Some(_)) = (&l, &r) {
        return Some(Decided {
            value: true,
            at: node,
            why: "both sides of `&&` are always true".into(),
        });
    }
    contradiction(node).map(|why| Decided {
        value: false,
        at: node,
        why,
    })
}

fn or<'a>(left: &'a IdedExpr, right: &'a IdedExpr) -> Option<Decided<'a>> {
    let (l, r) = (truth(left), truth(right));
    for side in [&l, &r].into_iter().flatten() {
        if side.value {
            return Some(Decided {
                value: true,
                at: side.at,
                why: format!("one side of `||` is always true ({})", side.why),
            });
        }
    }
    match (l, r) {
        (Some(l), Some(_)) => Some(Decided {
            value: false,
            why: "both sides of `||` are always false".into(),
            ..l
        }),
        _ => None,
    }
}

/// A literal operand (a negated number included).
#[derive(Debug, Clone, PartialEq)]
enum Constant {
    Bool(bool),
    Number(f64),
    String(String),
    Null,
}

fn constant(node: &IdedExpr) -> Option<Constant> {
    match &node.expr {
        Expr::Literal(literal) => Some(match literal {
            LiteralValue::Boolean(b) => Constant::Bool(*b.inner()),
            LiteralValue::Int(i) => Constant::Number(*i.inner() as f64),
            LiteralValue::UInt(u) => Constant::Number(*u.inner() as f64),
            LiteralValue::Double(d) => Constant::Number(*d.inner()),
            LiteralValue::String(s) => Constant::String(s.inner().to_owned()),
            LiteralValue::Null => Constant::Null,
            LiteralValue::Bytes(_) => return None,
        }),
        Expr::Call(call) if call.func_name == operators::NEGATE => match call.args.as_slice() {
            [inner] => match constant(inner)? {
                Constant::Number(n) => Some(Constant::Number(-n)),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// `left op right` for two constants of one type (`None` for other operators or mixed types).
fn compare(op: &str, left: &Constant, right: &Constant) -> Option<bool> {
    use std::cmp::Ordering;
    let order = match (left, right) {
        (Constant::Number(a), Constant::Number(b)) => a.partial_cmp(b)?,
        (Constant::String(a), Constant::String(b)) => a.cmp(b),
        (Constant::Bool(a), Constant::Bool(b)) => a.cmp(b),
        (Constant::Null, Constant::Null) => Ordering::Equal,
        _ => return None,
    };
    Some(match op {
        operators::EQUALS => order == Ordering::Equal,
        operators::NOT_EQUALS => order != Ordering::Equal,
        operators::LESS => order == Ordering::Less,
        operators::LESS_EQUALS => order != Ordering::Greater,
        operators::GREATER => order == Ordering::Greater,
        operators::GREATER_EQUALS => order != Ordering::Less,
        _ => return None,
    })
}

/// The bounds a conjunction puts on one numeric operand.
#[derive(Debug, Clone, Copy)]
struct Range {
    /// (bound, strict)
    low: Option<(f64, bool)>,
    high: Option<(f64, bool)>,
}

impl Range {
    fn raise(&mut self, value: f64, strict: bool) {
        if self
            .low
            .is_none_or(|(v, s)| value > v || (value == v && strict && !s))
        {
            self.low = Some((value, strict));
        }
    }

    fn lower(&mut self, value: f64, strict: bool) {
        if self
            .high
            .is_none_or(|(v, s)| value < v || (value == v && strict && !s))
        {
            self.high = Some((value, strict));
        }
    }

    fn is_empty(&self) -> bool {
        match (self.low, self.high) {
            (Some((low, low_strict)), Some((high, high_strict))) => {
                low > high || (low == high && (low_strict || high_strict))
            }
            _ => false,
        }
    }
}

/// Why the conjunction rooted at `node` cannot hold, when its numeric bounds leave no room.
fn contradiction(node: &IdedExpr) -> Option<String> {
    let mut conjuncts = Vec::new();
    flatten_and(node, &mut conjuncts);
    let mut ranges: Vec<(String, Range)> = Vec::new();
    for conjunct in conjuncts {
        let Some((operand, op, value)) = bound(conjunct) else {
            continue;
        };
        let index = match ranges.iter().position(|(name, _)| *name == operand) {
            Some(index) => index,
            None => {
                let floor = operand.starts_with("size(").then_some((0.0, false));
                ranges.push((
                    operand.clone(),
                    Range {
                        low: floor,
                        high: None,
                    },
                ));
                ranges.len() - 1
            }
        };
        let range = &mut ranges[index].1;
        match op {
            operators::LESS => range.lower(value, true),
            operators::LESS_EQUALS => range.lower(value, false),
            operators::GREATER => range.raise(value, true),
            operators::GREATER_EQUALS => range.raise(value, false),
            _ => {
                range.raise(value, false);
                range.lower(value, false);
            }
        }
        if range.is_empty() {
            return Some(format!("no value of `{operand}` satisfies every bound put on it"));
        }
    }
    None
}

fn flatten_and<'a>(node: &'a IdedExpr, out: &mut Vec<&'a IdedExpr>) {
    match &node.expr {
        Expr::Call(call) if call.func_name == operators::LOGICAL_AND && call.args.len() == 2 => {
            call.args.iter().for_each(|arg| flatten_and(arg, out));
        }
        _ => out.push(node),
    }
}

/// `operand op number` (either way round) with the operator as seen from the operand.
fn bound(node: &IdedExpr) -> Option<(String, &'static str, f64)> {
    let Expr::Call(call) = &node.expr else { return None };
    let [left, right] = call.args.as_slice() else {
        return None;
    };
    let op = [
        operators::LESS,
        operators::LESS_EQUALS,
        operators::GREATER,
        operators::GREATER_EQUALS,
        operators::EQUALS,
    ]
    .into_iter()
    .find(|op| *op == call.func_name)?;
    let number = |n: &IdedExpr| match constant(n) {
        Some(Constant::Number(v)) => Some(v),
        _ => None,
    };
    if let (Some(name), Some(value)) = (operand_name(left), number(right)) {
        return Some((name, op, value));
    }
    let (name, value) = (operand_name(right)?, number(left)?);
    let flipped = match op {
        operators::LESS => operators::GREATER,
        operators::LESS_EQUALS => operators::GREATER_EQUALS,
        operators::GREATER => operators::LESS,
        operators::GREATER_EQUALS => operators::LESS_EQUALS,
        other => other,
    };
    Some((name, flipped, value))
}

/// A field path (`object.spec.replicas`) or its size (`size(object.spec.ports)`), as text.
pub(crate) fn operand_name(node: &IdedExpr) -> Option<String> {
    match &node.expr {
        Expr::Ident(name) => Some(name.clone()),
        Expr::Select(select) if !select.test => {
            Some(format!("{}.{}", operand_name(&select.operand)?, select.field))
        }
        Expr::Call(call) if call.func_name == operators::INDEX => match call.args.as_slice() {
            [target, key] => match constant(key)? {
                Constant::String(k) => Some(format!("{}[{k:?}]", operand_name(target)?)),
                Constant::Number(n) => Some(format!("{}[{n}]", operand_name(target)?)),
                _ => None,
            },
            _ => None,
        },
        Expr::Call(call) if call.func_name == "size" => {
            let inner = match (call.target.as_deref(), call.args.as_slice()) {
                (Some(target), []) => target,
                (None, [arg]) => arg,
                _ => return None,
            };
            Some(format!("size({})", operand_name(inner)?))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::parsed::Parsed;

    fn decide(source: &str) -> Option<(bool, usize)> {
        let parsed = Parsed::new(source)?;
        truth(&parsed.root).map(|d| (d.value, parsed.offset(d.at)))
    }

    #[test]
    fn literals_and_their_combinations() {
        assert_eq!(decide("false"), Some((false, 0)));
        assert_eq!(decide("object.x > 1 && false"), Some((false, 16)));
        assert_eq!(decide("object.x > 1 || !false"), Some((true, 16)));
        assert_eq!(decide("true ? 1 == 2 : true"), Some((false, 9)));
        assert_eq!(decide("object.x > 1 || object.y"), None);
        assert_eq!(decide("object.x > 1 && true"), None);
    }

    #[test]
    fn comparisons_of_literals() {
        assert_eq!(decide("1 == 2"), Some((false, 2)));
        assert_eq!(decide("'a' < 'b'"), Some((true, 4)));
        assert_eq!(decide("-1 < 0"), Some((true, 3)));
        assert_eq!(decide("1 == 'a'"), None);
    }

    #[test]
    fn bounds_that_leave_no_room() {
        let source = "object.spec.replicas < 0 && object.spec.replicas > 5";
        assert_eq!(decide(source), Some((false, source.find("&&").unwrap())));
        assert_eq!(
            decide("size(object.spec.ports) < 0 && object.a"),
            Some((false, 24))
        );
        assert_eq!(decide("3 >= object.n && object.n >= 3"), None);
        assert_eq!(decide("object.n > 3 && object.n < 3"), Some((false, 13)));
        assert_eq!(decide("object.n == 1 && object.n == 2"), Some((false, 14)));
        assert_eq!(decide("object.n > 1 && object.m < 0"), None);
    }
}
