//! The lowered expression tree the interpreter walks: identifiers resolved to slots, macros
//! expanded into comprehensions, functions resolved to native code or the `kube-cel` bridge.

use std::sync::Arc;

use regex::Regex;

use crate::cel::functions::Builtin;
use crate::cel::functions::bridge::BridgeCall;
use crate::cel::{Root, Value};

/// A node and the byte offset in the source it came from (for error messages).
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub kind: Kind,
}

impl Node {
    pub fn new(kind: Kind) -> Self {
        Self { kind }
    }
}

/// Binary operators with ordinary (strict) evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
}

/// The shape of a comprehension's result, for the two-variable forms that build collections.
#[derive(Debug, Clone)]
pub(crate) struct Comprehension {
    pub range: Node,
    /// Slot of the (first) iteration variable.
    pub iter_slot: usize,
    /// Slot of the second iteration variable (two-variable comprehensions).
    pub iter2_slot: Option<usize>,
    pub accu_slot: usize,
    pub accu_init: Node,
    pub loop_cond: Node,
    pub loop_step: Node,
    pub result: Node,
}

#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Const(Value),
    Root(Root),
    /// `variables.<name>`.
    Variable(usize),
    /// A comprehension or `cel.bind` variable, by slot.
    Local(usize),
    /// `accu + [elements]` where the accumulator is not read by the elements: appends in place.
    AppendToLocal {
        slot: usize,
        elements: Vec<Node>,
    },
    Select {
        operand: Box<Node>,
        field: Arc<String>,
    },
    /// `has(operand.field)`.
    Has {
        operand: Box<Node>,
        field: Arc<String>,
    },
    /// `operand.?field`.
    OptSelect {
        operand: Box<Node>,
        field: Arc<String>,
    },
    Index {
        operand: Box<Node>,
        index: Box<Node>,
    },
    /// `operand[?index]`.
    OptIndex {
        operand: Box<Node>,
        index: Box<Node>,
    },
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Neg(Box<Node>),
    /// `@not_strictly_false(x)`: true unless x is exactly false (errors count as true).
    NotStrictlyFalse(Box<Node>),
    Cond(Box<Node>, Box<Node>, Box<Node>),
    Binary(BinOp, Box<Node>, Box<Node>),
    List {
        elements: Vec<Node>,
        optional: Vec<bool>,
    },
    Map {
        entries: Vec<(Node, Node, bool)>,
    },
    /// `matches` with a pattern fixed at compile time.
    MatchesConst {
        target: Box<Node>,
        regex: Arc<Regex>,
    },
    /// `find` (`all` false) or `findAll` (`all` true, with its optional `limit`) with a pattern
    /// fixed at compile time.
    FindConst {
        target: Box<Node>,
        regex: Arc<Regex>,
        all: bool,
        limit: Option<Box<Node>>,
    },
    Call {
        builtin: Builtin,
        target: Option<Box<Node>>,
        args: Vec<Node>,
    },
    /// `cluster.get/list/count(...)`: needs the activation's cluster view.
    ClusterCall {
        method: crate::cel::functions::cluster::Method,
        args: Vec<Node>,
    },
    /// `history.byRequester/inNamespace/onWorkload/inCluster/onObject(window)`: needs the activation's
    /// history.
    HistoryCall {
        method: crate::cel::functions::history::Method,
        args: Vec<Node>,
    },
    Bridge {
        call: Arc<BridgeCall>,
        target: Option<Box<Node>>,
        args: Vec<Node>,
    },
    Comprehension(Box<Comprehension>),
    /// `cel.bind(name, init, body)`.
    Bind {
        slot: usize,
        init: Box<Node>,
        body: Box<Node>,
    },
}

impl Node {
    /// Calls `visit` on each node directly below this one, in source order.
    pub fn for_each_child(&self, visit: &mut dyn FnMut(&Node)) {
        match &self.kind {
            Kind::Const(_) | Kind::Root(_) | Kind::Variable(_) | Kind::Local(_) => {}
            Kind::AppendToLocal { elements, .. } => elements.iter().for_each(visit),
            Kind::Select { operand, .. } | Kind::Has { operand, .. } | Kind::OptSelect { operand, .. } => {
                visit(operand)
            }
            Kind::Index { operand, index } | Kind::OptIndex { operand, index } => {
                visit(operand);
                visit(index);
            }
            Kind::And(a, b) | Kind::Or(a, b) | Kind::Binary(_, a, b) => {
                visit(a);
                visit(b);
            }
            Kind::Not(a) | Kind::Neg(a) | Kind::NotStrictlyFalse(a) => visit(a),
            Kind::Cond(a, b, c) => {
                visit(a);
                visit(b);
                visit(c);
            }
            Kind::List { elements, .. } => elements.iter().for_each(visit),
            Kind::Map { entries } => {
                for (key, value, _) in entries {
                    visit(key);
                    visit(value);
                }
            }
            Kind::MatchesConst { target, .. } => visit(target),
            Kind::FindConst { target, limit, .. } => {
                visit(target);
                if let Some(limit) = limit {
                    visit(limit);
                }
            }
            Kind::Call { target, args, .. } | Kind::Bridge { target, args, .. } => {
                if let Some(target) = target {
                    visit(target);
                }
                args.iter().for_each(visit);
            }
            Kind::ClusterCall { args, .. } | Kind::HistoryCall { args, .. } => args.iter().for_each(visit),
            Kind::Comprehension(c) => {
                for node in [&c.range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result] {
                    visit(node);
                }
            }
            Kind::Bind { init, body, .. } => {
                visit(init);
                visit(body);
            }
        }
    }
}
