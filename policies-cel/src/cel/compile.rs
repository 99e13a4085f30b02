//! Compiling an expression: parse with the `cel` crate (optional syntax on), then lower its AST
//! into our [`Node`] tree, resolving names, expanding the macros the parser leaves alone
//! (`cel.bind`, two-variable comprehensions) and choosing native code or the `kube-cel` bridge
//! for every function. Everything that can be decided once is decided here, not per request.

use std::sync::Arc;

use crate::cel::ast::{BinOp, Comprehension, Kind, Node};
use crate::cel::check::{self, TypeError};
use crate::cel::functions::{self, Builtin, bridge};
use crate::cel::macros::{self, TwoVar, append_in_place, two_variable};
use crate::cel::nesting::deeper_than;
use crate::cel::parsed::{Parsed, qualified_name};
use crate::cel::position::{find_literal, find_word, parse_error};
use crate::cel::quotes::rewrite_quote_escapes;
use crate::cel::upstream::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue, operators,
};
use crate::cel::upstream::parser::Parser;
use crate::cel::{CompileError, Env, Program, Root, Value};

/// The deepest nesting the parser accepts (cel-go's default is 250; we parse recursively).
pub(crate) const MAX_RECURSION_DEPTH: u16 = 96;
/// Longest expression accepted, in bytes (Kubernetes bounds expressions at 5 KiB).
const MAX_SOURCE_LEN: usize = 64 * 1024;

/// The parser of every expression (the compiler's, and the lint's): optional syntax on, nesting
/// bounded by [`MAX_RECURSION_DEPTH`]. Check the source with [`deeper_than`] first: the parser's
/// own bound misbehaves past it (see [`crate::cel::nesting`]).
pub(crate) fn parser() -> Parser {
    Parser::new()
        .enable_optional_syntax(true)
        .max_recursion_depth(MAX_RECURSION_DEPTH)
}

pub(crate) fn compile(env: &Env, source: &str) -> Result<Program, CompileError> {
    if source.len() > MAX_SOURCE_LEN {
        return Err(CompileError::new(
            format!(
                "expression is {} bytes long; the limit is {MAX_SOURCE_LEN}",
                source.len()
            ),
            source,
            0,
            0,
        ));
    }
    if source.trim().is_empty() {
        return Err(CompileError::new("expression is empty", source, 0, 0));
    }
    if let Some(offset) = deeper_than(source, usize::from(MAX_RECURSION_DEPTH)) {
        return Err(CompileError::new(
            format!("expression nests deeper than {MAX_RECURSION_DEPTH} levels (brackets and conditionals)"),
            source,
            offset,
            1,
        ));
    }
    let rewritten = rewrite_quote_escapes(source);
    let parsed = parser()
        .parse(&rewritten.text)
        .map_err(|errors| parse_error(source, &rewritten, &errors))?;
    let result_type = check::check(env, &parsed).map_err(|e| type_error(source, e))?;
    let mut lowering = Lowering {
        env,
        source,
        scopes: Vec::new(),
        roots: 0,
        variables: Vec::new(),
    };
    let node = lowering.lower(&parsed)?;
    let Lowering {
        roots, mut variables, ..
    } = lowering;
    variables.sort_unstable();
    variables.dedup();
    Ok(Program {
        source: Arc::from(source),
        node,
        roots,
        variables,
        result_type,
    })
}

/// A type error as a compile error, its caret on the node at fault.
fn type_error(source: &str, error: TypeError) -> CompileError {
    let offset = Parsed::new(source).map_or(0, |parsed| parsed.offset_of(error.node));
    CompileError {
        requires: error.requires,
        ..CompileError::new(error.message, source, offset, 1)
    }
}

struct Lowering<'a> {
    env: &'a Env,
    source: &'a str,
    /// Names of comprehension / bind variables in scope; the index is the run-time slot.
    scopes: Vec<String>,
    roots: u16,
    variables: Vec<usize>,
}

impl Lowering<'_> {
    /// A compile error at the first place `needle` appears as a word in the source (the parser
    /// keeps no positions for a successful parse).
    fn error_at(&self, message: String, needle: &str) -> CompileError {
        let offset = find_word(self.source, needle).unwrap_or(0);
        CompileError::new(message, self.source, offset, needle.len().max(1))
    }

    fn local(&self, name: &str) -> Option<usize> {
        self.scopes.iter().rposition(|n| n == name)
    }

    /// `a.b.c` as a dotted name, when `a` is not a local or a root variable.
    fn qualified_name(&self, expr: &IdedExpr) -> Option<String> {
        qualified_name(expr, &|name| {
            self.local(name).is_none() && Root::from_name(name).is_none()
        })
    }

    fn lower(&mut self, expr: &IdedExpr) -> Result<Node, CompileError> {
        let kind = match &expr.expr {
            Expr::Literal(literal) => Kind::Const(literal_value(literal)),
            Expr::Ident(name) => self.ident(name)?,
            Expr::Select(select) => {
                let field = Arc::new(select.field.clone());
                if let Expr::Ident(base) = &select.operand.expr
                    && base == "variables"
                    && self.local(base).is_none()
                {
                    let index = self.env.variable_index(&select.field).ok_or_else(|| {
                        self.error_at(
                            format!("undeclared reference to 'variables.{}'", select.field),
                            &select.field,
                        )
                    })?;
                    self.variables.push(index);
                    return Ok(Node::new(if select.test {
                        Kind::Const(Value::Bool(true))
                    } else {
                        Kind::Variable(index)
                    }));
                }
                if !select.test
                    && let Some(qualified) = self.qualified_name(expr)
                    && let Some(value) = functions::types::type_identifier(&qualified)
                {
                    return Ok(Node::new(Kind::Const(value)));
                }
                let operand = Box::new(self.lower(&select.operand)?);
                if select.test {
                    Kind::Has { operand, field }
                } else {
                    Kind::Select { operand, field }
                }
            }
            Expr::Call(call) => self.call(call)?,
            Expr::List(list) => {
                let elements = list
                    .elements
                    .iter()
                    .map(|e| self.lower(e))
                    .collect::<Result<Vec<_>, _>>()?;
                let optional = (0..elements.len())
                    .map(|i| list.optional_indices.contains(&i))
                    .collect();
                Kind::List { elements, optional }
            }
            Expr::Map(map) => {
                let mut entries = Vec::with_capacity(map.entries.len());
                for entry in &map.entries {
                    match &entry.expr {
                        EntryExpr::MapEntry(e) => {
                            entries.push((self.lower(&e.key)?, self.lower(&e.value)?, e.optional))
                        }
                        EntryExpr::StructField(f) => {
                            return Err(
                                self.error_at("message construction is not supported".into(), &f.field)
                            );
                        }
                    }
                }
                Kind::Map { entries }
            }
            Expr::Struct(s) => {
                return Err(self.error_at(
                    format!("message construction ('{}{{...}}') is not supported", s.type_name),
                    &s.type_name,
                ));
            }
            Expr::Comprehension(c) => Kind::Comprehension(Box::new(self.comprehension(c)?)),
            Expr::Unspecified => return Err(CompileError::new("incomplete expression", self.source, 0, 0)),
        };
        Ok(Node::new(kind))
    }

    fn ident(&mut self, name: &str) -> Result<Kind, CompileError> {
        if let Some(slot) = self.local(name) {
            return Ok(Kind::Local(slot));
        }
        if let Some(root) = Root::from_name(name) {
            self.roots |= 1 << root.index();
            return Ok(Kind::Root(root));
        }
        if let Some(value) = functions::types::type_identifier(name) {
            return Ok(Kind::Const(value));
        }
        if name == "variables" {
            return Err(self.error_at("`variables` can only be used as `variables.<name>`".into(), name));
        }
        Err(self.error_at(format!("undeclared reference to '{name}'"), name))
    }

    fn comprehension(&mut self, c: &ComprehensionExpr) -> Result<Comprehension, CompileError> {
        let range = self.lower(&c.iter_range)?;
        let accu_init = self.lower(&c.accu_init)?;
        let depth = self.scopes.len();
        let accu_slot = depth;
        self.scopes.push(c.accu_var.clone());
        let iter_slot = depth + 1;
        self.scopes.push(c.iter_var.clone());
        let iter2_slot = c.iter_var2.as_ref().map(|v| {
            self.scopes.push(v.clone());
            depth + 2
        });
        let lowered = (|| {
            let loop_cond = self.lower(&c.loop_cond)?;
            let loop_step = append_in_place(self.lower(&c.loop_step)?, accu_slot);
            let result = self.lower(&c.result)?;
            Ok((loop_cond, loop_step, result))
        })();
        self.scopes.truncate(depth);
        let (loop_cond, loop_step, result) = lowered?;
        Ok(Comprehension {
            range,
            iter_slot,
            iter2_slot,
            accu_slot,
            accu_init,
            loop_cond,
            loop_step,
            result,
        })
    }

    fn args(&mut self, args: &[IdedExpr]) -> Result<Vec<Node>, CompileError> {
        args.iter().map(|a| self.lower(a)).collect()
    }

    fn boxed(&mut self, expr: &IdedExpr) -> Result<Box<Node>, CompileError> {
        Ok(Box::new(self.lower(expr)?))
    }

    fn call(&mut self, call: &CallExpr) -> Result<Kind, CompileError> {
        let args = &call.args;
        let name = call.func_name.as_str();
        if call.target.is_none()
            && let Some(kind) = self.operator(name, args)?
        {
            return Ok(kind);
        }
        // A regular expression fixed in the source is compiled once, and a bad one is a compile
        // error (as with cel-go's regex optimisation, which Kubernetes enables).
        let literal_pattern = |arg: Option<&IdedExpr>| match arg.map(|a| &a.expr) {
            Some(Expr::Literal(LiteralValue::String(pattern))) => Some(pattern.inner().to_owned()),
            _ => None,
        };
        match (name, call.target.as_deref(), args.len()) {
            ("matches", Some(_), 1) | ("matches", None, 2) => {
                let subject = match call.target.as_deref() {
                    Some(target) => target,
                    None => &args[0],
                };
                if let Some(pattern) = literal_pattern(regex_pattern(call)) {
                    let regex = self.regex(&pattern)?;
                    return Ok(Kind::MatchesConst {
                        target: self.boxed(subject)?,
                        regex,
                    });
                }
            }
            ("find" | "findAll", Some(target), _) => {
                if let Some(pattern) = literal_pattern(regex_pattern(call)) {
                    let regex = self.regex(&pattern)?;
                    let limit = match args.get(1) {
                        Some(limit) => Some(self.boxed(limit)?),
                        None => None,
                    };
                    return Ok(Kind::FindConst {
                        target: self.boxed(target)?,
                        regex,
                        all: name == "findAll",
                        limit,
                    });
                }
            }
            _ => {}
        }
        if let Some(target) = &call.target {
            if let Some(kind) = self.special_method(target, name, args)? {
                return Ok(kind);
            }
            if let Expr::Ident(base) = &target.expr
                && base == "cluster"
                && self.local(base).is_none()
            {
                let method = functions::cluster::Method::resolve(name, args.len()).ok_or_else(|| {
                    self.error_at(
                        format!(
                            "found no matching overload for 'cluster.{name}' with {} arguments",
                            args.len()
                        ),
                        name,
                    )
                })?;
                self.roots |= 1 << Root::Cluster.index();
                return Ok(Kind::ClusterCall {
                    method,
                    args: self.args(args)?,
                });
            }
            if let Expr::Ident(base) = &target.expr
                && base == "history"
                && self.local(base).is_none()
            {
                let method = functions::history::Method::resolve(name, args.len()).ok_or_else(|| {
                    self.error_at(
                        format!(
                            "found no matching overload for 'history.{name}' with {} arguments (history.byRequester, inNamespace, onWorkload, inCluster or onObject, of one window)",
                            args.len()
                        ),
                        name,
                    )
                })?;
                self.roots |= 1 << Root::History.index();
                return Ok(Kind::HistoryCall {
                    method,
                    args: self.args(args)?,
                });
            }
            // A namespaced function such as `sets.contains(a, b)` or `optional.of(x)`.
            if let Expr::Ident(prefix) = &target.expr
                && self.local(prefix).is_none()
                && Root::from_name(prefix).is_none()
            {
                let qualified = format!("{prefix}.{name}");
                return self.function(&qualified, None, args);
            }
            let target = self.lower(target)?;
            return self.function(name, Some(target), args);
        }
        if name == "dyn" && args.len() == 1 {
            return Ok(self.lower(&args[0])?.kind);
        }
        self.function(name, None, args)
    }

    fn regex(&self, pattern: &str) -> Result<Arc<regex::Regex>, CompileError> {
        regex::Regex::new(pattern).map(Arc::new).map_err(|e| {
            let offset = find_literal(self.source, pattern).unwrap_or(0);
            CompileError::new(
                format!(
                    "invalid regular expression '{pattern}': {}",
                    regex_error_summary(&e)
                ),
                self.source,
                offset,
                pattern.len() + 2,
            )
        })
    }

    /// Operators the parser produces as calls.
    fn operator(&mut self, name: &str, args: &[IdedExpr]) -> Result<Option<Kind>, CompileError> {
        let binary = |op| -> Option<BinOp> { Some(op) };
        let op = match (name, args.len()) {
            (operators::CONDITIONAL, 3) => {
                return Ok(Some(Kind::Cond(
                    self.boxed(&args[0])?,
                    self.boxed(&args[1])?,
                    self.boxed(&args[2])?,
                )));
            }
            (operators::LOGICAL_AND, 2) => {
                return Ok(Some(Kind::And(self.boxed(&args[0])?, self.boxed(&args[1])?)));
            }
            (operators::LOGICAL_OR, 2) => {
                return Ok(Some(Kind::Or(self.boxed(&args[0])?, self.boxed(&args[1])?)));
            }
            (operators::LOGICAL_NOT, 1) => return Ok(Some(Kind::Not(self.boxed(&args[0])?))),
            (operators::NEGATE, 1) => return Ok(Some(negate(self.lower(&args[0])?))),
            (operators::NOT_STRICTLY_FALSE, 1) => {
                return Ok(Some(Kind::NotStrictlyFalse(self.boxed(&args[0])?)));
            }
            (operators::INDEX, 2) => {
                return Ok(Some(Kind::Index {
                    operand: self.boxed(&args[0])?,
                    index: self.boxed(&args[1])?,
                }));
            }
            (operators::OPT_INDEX, 2) => {
                return Ok(Some(Kind::OptIndex {
                    operand: self.boxed(&args[0])?,
                    index: self.boxed(&args[1])?,
                }));
            }
            (operators::OPT_SELECT, 2) => {
                let Expr::Literal(LiteralValue::String(field)) = &args[1].expr else {
                    return Err(CompileError::new(
                        "invalid optional field selection",
                        self.source,
                        0,
                        0,
                    ));
                };
                let field = Arc::new(field.inner().to_owned());
                return Ok(Some(Kind::OptSelect {
                    operand: self.boxed(&args[0])?,
                    field,
                }));
            }
            (operators::ADD, 2) => binary(BinOp::Add),
            (operators::SUBSTRACT, 2) => binary(BinOp::Sub),
            (operators::MULTIPLY, 2) => binary(BinOp::Mul),
            (operators::DIVIDE, 2) => binary(BinOp::Div),
            (operators::MODULO, 2) => binary(BinOp::Rem),
            (operators::EQUALS, 2) => binary(BinOp::Eq),
            (operators::NOT_EQUALS, 2) => binary(BinOp::Ne),
            (operators::LESS, 2) => binary(BinOp::Lt),
            (operators::LESS_EQUALS, 2) => binary(BinOp::Le),
            (operators::GREATER, 2) => binary(BinOp::Gt),
            (operators::GREATER_EQUALS, 2) => binary(BinOp::Ge),
            (operators::IN, 2) => binary(BinOp::In),
            _ => None,
        };
        match op {
            Some(op) => Ok(Some(Kind::Binary(
                op,
                self.boxed(&args[0])?,
                self.boxed(&args[1])?,
            ))),
            None => Ok(None),
        }
    }

    /// Macros the `cel` parser does not expand: `cel.bind` and the two-variable comprehensions.
    fn special_method(
        &mut self,
        target: &IdedExpr,
        name: &str,
        args: &[IdedExpr],
    ) -> Result<Option<Kind>, CompileError> {
        if name == "bind"
            && args.len() == 3
            && matches!(&target.expr, Expr::Ident(t) if t == "cel" && self.local(t).is_none())
        {
            let variable = self.ident_arg(&args[0], "cel.bind")?;
            let init = self.boxed(&args[1])?;
            let slot = self.scopes.len();
            self.scopes.push(variable);
            let body = self.lower(&args[2]);
            self.scopes.truncate(slot);
            return Ok(Some(Kind::Bind {
                slot,
                init,
                body: Box::new(body?),
            }));
        }
        if matches!(name, "optMap" | "optFlatMap") && args.len() == 2 {
            return self.opt_map(target, name, args).map(Some);
        }
        if name == "sortBy" && args.len() == 2 {
            return self.sort_by(target, args).map(Some);
        }
        let shape = match (name, args.len()) {
            ("all", 3) => TwoVar::All,
            ("exists", 3) => TwoVar::Exists,
            ("existsOne" | "exists_one", 3) => TwoVar::ExistsOne,
            ("transformList", 3 | 4) => TwoVar::TransformList,
            ("transformMap", 3 | 4) => TwoVar::TransformMap,
            ("transformMapEntry", 3 | 4) => TwoVar::TransformMapEntry,
            _ => return Ok(None),
        };
        let first = self.ident_arg(&args[0], name)?;
        let second = self.ident_arg(&args[1], name)?;
        let range = self.lower(target)?;
        let depth = self.scopes.len();
        let (accu_slot, iter_slot, iter2_slot) = (depth, depth + 1, depth + 2);
        self.scopes.extend(["@result".to_owned(), first, second]);
        let body = (|| {
            let filter = if args.len() == 4 {
                Some(self.lower(&args[2])?)
            } else {
                None
            };
            let step = self.lower(&args[args.len() - 1])?;
            Ok((filter, step))
        })();
        self.scopes.truncate(depth);
        let (filter, step) = body?;
        Ok(Some(Kind::Comprehension(Box::new(two_variable(
            shape, range, accu_slot, iter_slot, iter2_slot, filter, step,
        )))))
    }

    /// `opt.optMap(v, expr)` and `opt.optFlatMap(v, expr)` (cel-go's optional library): the
    /// optional is evaluated once into a hidden slot, `v` is bound to its value.
    fn opt_map(&mut self, target: &IdedExpr, name: &str, args: &[IdedExpr]) -> Result<Kind, CompileError> {
        let variable = self.simple_name(&args[0], name)?;
        let optional = self.boxed(target)?;
        let holder = self.scopes.len();
        self.scopes.extend(["@optional".to_owned(), variable]);
        let body = self.lower(&args[1]);
        self.scopes.truncate(holder);
        Ok(macros::opt_map(holder, optional, body?, name == "optFlatMap"))
    }

    /// `list.sortBy(v, key)` (cel-go's lists extension, version 2): the list is evaluated once
    /// into a hidden slot, the keys are computed as `map(v, key)` would, and the list is sorted
    /// by them.
    fn sort_by(&mut self, target: &IdedExpr, args: &[IdedExpr]) -> Result<Kind, CompileError> {
        let variable = self.simple_name(&args[0], "sortBy")?;
        let list = self.boxed(target)?;
        let holder = self.scopes.len();
        self.scopes.extend([
            "@sortBy_input".to_owned(),
            "@result".to_owned(),
            "@index".to_owned(),
            variable,
        ]);
        let key = self.lower(&args[1]);
        self.scopes.truncate(holder);
        Ok(macros::sort_by(holder, list, key?))
    }

    /// The variable argument of `optMap`, `optFlatMap` and `sortBy`, worded as cel-go words it.
    fn simple_name(&self, expr: &IdedExpr, function: &str) -> Result<String, CompileError> {
        match &expr.expr {
            Expr::Ident(name) => Ok(name.clone()),
            _ => Err(self.error_at(
                format!("{function}() variable name must be a simple identifier"),
                function,
            )),
        }
    }

    fn ident_arg(&self, expr: &IdedExpr, function: &str) -> Result<String, CompileError> {
        match &expr.expr {
            Expr::Ident(name) => Ok(name.clone()),
            _ => Err(self.error_at(format!("{function}: argument must be a simple name"), function)),
        }
    }

    fn function(
        &mut self,
        name: &str,
        target: Option<Node>,
        args: &[IdedExpr],
    ) -> Result<Kind, CompileError> {
        let lowered = self.args(args)?;
        if let Some(builtin) = Builtin::resolve(name, target.is_some(), lowered.len()) {
            return Ok(Kind::Call {
                builtin,
                target: target.map(Box::new),
                args: lowered,
            });
        }
        if functions::bridge::is_known(name) {
            let call = bridge::BridgeCall::new(name, target.is_some(), lowered.len());
            return Ok(Kind::Bridge {
                call: Arc::new(call),
                target: target.map(Box::new),
                args: lowered,
            });
        }
        let short = name.rsplit('.').next().unwrap_or(name);
        if Builtin::is_declared(name) {
            let form = if target.is_some() { "method" } else { "function" };
            let count = lowered.len();
            let plural = if count == 1 { "" } else { "s" };
            return Err(self.error_at(
                format!("found no matching overload for {form} '{name}' with {count} argument{plural}"),
                short,
            ));
        }
        Err(self.error_at(format!("undeclared reference to '{name}'"), short))
    }
}

fn negate(operand: Node) -> Kind {
    match operand.kind {
        Kind::Const(Value::Int(i)) if i != i64::MIN => Kind::Const(Value::Int(-i)),
        Kind::Const(Value::Float(f)) => Kind::Const(Value::Float(-f)),
        kind => Kind::Neg(Box::new(Node::new(kind))),
    }
}

fn literal_value(literal: &LiteralValue) -> Value {
    match literal {
        LiteralValue::Boolean(b) => Value::Bool(*b.inner()),
        LiteralValue::Bytes(b) => Value::Bytes(Arc::new(b.inner().to_vec())),
        LiteralValue::Double(d) => Value::Float(*d.inner()),
        LiteralValue::Int(i) => Value::Int(*i.inner()),
        LiteralValue::Null => Value::Null,
        LiteralValue::String(s) => Value::String(Arc::new(s.inner().to_owned())),
        LiteralValue::UInt(u) => Value::UInt(*u.inner()),
    }
}

/// The last line of a `regex` error ("unclosed character class"), without the pattern echo.
pub(crate) fn regex_error_summary(error: &regex::Error) -> String {
    let text = error.to_string();
    let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(&text);
    last.trim().trim_start_matches("error: ").to_owned()
}

/// The pattern argument of a regular-expression call: `s.matches(p)`, `matches(s, p)`,
/// `s.find(p)`, `s.findAll(p)`, `s.findAll(p, n)`.
pub(crate) fn regex_pattern(call: &CallExpr) -> Option<&IdedExpr> {
    match (call.func_name.as_str(), call.target.is_some(), call.args.len()) {
        ("matches" | "find", true, 1) | ("findAll", true, 1 | 2) => call.args.first(),
        ("matches", false, 2) => call.args.get(1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_patterns_are_compiled_once_for_every_regex_function() {
        let env = Env::admission();
        let kind = |source: &str| compile(&env, source).map(|program| program.node.kind);
        assert!(matches!(kind("'a'.matches('^a')"), Ok(Kind::MatchesConst { .. })));
        assert!(matches!(
            kind("matches('a', '^a')"),
            Ok(Kind::MatchesConst { .. })
        ));
        assert!(matches!(
            kind("'a1'.find('[0-9]')"),
            Ok(Kind::FindConst {
                all: false,
                limit: None,
                ..
            })
        ));
        assert!(matches!(
            kind("'a1'.findAll('[0-9]', 2)"),
            Ok(Kind::FindConst {
                all: true,
                limit: Some(_),
                ..
            })
        ));
        // A pattern known only at run time goes to the library, compiled on every call.
        assert!(matches!(kind("'a1'.find(string(1))"), Ok(Kind::Bridge { .. })));
    }
}
