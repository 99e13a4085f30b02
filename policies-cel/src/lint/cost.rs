//! A static estimate of an expression's evaluation cost, in the units the engine's budget charges
//! (`cel/budget.rs`: one per node and per comprehension iteration).
//!
//! What is assumed: a list or map read from the request, the params, a variable or any function
//! result has [`UNKNOWN_LENGTH`] items (nothing bounds them without a schema); a literal list has
//! its own length; `map`/`filter` keep their range's length; a list read from an enclosing
//! comprehension's item is a share of that item's range (containers × their ports stays linear).
//! A comprehension costs its range once plus its body once per item, so nested comprehensions over
//! request lists multiply. An estimate above [`PER_EXPRESSION_LIMIT`] — Kubernetes'
//! per-expression cost limit — is reported, as is a regular expression built from a non-literal
//! pattern inside a loop (compiled again on every iteration).

use crate::cel::compile::regex_pattern;
use crate::cel::parsed::children;
use crate::cel::upstream::common::ast::{Expr, IdedExpr, LiteralValue};
use crate::lint::fold::operand_name;

/// How many items a list or map of unknown length is taken to hold.
pub const UNKNOWN_LENGTH: f64 = 1_000.0;
/// Kubernetes' per-expression cost limit (`PerCallLimit`): above it, the estimate is reported.
pub const PER_EXPRESSION_LIMIT: f64 = 1_000_000.0;

/// What makes something costly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CostKind {
    /// An estimated cost above [`PER_EXPRESSION_LIMIT`].
    Estimate,
    /// A regular expression compiled again on every iteration of a loop.
    Regex,
}

/// Something costly, at a node.
#[derive(Debug)]
pub(crate) struct Costly<'a> {
    pub(crate) at: &'a IdedExpr,
    pub(crate) kind: CostKind,
    pub(crate) message: String,
    pub(crate) help: String,
}

/// The costly parts of `root`: comprehension nests whose estimate passes the limit (the
/// outermost one of each nest) and regular expressions compiled inside loops.
pub(crate) fn costly(root: &IdedExpr) -> Vec<Costly<'_>> {
    let mut found = Vec::new();
    let total = estimate(root, &[], &mut found).cost;
    if total > PER_EXPRESSION_LIMIT && !found.iter().any(|c| c.kind == CostKind::Estimate) {
        found.insert(
            0,
            Costly {
                at: root,
                kind: CostKind::Estimate,
                message: format!(
                    "estimated cost {} is above the per-expression limit",
                    units(total)
                ),
                help: help(total),
            },
        );
    }
    found
}

#[derive(Debug, Clone, Copy)]
struct Estimate {
    cost: f64,
    /// Items, when the value is a collection that can be ranged over.
    length: f64,
}

/// An iteration variable in scope and the length of the range it walks.
type Loop<'a> = (&'a str, f64);

fn estimate<'a>(node: &'a IdedExpr, loops: &[Loop<'a>], found: &mut Vec<Costly<'a>>) -> Estimate {
    match &node.expr {
        Expr::Comprehension(c) => {
            let range = estimate(&c.iter_range, loops, found);
            // A list read from an enclosing loop's item (`c.ports` in `containers.all(c, ...)`)
            // is a share of the object: together the items hold the unknown length once.
            let enclosing = root_name(&c.iter_range).and_then(|name| loops.iter().find(|(n, _)| *n == name));
            let length = match enclosing {
                Some((_, outer)) => (UNKNOWN_LENGTH / outer).max(1.0),
                None => range.length,
            };
            let mut inner = loops.to_vec();
            inner.push((c.iter_var.as_str(), length));
            if let Some(second) = &c.iter_var2 {
                inner.push((second.as_str(), length));
            }
            let before = found.len();
            let init = estimate(&c.accu_init, loops, found).cost;
            let body =
                estimate(&c.loop_cond, &inner, found).cost + estimate(&c.loop_step, &inner, found).cost;
            let result = estimate(&c.result, loops, found).cost;
            let cost = 1.0 + range.cost + init + length * (body + 1.0) + result;
            let nested_reported = found[before..].iter().any(|c| c.kind == CostKind::Estimate);
            if cost > PER_EXPRESSION_LIMIT && !nested_reported {
                let over = operand_name(&c.iter_range).unwrap_or_else(|| "a list".into());
                found.insert(
                    before,
                    Costly {
                        at: node,
                        kind: CostKind::Estimate,
                        message: format!(
                            "estimated cost {} is above the per-expression limit: this comprehension over `{over}` runs a costly body for each item",
                            units(cost)
                        ),
                        help: help(cost),
                    },
                );
            }
            Estimate { cost, length }
        }
        Expr::List(list) => {
            let cost = own_and_children(node, loops, found);
            Estimate {
                cost,
                length: list.elements.len() as f64,
            }
        }
        Expr::Map(map) => {
            let cost = own_and_children(node, loops, found);
            Estimate {
                cost,
                length: map.entries.len() as f64,
            }
        }
        Expr::Call(call) => {
            if !loops.is_empty()
                && let Some(pattern) = regex_pattern(call)
                && !matches!(pattern.expr, Expr::Literal(LiteralValue::String(_)))
            {
                found.push(Costly {
                    at: node,
                    kind: CostKind::Regex,
                    message: format!(
                        "`{}` builds its regular expression from a non-literal pattern inside a loop: it is compiled again on every iteration",
                        call.func_name
                    ),
                    help: "use a literal pattern (compiled once, when the policy loads), or build the pattern outside the comprehension with a variable".into(),
                });
            }
            let cost = own_and_children(node, loops, found);
            Estimate {
                cost,
                length: UNKNOWN_LENGTH,
            }
        }
        _ => Estimate {
            cost: own_and_children(node, loops, found),
            length: UNKNOWN_LENGTH,
        },
    }
}

/// One unit for `node` and the estimates of its children.
fn own_and_children<'a>(node: &'a IdedExpr, loops: &[Loop<'a>], found: &mut Vec<Costly<'a>>) -> f64 {
    1.0 + children(node)
        .iter()
        .map(|c| estimate(c, loops, found).cost)
        .sum::<f64>()
}

/// The identifier a selection or index chain starts from (`c` in `c.ports[0]`).
fn root_name(node: &IdedExpr) -> Option<&str> {
    match &node.expr {
        Expr::Ident(name) => Some(name),
        Expr::Select(select) => root_name(&select.operand),
        Expr::Call(call) if call.func_name == crate::cel::upstream::common::ast::operators::INDEX => {
            root_name(call.args.first()?)
        }
        _ => None,
    }
}

fn help(cost: f64) -> String {
    format!(
        "the estimate takes every list or map read from the request, params or a function to hold {} items (one unit per node and per iteration, as the engine's budget charges); {} units would exceed Kubernetes' per-expression limit of {} and use {:.0}% of Suture's budget for a whole policy ({}). Bound the inner list (a variable computed once, `size(x) <= N &&` first) or avoid the nesting (a set built once with `map`, then `in`)",
        UNKNOWN_LENGTH,
        units(cost),
        units(PER_EXPRESSION_LIMIT),
        (cost / crate::cel::DEFAULT_COST_LIMIT as f64 * 100.0).min(999.0),
        units(crate::cel::DEFAULT_COST_LIMIT as f64),
    )
}

/// `12,345,678`.
fn units(cost: f64) -> String {
    let digits = format!("{:.0}", cost.min(1e18));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::parsed::Parsed;

    fn report(source: &str) -> Vec<(usize, String, CostKind)> {
        let parsed = Parsed::new(source).unwrap();
        costly(&parsed.root)
            .into_iter()
            .map(|c| (parsed.offset(c.at), c.message, c.kind))
            .collect()
    }

    #[test]
    fn one_loop_over_a_request_list_is_fine() {
        assert!(
            report("object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))").is_empty()
        );
        assert!(report("[1, 2, 3].all(x, [4, 5].exists(y, x < y))").is_empty());
        // The ports of each container are a share of the pod, not a second pod-sized list.
        assert!(report("object.spec.containers.all(c, c.ports.all(p, p.containerPort > 1024))").is_empty());
    }

    #[test]
    fn nested_loops_over_request_lists_are_reported_once_at_the_outer_loop() {
        let source = "object.spec.containers.all(c, object.spec.containers.exists(d, d.name == c.name))";
        let found = report(source);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].2, CostKind::Estimate);
        assert!(found[0].1.starts_with("estimated cost"), "{}", found[0].1);
        assert!(found[0].1.contains("`object.spec.containers`"), "{}", found[0].1);
        assert_eq!(units(12_345_678.0), "12,345,678");
        // A regular expression found inside the nest does not stand for its estimate.
        let source =
            "object.spec.containers.all(c, object.spec.containers.exists(d, d.name.matches(c.name)))";
        let kinds: Vec<CostKind> = report(source).into_iter().map(|(_, _, kind)| kind).collect();
        assert_eq!(kinds, [CostKind::Estimate, CostKind::Regex]);
    }

    #[test]
    fn dynamic_regexes_in_loops() {
        let source = "object.spec.containers.all(c, c.image.matches(params.pattern))";
        let found = report(source);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, source.find("matches").unwrap_or(0), "{found:?}");
        assert_eq!(found[0].2, CostKind::Regex);
        assert!(report("object.spec.containers.all(c, c.image.matches('^a'))").is_empty());
        // The global form takes the subject first: a literal pattern is its second argument.
        assert!(report("object.spec.containers.all(c, matches(c.image, '^registry/'))").is_empty());
        assert_eq!(
            report("object.spec.containers.all(c, matches(c.image, c.name))").len(),
            1
        );
        assert!(report("object.metadata.name.matches(params.pattern)").is_empty());
    }
}
