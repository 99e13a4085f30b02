//! The types the checker reasons with, and how one is assigned to another: type parameters are
//! inferred by substitution, `dyn` agrees with everything, `null` only with what is nullable,
//! and a parameterised type agrees with another of the same name whose parameters agree, as
//! cel-go's checker decides it (the checker Kubernetes runs when a policy is created).

use std::collections::HashMap;
use std::fmt;

/// The static type of an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExprType {
    /// Any type: decided when the expression runs.
    Dyn,
    /// The type of an expression that already failed to check (agrees with everything, so one
    /// mistake is reported once).
    Error,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    List(Box<ExprType>),
    Map(Box<ExprType>, Box<ExprType>),
    /// A type known by name only, with its parameters: `optional_type(int)`, `net.IP`,
    /// `kubernetes.Quantity`.
    Opaque(&'static str, Vec<ExprType>),
    /// A declared object type (`kubernetes.AdmissionRequest`) whose fields are known.
    Object(&'static ObjectType),
    /// The type of a type value: `type(int)`.
    Type(Box<ExprType>),
    /// A type parameter, being inferred.
    Param(u32),
}

/// The name of the optional type.
pub(crate) const OPTIONAL: &str = "optional_type";

/// An object type: its name and its fields.
pub struct ObjectType {
    pub name: &'static str,
    /// The type of a field, `None` when the type has no such field.
    pub field: fn(&str) -> Option<ExprType>,
}

impl fmt::Debug for ObjectType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for ObjectType {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for ObjectType {}

impl ExprType {
    /// The primitive type CEL names `name` (`bool`, `int`, `uint`, `double`, `string`, `bytes`).
    pub(crate) fn primitive(name: &str) -> Option<Self> {
        Some(match name {
            "bool" => ExprType::Bool,
            "int" => ExprType::Int,
            "uint" => ExprType::Uint,
            "double" => ExprType::Double,
            "string" => ExprType::String,
            "bytes" => ExprType::Bytes,
            _ => return None,
        })
    }

    pub(crate) fn list(element: ExprType) -> Self {
        ExprType::List(Box::new(element))
    }

    pub(crate) fn map(key: ExprType, value: ExprType) -> Self {
        ExprType::Map(Box::new(key), Box::new(value))
    }

    pub(crate) fn optional(value: ExprType) -> Self {
        ExprType::Opaque(OPTIONAL, vec![value])
    }

    /// The value type of an optional, or `None` when this is not an optional.
    pub(crate) fn optional_value(&self) -> Option<&ExprType> {
        match self {
            ExprType::Opaque(OPTIONAL, params) => params.first(),
            _ => None,
        }
    }

    pub(crate) fn is_dyn_or_error(&self) -> bool {
        matches!(self, ExprType::Dyn | ExprType::Error)
    }

    /// The type parameters of this type, direct and nested.
    fn parameters(&self) -> &[ExprType] {
        match self {
            ExprType::List(element) | ExprType::Type(element) => std::slice::from_ref(element),
            ExprType::Opaque(_, params) => params,
            _ => &[],
        }
    }

    /// True when `null` may stand for a value of this type (cel-go keeps the nullness of its
    /// first checker: objects, opaque types, durations and timestamps).
    fn is_nullable(&self) -> bool {
        matches!(
            self,
            ExprType::Null
                | ExprType::Opaque(..)
                | ExprType::Object(_)
                | ExprType::Duration
                | ExprType::Timestamp
        )
    }
}

impl fmt::Display for ExprType {
    /// As cel-go's checker prints types in its errors.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            ExprType::Dyn => "dyn",
            ExprType::Error => "!error!",
            ExprType::Null => "null",
            ExprType::Bool => "bool",
            ExprType::Int => "int",
            ExprType::Uint => "uint",
            ExprType::Double => "double",
            ExprType::String => "string",
            ExprType::Bytes => "bytes",
            ExprType::Duration => "duration",
            ExprType::Timestamp => "timestamp",
            ExprType::List(element) => return write!(f, "list({element})"),
            ExprType::Map(key, value) => return write!(f, "map({key}, {value})"),
            ExprType::Type(of) => return write!(f, "type({of})"),
            ExprType::Object(object) => object.name,
            ExprType::Param(n) => return write!(f, "_var{n}"),
            ExprType::Opaque(name, params) if params.is_empty() => name,
            ExprType::Opaque(name, params) => {
                write!(f, "{name}(")?;
                for (i, param) in params.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{param}")?;
                }
                return f.write_str(")");
            }
        };
        f.write_str(name)
    }
}

/// What each type parameter has been inferred to be so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct Substitution {
    bound: HashMap<u32, ExprType>,
}

impl Substitution {
    /// `t` with every inferred parameter replaced by its type; parameters still free stay, or
    /// become `dyn` when `free_to_dyn`.
    pub(crate) fn apply(&self, t: &ExprType, free_to_dyn: bool) -> ExprType {
        match t {
            ExprType::Param(n) => match self.bound.get(n) {
                Some(bound) => self.apply(bound, free_to_dyn),
                None if free_to_dyn => ExprType::Dyn,
                None => t.clone(),
            },
            ExprType::List(element) => ExprType::list(self.apply(element, free_to_dyn)),
            ExprType::Map(key, value) => {
                ExprType::map(self.apply(key, free_to_dyn), self.apply(value, free_to_dyn))
            }
            ExprType::Type(of) => ExprType::Type(Box::new(self.apply(of, free_to_dyn))),
            ExprType::Opaque(name, params) => {
                ExprType::Opaque(name, params.iter().map(|p| self.apply(p, free_to_dyn)).collect())
            }
            other => other.clone(),
        }
    }

    /// True when a value of type `from` may be used where `to` is expected; inferred
    /// parameters are kept only when the answer is yes.
    pub(crate) fn assign(&mut self, from: &ExprType, to: &ExprType) -> bool {
        let mut trial = self.clone();
        let ok = trial.assignable(from, to);
        if ok {
            *self = trial;
        }
        ok
    }

    /// [`Substitution::assign`] for argument lists of the same length.
    pub(crate) fn assign_all(&mut self, from: &[ExprType], to: &[ExprType]) -> bool {
        let mut trial = self.clone();
        let ok = trial.assignable_all(from, to);
        if ok {
            *self = trial;
        }
        ok
    }

    fn assignable_all(&mut self, from: &[ExprType], to: &[ExprType]) -> bool {
        from.len() == to.len() && from.iter().zip(to).all(|(f, t)| self.assignable(f, t))
    }

    fn assignable(&mut self, from: &ExprType, to: &ExprType) -> bool {
        if let ExprType::Param(_) = to {
            let (valid, already_bound) = self.substitute(from, to);
            if valid {
                return true;
            }
            if already_bound {
                return false;
            }
        }
        if let ExprType::Param(_) = from {
            return self.substitute(to, from).0;
        }
        if from.is_dyn_or_error() || to.is_dyn_or_error() {
            return true;
        }
        if *from == ExprType::Null {
            return to.is_nullable();
        }
        if *to == ExprType::Null {
            return from.is_nullable();
        }
        match (from, to) {
            (ExprType::Type(_), ExprType::Type(_)) => true,
            (ExprType::List(a), ExprType::List(b)) => self.assignable(a, b),
            (ExprType::Map(ka, va), ExprType::Map(kb, vb)) => {
                self.assignable(ka, kb) && self.assignable(va, vb)
            }
            (ExprType::Opaque(a, pa), ExprType::Opaque(b, pb)) => a == b && self.assignable_all(pa, pb),
            (a, b) => a == b,
        }
    }

    /// Whether `param` may stand for `t` (binding it when free), and whether it was bound
    /// before.
    fn substitute(&mut self, t: &ExprType, param: &ExprType) -> (bool, bool) {
        let ExprType::Param(n) = param else {
            return (false, false);
        };
        if t == param {
            return (true, true);
        }
        if let Some(bound) = self.bound.get(n).cloned() {
            if *t == bound {
                return (true, true);
            }
            if self.assignable(t, &bound) {
                let general = most_general(t, &bound);
                if self.not_referenced_in(param, &general) {
                    self.bound.insert(*n, general);
                }
                return (true, true);
            }
            return (false, true);
        }
        if self.not_referenced_in(param, t) {
            self.bound.insert(*n, t.clone());
            return (true, false);
        }
        (false, false)
    }

    /// The occurs check: `param` appears nowhere in `within`.
    fn not_referenced_in(&self, param: &ExprType, within: &ExprType) -> bool {
        if param == within {
            return false;
        }
        match within {
            ExprType::Param(n) => match self.bound.get(n) {
                Some(bound) => self.not_referenced_in(param, bound),
                None => true,
            },
            ExprType::Map(key, value) => {
                self.not_referenced_in(param, key) && self.not_referenced_in(param, value)
            }
            other => other
                .parameters()
                .iter()
                .all(|p| self.not_referenced_in(param, p)),
        }
    }
}

/// The more general of two types known to agree.
pub(crate) fn most_general(a: &ExprType, b: &ExprType) -> ExprType {
    if equal_or_less_specific(a, b) {
        a.clone()
    } else {
        b.clone()
    }
}

/// True when `a` is `b`, or less specific than `b` through `dyn` or a free parameter.
fn equal_or_less_specific(a: &ExprType, b: &ExprType) -> bool {
    match (a, b) {
        (ExprType::Dyn | ExprType::Param(_), _) => true,
        (_, ExprType::Dyn | ExprType::Param(_)) => false,
        (ExprType::List(x), ExprType::List(y)) => equal_or_less_specific(x, y),
        (ExprType::Map(ka, va), ExprType::Map(kb, vb)) => {
            equal_or_less_specific(ka, kb) && equal_or_less_specific(va, vb)
        }
        (ExprType::Opaque(x, px), ExprType::Opaque(y, py)) => {
            x == y && px.len() == py.len() && px.iter().zip(py).all(|(p, q)| equal_or_less_specific(p, q))
        }
        (ExprType::Type(_), ExprType::Type(_)) => true,
        (x, y) => x == y,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_takes_the_first_type_and_refuses_another() {
        let mut s = Substitution::default();
        let a = ExprType::Param(0);
        assert!(s.assign_all(&[ExprType::Int, ExprType::Int], &[a.clone(), a.clone()]));
        assert!(
            !s.clone()
                .assign_all(&[ExprType::Int, ExprType::String], &[a.clone(), a.clone()])
        );
        assert_eq!(s.apply(&a, false), ExprType::Int);
    }

    #[test]
    fn dyn_agrees_with_everything_and_null_with_the_nullable_only() {
        let mut s = Substitution::default();
        assert!(s.assign(&ExprType::Dyn, &ExprType::list(ExprType::Int)));
        assert!(s.assign(&ExprType::Null, &ExprType::Timestamp));
        assert!(s.assign(&ExprType::Null, &ExprType::optional(ExprType::Int)));
        assert!(!s.assign(&ExprType::Null, &ExprType::Int));
        assert!(!s.assign(&ExprType::Null, &ExprType::list(ExprType::Int)));
    }

    #[test]
    fn a_parameter_bound_to_dyn_stays_general() {
        let mut s = Substitution::default();
        let a = ExprType::Param(0);
        assert!(s.assign_all(&[ExprType::Dyn, ExprType::Int], &[a.clone(), a.clone()]));
        assert_eq!(s.apply(&a, true), ExprType::Dyn);
    }

    #[test]
    fn types_print_as_cel_go_prints_them() {
        let t = ExprType::map(ExprType::String, ExprType::optional(ExprType::Timestamp));
        assert_eq!(t.to_string(), "map(string, optional_type(timestamp))");
        assert_eq!(ExprType::Type(Box::new(ExprType::Null)).to_string(), "type(null)");
    }
}
