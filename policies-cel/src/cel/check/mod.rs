//! The type checker kube-apiserver runs when a policy is created, run on every expression
//! before it is lowered: calls must match an overload of the Kubernetes environment
//! ([`decls`]), list and map literals must be homogeneous, a ternary's branches must agree,
//! comprehensions must range over a list or a map, field selections must exist on declared
//! object types ([`objects`]). `object`, `oldObject` and `params` are `dyn` (as Kubernetes
//! declares them), so what depends on an object's schema is left to evaluation. The literals
//! below a call of `format` may mix types, and a constant format string's clauses are checked
//! against a literal argument list ([`format`]), as cel-go's strings library does. Only the
//! functions of the environment's Kubernetes version exist ([`decls`]).
//!
//! Errors carry cel-go's wording and the id of the node at fault; the first one is reported.

mod decls;
mod format;
mod objects;
mod types;

pub use types::ExprType;

use crate::cel::check::decls::{PARAMS_PER_OVERLOAD, overloads};
use crate::cel::check::format::NodeTypes;
use crate::cel::check::types::Substitution;
use crate::cel::upstream::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue, operators,
};
use crate::cel::{Env, KubernetesVersion, Requirement, Root};

/// The iteration variable name cel-go's macros keep for their accumulator.
const ACCUMULATOR: &str = "__result__";

/// A type error: what is wrong, and the node where it is.
#[derive(Debug)]
pub(crate) struct TypeError {
    pub(crate) message: String,
    pub(crate) node: u64,
    /// Set when the call names a function of a later Kubernetes version.
    pub(crate) requires: Option<Requirement>,
}

/// The function cel-go's strings library exempts from the homogeneous-literal rule.
const FORMAT: &str = "format";

/// The type of `expr` in `env`, or its first type error.
pub(crate) fn check(env: &Env, expr: &IdedExpr) -> Result<ExprType, TypeError> {
    let mut checker = Checker {
        env,
        scopes: Vec::new(),
        substitution: Substitution::default(),
        next_param: PARAMS_PER_OVERLOAD,
        in_format: 0,
        recorded: None,
    };
    let t = checker.check(expr)?;
    Ok(checker.substitution.apply(&t, true))
}

struct Checker<'a> {
    env: &'a Env,
    /// Comprehension, bind and macro variables in scope, innermost last.
    scopes: Vec<(String, ExprType)>,
    substitution: Substitution,
    next_param: u32,
    /// How many calls of `format` enclose the node being checked: list and map literals below
    /// one may mix types.
    in_format: u32,
    /// The type of every node checked, while a constant format string's argument list is.
    recorded: Option<NodeTypes>,
}

fn error(node: &IdedExpr, message: String) -> TypeError {
    TypeError {
        message,
        node: node.id,
        requires: None,
    }
}

impl Checker<'_> {
    fn local(&self, name: &str) -> Option<&ExprType> {
        self.scopes.iter().rev().find(|(n, _)| n == name).map(|(_, t)| t)
    }

    fn is_global(&self, name: &str) -> bool {
        self.local(name).is_none()
    }

    /// Whether `target` names a namespace (`sets` in `sets.contains(...)`) rather than a value.
    fn is_namespace(&self, target: &IdedExpr) -> bool {
        matches!(&target.expr, Expr::Ident(name) if self.is_global(name) && Root::from_name(name).is_none())
    }

    fn fresh(&mut self) -> ExprType {
        let param = ExprType::Param(self.next_param);
        self.next_param += 1;
        param
    }

    /// `t` as known so far.
    fn resolved(&self, t: &ExprType) -> ExprType {
        self.substitution.apply(t, false)
    }

    /// `t` as errors print it (free parameters as `dyn`).
    fn shown(&self, t: &ExprType) -> String {
        self.substitution.apply(t, true).to_string()
    }

    fn expect(&mut self, node: &IdedExpr, actual: &ExprType, expected: &ExprType) -> Result<(), TypeError> {
        if self.substitution.assign(actual, expected) {
            return Ok(());
        }
        Err(error(
            node,
            format!(
                "expected type '{}' but found '{}'",
                self.shown(expected),
                self.shown(actual)
            ),
        ))
    }

    fn check(&mut self, expr: &IdedExpr) -> Result<ExprType, TypeError> {
        let t = self.check_node(expr)?;
        if let Some(recorded) = &mut self.recorded {
            recorded.insert(expr.id, t.clone());
        }
        Ok(t)
    }

    fn check_node(&mut self, expr: &IdedExpr) -> Result<ExprType, TypeError> {
        match &expr.expr {
            Expr::Literal(literal) => Ok(literal_type(literal)),
            Expr::Ident(name) => self.ident(expr, name),
            Expr::Select(select) => {
                if let Some(t) = self.qualified_select(expr) {
                    return Ok(if select.test { ExprType::Bool } else { t });
                }
                let operand = self.check(&select.operand)?;
                let t = self.select_field(expr, &operand, &select.field, false)?;
                Ok(if select.test { ExprType::Bool } else { t })
            }
            Expr::Call(call) => self.call(expr, call),
            Expr::List(list) => {
                let mut element: Option<ExprType> = None;
                for (i, item) in list.elements.iter().enumerate() {
                    let mut t = self.check(item)?;
                    if list.optional_indices.contains(&i) {
                        t = self.unwrap_optional(item, t)?;
                    }
                    element = Some(self.join(item, element, t)?);
                }
                let element = match element {
                    Some(t) => t,
                    None => self.fresh(),
                };
                Ok(ExprType::list(element))
            }
            Expr::Map(map) => {
                let (mut key, mut value) = (None, None);
                for entry in &map.entries {
                    let EntryExpr::MapEntry(entry) = &entry.expr else {
                        // Message construction: refused when the expression is lowered.
                        return Ok(ExprType::Dyn);
                    };
                    let k = self.check(&entry.key)?;
                    key = Some(self.join(&entry.key, key, k)?);
                    let mut v = self.check(&entry.value)?;
                    if entry.optional {
                        v = self.unwrap_optional(&entry.value, v)?;
                    }
                    value = Some(self.join(&entry.value, value, v)?);
                }
                let key = match key {
                    Some(t) => t,
                    None => self.fresh(),
                };
                let value = match value {
                    Some(t) => t,
                    None => self.fresh(),
                };
                Ok(ExprType::map(key, value))
            }
            Expr::Comprehension(c) => self.comprehension(c),
            // Message construction is refused when the expression is lowered.
            Expr::Struct(_) | Expr::Unspecified => Ok(ExprType::Dyn),
        }
    }

    fn ident(&mut self, expr: &IdedExpr, name: &str) -> Result<ExprType, TypeError> {
        if let Some(t) = self.local(name) {
            return Ok(t.clone());
        }
        if let Some(root) = Root::from_name(name) {
            return Ok(root_type(root));
        }
        if let Some(t) = type_identifier(name) {
            return Ok(ExprType::Type(Box::new(t)));
        }
        if name == "variables" {
            // Refused with its own message when the expression is lowered.
            return Ok(ExprType::Dyn);
        }
        Err(error(expr, format!("undeclared reference to '{name}'")))
    }

    /// A selection that names something whole: `variables.x`, `authorizer.requestResource`,
    /// or a qualified type name (`net.IP`).
    fn qualified_select(&self, expr: &IdedExpr) -> Option<ExprType> {
        let Expr::Select(select) = &expr.expr else {
            return None;
        };
        if let Expr::Ident(base) = &select.operand.expr
            && self.is_global(base)
        {
            match (base.as_str(), select.field.as_str()) {
                ("variables", field) => {
                    // An undeclared variable is refused when the expression is lowered.
                    return Some(
                        self.env
                            .variable_index(field)
                            .map_or(ExprType::Dyn, |i| self.env.variable_type(i).clone()),
                    );
                }
                ("authorizer", "requestResource") => return decls::opaque("ResourceCheck"),
                _ => {}
            }
        }
        if select.test {
            return None;
        }
        let name = self.qualified_name(expr)?;
        type_identifier(&name).map(|t| ExprType::Type(Box::new(t)))
    }

    fn qualified_name(&self, expr: &IdedExpr) -> Option<String> {
        crate::cel::parsed::qualified_name(expr, &|name| {
            self.is_global(name) && Root::from_name(name).is_none()
        })
    }

    /// The type of `operand.field` (`operand.?field` when `optional`).
    fn select_field(
        &mut self,
        expr: &IdedExpr,
        operand: &ExprType,
        field: &str,
        optional: bool,
    ) -> Result<ExprType, TypeError> {
        let operand = self.resolved(operand);
        let (target, was_optional) = match operand.optional_value() {
            Some(value) => (value.clone(), true),
            None => (operand, false),
        };
        let t = match &target {
            ExprType::Map(_, value) => (**value).clone(),
            ExprType::Object(object) => {
                (object.field)(field).ok_or_else(|| error(expr, format!("undefined field '{field}'")))?
            }
            ExprType::Param(_) => {
                self.substitution.assign(&ExprType::Dyn, &target);
                ExprType::Dyn
            }
            ExprType::Dyn | ExprType::Error => ExprType::Dyn,
            other => {
                return Err(error(
                    expr,
                    format!("type '{}' does not support field selection", self.shown(other)),
                ));
            }
        };
        Ok(if was_optional || optional {
            ExprType::optional(t)
        } else {
            t
        })
    }

    /// The value type of an optional element or entry (`[?x]`, `{?k: v}`).
    fn unwrap_optional(&mut self, node: &IdedExpr, t: ExprType) -> Result<ExprType, TypeError> {
        let t = self.resolved(&t);
        match t.optional_value() {
            Some(value) => Ok(value.clone()),
            None if t.is_dyn_or_error() => Ok(t),
            None => Err(error(
                node,
                format!(
                    "expected type '{}' but found '{}'",
                    ExprType::optional(self.substitution.apply(&t, true)),
                    self.shown(&t)
                ),
            )),
        }
    }

    /// The element type of a literal after one more element: the elements must agree
    /// (Kubernetes enables homogeneous aggregate literals), except below a call of `format`,
    /// where elements that disagree make the literal's elements `dyn`.
    fn join(
        &mut self,
        node: &IdedExpr,
        previous: Option<ExprType>,
        current: ExprType,
    ) -> Result<ExprType, TypeError> {
        let Some(previous) = previous else {
            return Ok(current);
        };
        if self.substitution.assign(&previous, &current) {
            return Ok(types::most_general(&previous, &current));
        }
        if self.in_format > 0 || self.env.mixed_literals() {
            return Ok(ExprType::Dyn);
        }
        Err(error(
            node,
            format!(
                "expected type '{}' but found '{}'",
                self.shown(&previous),
                self.shown(&current)
            ),
        ))
    }

    fn comprehension(&mut self, c: &ComprehensionExpr) -> Result<ExprType, TypeError> {
        let range = self.check(&c.iter_range)?;
        let accu = self.check(&c.accu_init)?;
        if c.iter_var == ACCUMULATOR {
            return Err(error(
                &c.iter_range,
                "iteration variable overwrites accumulator variable".into(),
            ));
        }
        let (first, second) = self.range_variables(&c.iter_range, &range, c.iter_var2.is_some())?;
        let depth = self.scopes.len();
        self.scopes.push((c.accu_var.clone(), accu.clone()));
        self.scopes.push((c.iter_var.clone(), first));
        if let Some(var2) = &c.iter_var2 {
            self.scopes.push((var2.clone(), second));
        }
        let result = (|| {
            let condition = self.check(&c.loop_cond)?;
            self.expect(&c.loop_cond, &condition, &ExprType::Bool)?;
            let step = self.check(&c.loop_step)?;
            self.expect(&c.loop_step, &step, &accu)?;
            self.scopes.truncate(depth + 1);
            self.check(&c.result)
        })();
        self.scopes.truncate(depth);
        Ok(self.resolved(&result?))
    }

    /// The types of the iteration variables over `range`: element (or index and element) of
    /// a list, key (or key and value) of a map, `dyn` over `dyn`.
    fn range_variables(
        &mut self,
        node: &IdedExpr,
        range: &ExprType,
        two: bool,
    ) -> Result<(ExprType, ExprType), TypeError> {
        match self.resolved(range) {
            ExprType::List(element) if two => Ok((ExprType::Int, *element)),
            ExprType::List(element) => Ok((*element, ExprType::Dyn)),
            ExprType::Map(key, value) => Ok((*key, *value)),
            t @ ExprType::Param(_) => {
                self.substitution.assign(&ExprType::Dyn, &t);
                Ok((ExprType::Dyn, ExprType::Dyn))
            }
            ExprType::Dyn | ExprType::Error => Ok((ExprType::Dyn, ExprType::Dyn)),
            other => Err(error(
                node,
                format!(
                    "expression of type '{}' cannot be range of a comprehension (must be list, map, or dynamic)",
                    self.shown(&other)
                ),
            )),
        }
    }

    fn call(&mut self, expr: &IdedExpr, call: &CallExpr) -> Result<ExprType, TypeError> {
        if call.func_name != FORMAT {
            return self.call_of(expr, call);
        }
        // cel-go exempts every list and map literal with a `format` call among its ancestors.
        self.in_format += 1;
        let result = match (call.target.as_deref(), call.args.as_slice()) {
            (Some(target), [list]) if !self.is_namespace(target) => self.format(expr, target, list),
            _ => self.call_of(expr, call),
        };
        self.in_format -= 1;
        result
    }

    /// `target.format(list)`; when the format string is a constant and the list a literal, the
    /// clauses are checked against the list's elements.
    fn format(&mut self, expr: &IdedExpr, target: &IdedExpr, list: &IdedExpr) -> Result<ExprType, TypeError> {
        let receiver = self.check(target)?;
        let literal = match (&target.expr, &list.expr) {
            (Expr::Literal(LiteralValue::String(template)), Expr::List(elements)) => {
                Some((template.inner(), elements))
            }
            _ => None,
        };
        let outer = literal.is_some().then(|| self.recorded.replace(NodeTypes::new()));
        let argument = self.check(list);
        let types = match outer {
            Some(outer) => std::mem::replace(&mut self.recorded, outer),
            None => None,
        };
        let t = self.resolve(expr, FORMAT, Some(receiver), vec![argument?])?;
        if let (Some((template, elements)), Some(types)) = (literal, types) {
            let types: NodeTypes = types
                .into_iter()
                .map(|(id, t)| (id, self.substitution.apply(&t, true)))
                .collect();
            format::validate(expr, template, &elements.elements, &types)?;
        }
        Ok(t)
    }

    fn call_of(&mut self, expr: &IdedExpr, call: &CallExpr) -> Result<ExprType, TypeError> {
        let name = call.func_name.as_str();
        let args = &call.args;
        let Some(target) = call.target.as_deref() else {
            return match name {
                operators::LOGICAL_AND | operators::LOGICAL_OR => {
                    for arg in args {
                        let t = self.check(arg)?;
                        self.expect(arg, &t, &ExprType::Bool)?;
                    }
                    Ok(ExprType::Bool)
                }
                operators::OPT_SELECT => {
                    let (Some(operand), Some(field)) = (args.first(), args.get(1)) else {
                        return Ok(ExprType::Dyn);
                    };
                    let Expr::Literal(LiteralValue::String(field)) = &field.expr else {
                        return Ok(ExprType::Dyn);
                    };
                    let operand_type = self.check(operand)?;
                    self.select_field(expr, &operand_type, field.inner(), true)
                }
                _ => {
                    let types = self.check_all(args)?;
                    self.resolve(expr, name, None, types)
                }
            };
        };
        if let Some(t) = self.macro_call(expr, target, name, args)? {
            return Ok(t);
        }
        if let Expr::Ident(prefix) = &target.expr
            && self.is_global(prefix)
        {
            if prefix == "cluster" {
                // Suture's look-ups answer cluster objects, as dyn; their arity is checked when
                // the expression is lowered.
                self.check_all(args)?;
                return Ok(ExprType::Dyn);
            }
            if prefix == "history" {
                // A window (a duration's text or a duration) in, a summary of int figures out;
                // the method's name and arity are checked when the expression is lowered.
                for arg in args {
                    let t = self.check(arg)?;
                    if !matches!(
                        self.resolved(&t),
                        ExprType::String | ExprType::Duration | ExprType::Dyn
                    ) {
                        let shown = self.shown(&t);
                        return Err(error(
                            expr,
                            format!(
                                "found no matching overload for 'history.{name}' applied to '({shown})' (a window: '10m' or duration('10m'))"
                            ),
                        ));
                    }
                }
                return Ok(ExprType::map(ExprType::String, ExprType::Int));
            }
            if Root::from_name(prefix).is_none() {
                let types = self.check_all(args)?;
                return self.resolve(expr, &format!("{prefix}.{name}"), None, types);
            }
        }
        let receiver = self.check(target)?;
        let types = self.check_all(args)?;
        self.resolve(expr, name, Some(receiver), types)
    }

    fn check_all(&mut self, args: &[IdedExpr]) -> Result<Vec<ExprType>, TypeError> {
        args.iter().map(|a| self.check(a)).collect()
    }

    /// The type of a call of `name` on these argument types: the result of every overload
    /// they fit (`dyn` when those disagree), or cel-go's "no matching overload".
    fn resolve(
        &mut self,
        expr: &IdedExpr,
        name: &str,
        receiver: Option<ExprType>,
        args: Vec<ExprType>,
    ) -> Result<ExprType, TypeError> {
        let Some(candidates) = overloads(name) else {
            return Err(error(expr, format!("undeclared reference to '{name}'")));
        };
        let version = self.env.version();
        if let Some(since) = introduced_after(candidates, version) {
            return Err(self.newer(expr, name, since));
        }
        let member = receiver.is_some();
        let all: Vec<ExprType> = receiver.iter().cloned().chain(args.iter().cloned()).collect();
        let mut result: Option<ExprType> = None;
        for overload in candidates {
            if overload.member != member || overload.params.len() != all.len() || overload.since > version {
                continue;
            }
            let base = self.next_param;
            self.next_param += PARAMS_PER_OVERLOAD;
            let params: Vec<ExprType> = overload.params.iter().map(|p| shift(p, base)).collect();
            if self.substitution.assign_all(&all, &params) {
                let t = self.resolved(&shift(&overload.result, base));
                result = Some(match result {
                    None => t,
                    Some(ExprType::Dyn) => ExprType::Dyn,
                    Some(previous) if previous == t => previous,
                    Some(_) => ExprType::Dyn,
                });
            }
        }
        result.ok_or_else(|| {
            let shown: Vec<String> = all.iter().map(|t| self.shown(t)).collect();
            let signature = if member {
                format!("{}.({})", shown[0], shown[1..].join(", "))
            } else {
                format!("({})", shown.join(", "))
            };
            error(
                expr,
                format!("found no matching overload for '{name}' applied to '{signature}'"),
            )
        })
    }

    /// The error for `name`, which Kubernetes `since` introduced, after the environment's version.
    fn newer(&self, expr: &IdedExpr, name: &str, since: KubernetesVersion) -> TypeError {
        TypeError {
            message: format!(
                "undeclared reference to '{name}': Kubernetes {since} introduced it, the target is {}",
                self.env.version()
            ),
            node: expr.id,
            requires: Some(Requirement {
                function: name.to_owned(),
                version: since,
            }),
        }
    }

    /// The macros the parser leaves as calls: `cel.bind`, `optMap`, `optFlatMap`, `sortBy` and
    /// the two-variable comprehensions; `None` for any other call.
    fn macro_call(
        &mut self,
        expr: &IdedExpr,
        target: &IdedExpr,
        name: &str,
        args: &[IdedExpr],
    ) -> Result<Option<ExprType>, TypeError> {
        let variable = |i: usize| match args.get(i).map(|a| &a.expr) {
            Some(Expr::Ident(v)) => Some(v.clone()),
            _ => None,
        };
        let is_cel = matches!(&target.expr, Expr::Ident(t) if t == "cel" && self.is_global(t));
        // A macro whose variable is not a simple name is refused, with its own message, when
        // the expression is lowered.
        let unnamed = Ok(Some(ExprType::Dyn));
        match (name, args.len()) {
            ("bind", 3) if is_cel => {
                let Some(v) = variable(0) else {
                    return unnamed;
                };
                let init = self.check(&args[1])?;
                self.scoped(vec![(v, init)], |c| c.check(&args[2])).map(Some)
            }
            ("optMap" | "optFlatMap", 2) => {
                let Some(v) = variable(0) else {
                    return unnamed;
                };
                let optional = self.check(target)?;
                let resolved = self.resolved(&optional);
                let value = match resolved.optional_value() {
                    Some(value) => value.clone(),
                    None if resolved.is_dyn_or_error() => ExprType::Dyn,
                    None => {
                        return Err(error(
                            expr,
                            format!(
                                "found no matching overload for 'hasValue' applied to '{}.()'",
                                self.shown(&resolved)
                            ),
                        ));
                    }
                };
                let body = self.scoped(vec![(v, value)], |c| c.check(&args[1]))?;
                if name == "optMap" {
                    return Ok(Some(ExprType::optional(body)));
                }
                let body = self.resolved(&body);
                if body.optional_value().is_some() || body.is_dyn_or_error() {
                    return Ok(Some(body));
                }
                Err(error(
                    &args[1],
                    format!(
                        "expected type '{}' but found '{}'",
                        ExprType::optional(ExprType::Dyn),
                        self.shown(&body)
                    ),
                ))
            }
            ("sortBy", 2) => {
                if let Some(since) = overloads("@sortByAssociatedKeys")
                    .and_then(|candidates| introduced_after(candidates, self.env.version()))
                {
                    return Err(self.newer(expr, name, since));
                }
                let Some(v) = variable(0) else {
                    return unnamed;
                };
                let list = self.check(target)?;
                let (element, _) = self.range_variables(target, &list, false)?;
                let key = self.scoped(vec![(v, element)], |c| c.check(&args[1]))?;
                self.resolve(
                    expr,
                    "@sortByAssociatedKeys",
                    Some(list),
                    vec![ExprType::list(key)],
                )
                .map(Some)
            }
            ("all" | "exists" | "existsOne" | "exists_one", 3)
            | ("transformList" | "transformMap" | "transformMapEntry", 3 | 4) => {
                let (Some(first), Some(second)) = (variable(0), variable(1)) else {
                    return unnamed;
                };
                if first == second {
                    return Err(error(&args[1], format!("duplicate variable name: {first}")));
                }
                for (i, v) in [&first, &second].into_iter().enumerate() {
                    if v == ACCUMULATOR {
                        return Err(error(
                            &args[i],
                            "iteration variable overwrites accumulator variable".into(),
                        ));
                    }
                }
                let range = self.check(target)?;
                let (first_type, second_type) = self.range_variables(target, &range, true)?;
                let key_type = first_type.clone();
                let scope = vec![(first, first_type), (second, second_type)];
                let step = self.scoped(scope, |c| {
                    if args.len() == 4 {
                        let filter = c.check(&args[2])?;
                        c.expect(&args[2], &filter, &ExprType::Bool)?;
                    }
                    let step = c.check(&args[args.len() - 1])?;
                    Ok(c.resolved(&step))
                })?;
                let last = &args[args.len() - 1];
                let t = match name {
                    "transformList" => ExprType::list(step),
                    "transformMap" => ExprType::map(key_type, step),
                    "transformMapEntry" => match step {
                        ExprType::Map(..) => step,
                        t if t.is_dyn_or_error() => ExprType::map(ExprType::Dyn, ExprType::Dyn),
                        other => {
                            let expected = ExprType::map(ExprType::Dyn, ExprType::Dyn);
                            return Err(error(
                                last,
                                format!("expected type '{expected}' but found '{}'", self.shown(&other)),
                            ));
                        }
                    },
                    _ => {
                        self.expect(last, &step, &ExprType::Bool)?;
                        ExprType::Bool
                    }
                };
                Ok(Some(t))
            }
            _ => Ok(None),
        }
    }

    /// Runs `body` with `variables` in scope.
    fn scoped<T>(
        &mut self,
        variables: Vec<(String, ExprType)>,
        body: impl FnOnce(&mut Self) -> Result<T, TypeError>,
    ) -> Result<T, TypeError> {
        let depth = self.scopes.len();
        self.scopes.extend(variables);
        let result = body(self);
        self.scopes.truncate(depth);
        result
    }
}

/// When no overload of a function exists at `version`: the version that introduced the first.
fn introduced_after(candidates: &[decls::Overload], version: KubernetesVersion) -> Option<KubernetesVersion> {
    if candidates.iter().any(|o| o.since <= version) {
        return None;
    }
    candidates.iter().map(|o| o.since).min()
}

/// A declaration's type with its parameters renumbered from `base`.
fn shift(t: &ExprType, base: u32) -> ExprType {
    match t {
        ExprType::Param(n) => ExprType::Param(base + n),
        ExprType::List(element) => ExprType::list(shift(element, base)),
        ExprType::Map(key, value) => ExprType::map(shift(key, base), shift(value, base)),
        ExprType::Type(of) => ExprType::Type(Box::new(shift(of, base))),
        ExprType::Opaque(name, params) => {
            ExprType::Opaque(name, params.iter().map(|p| shift(p, base)).collect())
        }
        other => other.clone(),
    }
}

fn literal_type(literal: &LiteralValue) -> ExprType {
    match literal {
        LiteralValue::Boolean(_) => ExprType::Bool,
        LiteralValue::Bytes(_) => ExprType::Bytes,
        LiteralValue::Double(_) => ExprType::Double,
        LiteralValue::Int(_) => ExprType::Int,
        LiteralValue::Null => ExprType::Null,
        LiteralValue::String(_) => ExprType::String,
        LiteralValue::UInt(_) => ExprType::Uint,
    }
}

/// The declared type of a root variable.
fn root_type(root: Root) -> ExprType {
    match root {
        Root::Request => ExprType::Object(&objects::ADMISSION_REQUEST),
        Root::NamespaceObject => ExprType::Object(&objects::NAMESPACE),
        Root::Authorizer => decls::opaque("Authorizer").unwrap_or(ExprType::Dyn),
        Root::Object | Root::OldObject | Root::Params | Root::Impact | Root::Cluster | Root::History => {
            ExprType::Dyn
        }
    }
}

/// The type a type identifier (`int`, `net.IP`, `google.protobuf.Timestamp`) denotes.
fn type_identifier(name: &str) -> Option<ExprType> {
    if let Some(t) = ExprType::primitive(name) {
        return Some(t);
    }
    Some(match name {
        "list" => ExprType::list(ExprType::Dyn),
        "map" => ExprType::map(ExprType::Dyn, ExprType::Dyn),
        "null_type" => ExprType::Null,
        "type" => ExprType::Type(Box::new(ExprType::Dyn)),
        "optional_type" => ExprType::optional(ExprType::Dyn),
        "google.protobuf.Duration" => ExprType::Duration,
        "google.protobuf.Timestamp" => ExprType::Timestamp,
        other => return decls::opaque_named(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::compile::parser;

    fn typed(env: &Env, source: &str) -> Result<String, String> {
        let parsed = parser().parse(source).map_err(|e| format!("{e:?}"))?;
        check(env, &parsed).map(|t| t.to_string()).map_err(|e| e.message)
    }

    #[track_caller]
    fn has_type(source: &str, expected: &str) {
        assert_eq!(
            typed(&Env::admission(), source),
            Ok(expected.to_owned()),
            "{source}"
        );
    }

    #[track_caller]
    fn refused(source: &str, expected: &str) {
        assert_eq!(
            typed(&Env::admission(), source),
            Err(expected.to_owned()),
            "{source}"
        );
    }

    #[test]
    fn expressions_get_the_types_cel_go_gives_them() {
        has_type("object.spec.replicas", "dyn");
        has_type("object.spec.replicas > 3", "bool");
        has_type("'n: ' + string(object.n)", "string");
        has_type("[1, 2].map(x, x * 2)", "list(int)");
        has_type("[1, 2].filter(x, x > 1)", "list(int)");
        has_type("{'a': 1}.exists_one(k, k == 'a')", "bool");
        has_type("[]", "list(dyn)");
        has_type("true ? [] : object.items", "dyn");
        has_type("true ? ['a'] : []", "list(string)");
        has_type("object.?spec.?replicas", "optional_type(dyn)");
        has_type("object.?spec.?replicas.orValue(1)", "dyn");
        has_type("optional.none()", "optional_type(dyn)");
        has_type("[?optional.of(1), 2]", "list(int)");
        has_type("request.userInfo.groups", "list(string)");
        has_type("request.userInfo.extra", "map(string, list(string))");
        has_type("namespaceObject.metadata.labels", "map(string, string)");
        has_type(
            "authorizer.requestResource.check('get')",
            "kubernetes.authorization.Decision",
        );
        has_type("quantity('1Gi').add(1)", "kubernetes.Quantity");
        has_type("[1, 2].sortBy(x, -x)", "list(int)");
        has_type("[1, 2].transformMap(i, v, v * 2)", "map(int, int)");
        has_type("{'a': 1}.transformMapEntry(k, v, {v: k})", "map(int, string)");
        has_type("cel.bind(x, 'a', x + x)", "string");
        has_type("optional.of(1).optMap(v, string(v))", "optional_type(string)");
        has_type("type(1)", "type(int)");
        has_type("dyn(1) == 1u", "bool");
        has_type("1 < 1.5", "bool");
    }

    #[test]
    fn what_kube_apiserver_refuses_is_refused_in_its_words() {
        refused("[1, 'a']", "expected type 'int' but found 'string'");
        refused("{'a': 1, 'b': 'c'}", "expected type 'int' but found 'string'");
        refused(
            "true ? 1 : 'a'",
            "found no matching overload for '_?_:_' applied to '(bool, int, string)'",
        );
        refused(
            "'abc'.substring(1, 2, 3)",
            "found no matching overload for 'substring' applied to 'string.(int, int, int)'",
        );
        refused(
            "'abc'.indexOf('b', 'x')",
            "found no matching overload for 'indexOf' applied to 'string.(string, string)'",
        );
        refused(
            "1 == 1u",
            "found no matching overload for '_==_' applied to '(int, uint)'",
        );
        refused(
            "1 + 1u",
            "found no matching overload for '_+_' applied to '(int, uint)'",
        );
        refused(
            "'a' == null",
            "found no matching overload for '_==_' applied to '(string, null)'",
        );
        refused(
            "{'a': 1}.orValue(1)",
            "found no matching overload for 'orValue' applied to 'map(string, int).(int)'",
        );
        refused(
            "[1].hasValue()",
            "found no matching overload for 'hasValue' applied to 'list(int).()'",
        );
        refused("[1].all(x, x, x > 0)", "duplicate variable name: x");
        refused(
            "[1].map(__result__, 1)",
            "iteration variable overwrites accumulator variable",
        );
        refused(
            "1.all(x, true)",
            "expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)",
        );
        refused("[1].all(x, x)", "expected type 'bool' but found 'int'");
        refused("object.a && 'b'", "expected type 'bool' but found 'string'");
        refused("request.uid", "undefined field 'uid'");
        refused("namespaceObject.metadata.uid", "undefined field 'uid'");
        refused("(1).x", "type 'int' does not support field selection");
        refused("objekt", "undeclared reference to 'objekt'");
        refused("math.abs(1)", "undeclared reference to 'math.abs'");
        refused(
            "'x'.reverse()",
            "found no matching overload for 'reverse' applied to 'string.()'",
        );
        refused(
            "[optional.of(1)].sortBy(x, x)",
            "found no matching overload for '@sortByAssociatedKeys' applied to 'list(optional_type(int)).(list(optional_type(int)))'",
        );
    }

    #[test]
    fn literals_below_format_may_mix_types_as_cel_go_exempts_them() {
        has_type("'%s has %d replicas'.format(['web', 3])", "string");
        has_type("'%s %s'.format([[1, 'a'], {'k': 1, 'j': 'v'}])", "string");
        has_type("'%d'.format([[1, 'a'].size()])", "string");
        has_type("[1].map(i, '%d%s'.format([i, 'x']))", "list(string)");
        // Only below the call: a literal holding a format call is still homogeneous.
        refused(
            "['%s'.format(['a']), 1]",
            "expected type 'string' but found 'int'",
        );
        refused(
            "[[1, 'a'], '%s'.format(['a'])]",
            "expected type 'int' but found 'string'",
        );
    }

    #[test]
    fn a_constant_format_string_is_checked_against_a_literal_list() {
        refused(
            "'%d'.format(['x'])",
            "error during formatting: decimal clause can only be used on integers, was given string",
        );
        refused("'%s %s'.format(['x'])", "index 1 out of range");
        refused(
            "'%s'.format([1, 2])",
            "too many arguments supplied to string.format (expected 1, got 2)",
        );
        refused(
            "'%.3'.format([1.0])",
            "could not parse formatting clause: error while parsing precision: could not find end of precision specifier",
        );
        refused("'%'.format([1])", "unexpected end of string");
        has_type("'%d %s'.format([dyn('x'), dyn(1)])", "string");
        has_type("'%s'.format(['%d'])", "string");
        has_type("('%' + 'd').format(['x'])", "string");
    }

    #[test]
    fn only_the_functions_of_the_environments_version_exist() {
        let at = |version| Env::admission_at(version);
        let error = |env: &Env, source: &str| {
            let parsed = parser().parse(source).unwrap();
            check(env, &parsed).unwrap_err()
        };
        let e = error(&at(KubernetesVersion::V1_33), "[2, 1].sort()");
        assert_eq!(
            e.message,
            "undeclared reference to 'sort': Kubernetes 1.34 introduced it, the target is 1.33"
        );
        assert_eq!(
            e.requires,
            Some(Requirement {
                function: "sort".into(),
                version: KubernetesVersion::V1_34
            })
        );
        let e = error(&at(KubernetesVersion::V1_33), "[2, 1].sortBy(x, -x)");
        assert_eq!(e.requires.map(|r| r.function), Some("sortBy".to_owned()));
        let e = error(&Env::admission(), "[1].includes(1)");
        assert_eq!(e.requires.map(|r| r.version), Some(KubernetesVersion::V1_37));
        // Declared at the version: resolved as before, and wrong arguments are still wrong.
        assert!(
            check(
                &at(KubernetesVersion::V1_34),
                &parser().parse("[2, 1].sort()").unwrap()
            )
            .is_ok()
        );
        assert!(
            check(
                &at(KubernetesVersion::V1_37),
                &parser().parse("[1].includes(1)").unwrap()
            )
            .is_ok()
        );
        assert_eq!(
            error(&at(KubernetesVersion::V1_37), "[1].includes(1, 2)").message,
            "found no matching overload for 'includes' applied to 'list(int).(int, int)'"
        );
    }

    #[test]
    fn variables_have_their_expressions_types() {
        let mut env = Env::admission();
        env.declare_typed_variable("count", ExprType::Int);
        assert_eq!(
            typed(&env, "'n: ' + variables.count"),
            Err("found no matching overload for '_+_' applied to '(string, int)'".to_owned())
        );
        assert_eq!(typed(&env, "variables.count > 2"), Ok("bool".to_owned()));
    }
}
