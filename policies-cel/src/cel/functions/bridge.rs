//! Calling the Kubernetes CEL libraries of `kube-cel` (and the `cel` crate's own library) from
//! our interpreter.
//!
//! Each call site is turned, at compile time, into a `cel` call expression whose receiver and
//! arguments are identifiers (`@t`, `@0`, `@1`, ...). At run time the evaluated values are bound
//! to those names in a child of one shared library context, and `cel` dispatches the call. The
//! library context is built once per process.

use std::sync::LazyLock;

use kube_cel::KubeCelExt;

use crate::cel::upstream::common::ast::{CallExpr, Expr, IdedExpr};
use crate::cel::upstream::{Context, ExecutionError};
use crate::cel::{Budget, EvalError, Value};

/// The `cel` context holding every library function; shared, read-only.
static LIBRARY: LazyLock<Context<'static>> = LazyLock::new(|| Context::default().with_all());

const ARG_NAMES: [&str; 8] = ["@0", "@1", "@2", "@3", "@4", "@5", "@6", "@7"];

/// Function names the bridge calls: of the `cel` crate's library and `kube-cel`'s, those the
/// Kubernetes environment declares (the type checker refuses the others), less what is
/// implemented natively (time accessors, `matches`, `format`, `sum`, the string positions,
/// and the URL, semver and named-format libraries: see their modules for what `kube-cel` gets
/// wrong).
const KNOWN: &[&str] = &[
    // cel crate
    "max",
    "min",
    "string",
    "bytes",
    "double",
    "int",
    "uint",
    "duration",
    "timestamp",
    // kube-cel: strings
    "lowerAscii",
    "upperAscii",
    "replace",
    "split",
    "trim",
    "join",
    "reverse",
    "strings.quote",
    // lists
    "isSorted",
    "distinct",
    "lists.range",
    // sets
    "sets.contains",
    "sets.equivalent",
    "sets.intersects",
    // regex
    "find",
    "findAll",
    // ip / cidr
    "ip",
    "cidr",
    "isIP",
    "isCIDR",
    "ip.isCanonical",
    "family",
    "isUnspecified",
    "isLoopback",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isGlobalUnicast",
    "containsIP",
    "containsCIDR",
    "masked",
    "prefixLength",
    // quantity
    "quantity",
    "isQuantity",
    "sign",
    "isInteger",
    "asInteger",
    "asApproximateFloat",
    "add",
    "sub",
    "isGreaterThan",
    "isLessThan",
    "compareTo",
];

/// True when `name` (possibly namespaced, e.g. `sets.contains`) is a library function.
pub(crate) fn is_known(name: &str) -> bool {
    KNOWN.contains(&name)
}

/// One library call site, prepared at compile time.
#[derive(Debug)]
pub(crate) struct BridgeCall {
    name: String,
    expr: IdedExpr,
}

impl BridgeCall {
    /// A call of `name` with a receiver (`x.f(...)`) or without, taking `argc` arguments.
    pub(crate) fn new(name: &str, method: bool, argc: usize) -> Self {
        let ident = |name: &str| {
            Box::new(IdedExpr {
                id: 0,
                expr: Expr::Ident(name.to_owned()),
            })
        };
        let (func_name, target) = match name.split_once('.') {
            Some((namespace, function)) => (function.to_owned(), Some(ident(namespace))),
            None if method => (name.to_owned(), Some(ident("@t"))),
            None => (name.to_owned(), None),
        };
        let args = ARG_NAMES.iter().take(argc).map(|a| *ident(a)).collect();
        let expr = IdedExpr {
            id: 0,
            expr: Expr::Call(CallExpr {
                func_name,
                target,
                args,
            }),
        };
        Self {
            name: name.to_owned(),
            expr,
        }
    }

    /// Calls the function on evaluated values.
    pub(crate) fn call(
        &self,
        target: Option<Value>,
        args: Vec<Value>,
        budget: &Budget,
    ) -> Result<Value, EvalError> {
        if args.len() > ARG_NAMES.len() {
            return Err(EvalError::function(&self.name, "too many arguments"));
        }
        budget.charge(1 + args.iter().chain(target.iter()).map(weight).sum::<u64>())?;
        // What the call will build, charged before it is built: the budget must stop an
        // expression before its allocation, not after (`lists.range(1e15)` would abort).
        budget.charge(output_weight(&self.name, target.as_ref(), &args))?;
        let mut context = LIBRARY.new_inner_scope();
        if let Some(target) = target {
            context.add_variable_from_value("@t", target);
        }
        for (name, value) in ARG_NAMES.iter().zip(args) {
            context.add_variable_from_value(*name, value);
        }
        Value::resolve(&self.expr, &context).map_err(|e| self.error(e))
    }

    fn error(&self, error: ExecutionError) -> EvalError {
        match error {
            ExecutionError::FunctionError { message, .. } => EvalError::function(&self.name, message),
            ExecutionError::NoSuchOverload | ExecutionError::UnsupportedTargetType { .. } => {
                EvalError::overload(format!("{} with these argument types", self.name))
            }
            other => EvalError::function(&self.name, other.to_string()),
        }
    }
}

/// Cost of what a call builds beyond the size of its inputs (already charged by [`weight`]):
/// `lists.range(n)` builds `n` elements from one integer, and `replace` multiplies its
/// replacement by the matches. The other functions build at most a few times their inputs.
fn output_weight(name: &str, target: Option<&Value>, args: &[Value]) -> u64 {
    match (name, target, args) {
        ("lists.range", _, [Value::Int(n), ..]) => u64::try_from(*n).unwrap_or(0),
        ("replace", Some(Value::String(text)), [Value::String(old), Value::String(new), rest @ ..]) => {
            // Every match (at most one per byte of the text, and one more for an empty `old`)
            // is replaced by `new`; a count bounds them further.
            let matches = (text.len() / old.len().max(1)) as u64 + 1;
            let matches = match rest.first() {
                Some(Value::Int(count)) if *count >= 0 => matches.min(*count as u64),
                _ => matches,
            };
            matches.saturating_mul(new.len() as u64) / 16
        }
        _ => 0,
    }
}

/// Cost of handing a value to the library (it is copied into the `cel` crate's representation).
fn weight(value: &Value) -> u64 {
    match value {
        Value::String(s) => s.len() as u64 / 16,
        Value::Bytes(b) => b.len() as u64 / 16,
        Value::List(l) => l.len() as u64,
        Value::Map(m) => m.map.len() as u64,
        _ => 0,
    }
}
