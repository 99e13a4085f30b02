//! The macros the `cel` parser leaves to us, as cel-go's `ext.TwoVarComprehensions` defines
//! them (`all(i, v, ...)`, `exists`, `existsOne`, `transformList`, `transformMap`,
//! `transformMapEntry`), `optMap`/`optFlatMap` (cel-go's optional library), `sortBy` (cel-go's
//! lists extension), and the rewrite that makes `map`/`filter` accumulate in place.

use crate::cel::Value;
use crate::cel::ast::{BinOp, Comprehension, Kind, Node};
use crate::cel::functions::Builtin;

#[derive(Clone, Copy)]
pub(crate) enum TwoVar {
    All,
    Exists,
    ExistsOne,
    TransformList,
    TransformMap,
    TransformMapEntry,
}

fn node(kind: Kind) -> Node {
    Node::new(kind)
}

fn boolean(b: bool) -> Node {
    node(Kind::Const(Value::Bool(b)))
}

fn local(slot: usize) -> Box<Node> {
    Box::new(node(Kind::Local(slot)))
}

/// Builds the comprehension a two-variable macro stands for (as cel-go's `ext.TwoVarComprehensions`).
pub(crate) fn two_variable(
    shape: TwoVar,
    range: Node,
    accu_slot: usize,
    iter_slot: usize,
    iter2_slot: usize,
    filter: Option<Node>,
    step: Node,
) -> Comprehension {
    let accu = || local(accu_slot);
    let guarded = |filter: Option<Node>, then: Node| match filter {
        Some(filter) => node(Kind::Cond(Box::new(filter), Box::new(then), accu())),
        None => then,
    };
    let (accu_init, loop_cond, loop_step) = match shape {
        TwoVar::All => (
            boolean(true),
            node(Kind::NotStrictlyFalse(accu())),
            node(Kind::And(accu(), Box::new(step))),
        ),
        TwoVar::Exists => (
            boolean(false),
            node(Kind::NotStrictlyFalse(Box::new(node(Kind::Not(accu()))))),
            node(Kind::Or(accu(), Box::new(step))),
        ),
        TwoVar::ExistsOne => (
            node(Kind::Const(Value::Int(0))),
            boolean(true),
            node(Kind::Cond(
                Box::new(step),
                Box::new(node(Kind::Binary(
                    BinOp::Add,
                    accu(),
                    Box::new(node(Kind::Const(Value::Int(1)))),
                ))),
                accu(),
            )),
        ),
        TwoVar::TransformList => (
            node(Kind::List {
                elements: vec![],
                optional: vec![],
            }),
            boolean(true),
            guarded(
                filter,
                node(Kind::AppendToLocal {
                    slot: accu_slot,
                    elements: vec![step],
                }),
            ),
        ),
        TwoVar::TransformMap => (
            node(Kind::Map { entries: vec![] }),
            boolean(true),
            guarded(
                filter,
                node(Kind::Call {
                    builtin: Builtin::MapInsert,
                    target: Some(accu()),
                    args: vec![node(Kind::Local(iter_slot)), step],
                }),
            ),
        ),
        TwoVar::TransformMapEntry => (
            node(Kind::Map { entries: vec![] }),
            boolean(true),
            guarded(
                filter,
                node(Kind::Call {
                    builtin: Builtin::MapMerge,
                    target: Some(accu()),
                    args: vec![step],
                }),
            ),
        ),
    };
    let result = match shape {
        TwoVar::ExistsOne => node(Kind::Binary(
            BinOp::Eq,
            accu(),
            Box::new(node(Kind::Const(Value::Int(1)))),
        )),
        _ => node(Kind::Local(accu_slot)),
    };
    Comprehension {
        range,
        iter_slot,
        iter2_slot: Some(iter2_slot),
        accu_slot,
        accu_init,
        loop_cond,
        loop_step,
        result,
    }
}

/// `optMap`/`optFlatMap` over the optional bound at `holder`, with the user's variable at
/// `holder + 1`: `o.hasValue() ? optional.of(expr) : optional.none()` (without `optional.of`
/// for `optFlatMap`, whose expression yields an optional itself).
pub(crate) fn opt_map(holder: usize, optional: Box<Node>, body: Node, flat: bool) -> Kind {
    let call = |builtin, target: Option<Box<Node>>, args| {
        node(Kind::Call {
            builtin,
            target,
            args,
        })
    };
    let value = call(Builtin::OptionalValue, Some(local(holder)), vec![]);
    let mapped = node(Kind::Bind {
        slot: holder + 1,
        init: Box::new(value),
        body: Box::new(body),
    });
    let present = if flat {
        mapped
    } else {
        call(Builtin::OptionalOf, None, vec![mapped])
    };
    Kind::Bind {
        slot: holder,
        init: optional,
        body: Box::new(node(Kind::Cond(
            Box::new(call(Builtin::HasValue, Some(local(holder)), vec![])),
            Box::new(present),
            Box::new(call(Builtin::OptionalNone, None, vec![])),
        ))),
    }
}

/// `sortBy` over the list bound at `holder`: its keys are `transformList(_, v, key)` with the
/// accumulator, index and variable at the next three slots, and `@sortByAssociatedKeys` orders
/// the list by them.
pub(crate) fn sort_by(holder: usize, list: Box<Node>, key: Node) -> Kind {
    let keys = two_variable(
        TwoVar::TransformList,
        node(Kind::Local(holder)),
        holder + 1,
        holder + 2,
        holder + 3,
        None,
        key,
    );
    Kind::Bind {
        slot: holder,
        init: list,
        body: Box::new(node(Kind::Call {
            builtin: Builtin::SortByKeys,
            target: Some(local(holder)),
            args: vec![node(Kind::Comprehension(Box::new(keys)))],
        })),
    }
}

/// Rewrites `accu + [e...]` (and the filter form `c ? accu + [e] : accu`) into an in-place
/// append when the new elements do not read the accumulator, turning the `map`/`filter`
/// macros from quadratic into linear time.
pub(crate) fn append_in_place(step: Node, accu_slot: usize) -> Node {
    match step.kind {
        Kind::Binary(BinOp::Add, left, right) => match (left.kind, right.kind) {
            (Kind::Local(slot), Kind::List { elements, optional })
                if slot == accu_slot
                    && !optional.iter().any(|o| *o)
                    && !elements.iter().any(|e| reads_local(e, accu_slot)) =>
            {
                node(Kind::AppendToLocal { slot, elements })
            }
            (l, r) => node(Kind::Binary(BinOp::Add, Box::new(node(l)), Box::new(node(r)))),
        },
        Kind::Cond(cond, then, otherwise) if !reads_local(&cond, accu_slot) => node(Kind::Cond(
            cond,
            Box::new(append_in_place(*then, accu_slot)),
            otherwise,
        )),
        kind => node(kind),
    }
}

/// True when `node` reads local `slot` anywhere.
pub(crate) fn reads_local(node: &Node, slot: usize) -> bool {
    let any = |nodes: &[Node]| nodes.iter().any(|n| reads_local(n, slot));
    match &node.kind {
        Kind::Local(s) | Kind::AppendToLocal { slot: s, .. } if *s == slot => true,
        Kind::Const(_) | Kind::Root(_) | Kind::Variable(_) | Kind::Local(_) => false,
        Kind::AppendToLocal { elements, .. } => any(elements),
        Kind::Select { operand, .. } | Kind::Has { operand, .. } | Kind::OptSelect { operand, .. } => {
            reads_local(operand, slot)
        }
        Kind::Not(x) | Kind::Neg(x) | Kind::NotStrictlyFalse(x) => reads_local(x, slot),
        Kind::MatchesConst { target, .. } => reads_local(target, slot),
        Kind::FindConst { target, limit, .. } => {
            reads_local(target, slot) || limit.as_deref().is_some_and(|limit| reads_local(limit, slot))
        }
        Kind::Index { operand, index } | Kind::OptIndex { operand, index } => {
            reads_local(operand, slot) || reads_local(index, slot)
        }
        Kind::And(a, b) | Kind::Or(a, b) | Kind::Binary(_, a, b) => {
            reads_local(a, slot) || reads_local(b, slot)
        }
        Kind::Cond(a, b, c) => reads_local(a, slot) || reads_local(b, slot) || reads_local(c, slot),
        Kind::List { elements, .. }
        | Kind::ClusterCall { args: elements, .. }
        | Kind::HistoryCall { args: elements, .. } => any(elements),
        Kind::Map { entries } => entries
            .iter()
            .any(|(k, v, _)| reads_local(k, slot) || reads_local(v, slot)),
        Kind::Call { target, args, .. } | Kind::Bridge { target, args, .. } => {
            target.as_deref().is_some_and(|t| reads_local(t, slot)) || any(args)
        }
        Kind::Comprehension(c) => {
            reads_local(&c.range, slot)
                || reads_local(&c.accu_init, slot)
                || reads_local(&c.loop_cond, slot)
                || reads_local(&c.loop_step, slot)
                || reads_local(&c.result, slot)
        }
        Kind::Bind { init, body, .. } => reads_local(init, slot) || reads_local(body, slot),
    }
}
