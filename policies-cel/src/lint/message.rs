//! The static type of an expression, where its shape alone tells it: enough to see that a
//! messageExpression cannot yield a string (`object.spec.replicas > 3`, `42`).

use crate::cel::upstream::common::ast::{Expr, IdedExpr, LiteralValue, operators};

/// The CEL type of `node` when its outermost operation fixes it.
pub(crate) fn static_type(node: &IdedExpr) -> Option<&'static str> {
    match &node.expr {
        Expr::Literal(literal) => Some(match literal {
            LiteralValue::Boolean(_) => "bool",
            LiteralValue::Bytes(_) => "bytes",
            LiteralValue::Double(_) => "double",
            LiteralValue::Int(_) => "int",
            LiteralValue::Null => "null_type",
            LiteralValue::String(_) => "string",
            LiteralValue::UInt(_) => "uint",
        }),
        Expr::List(_) => Some("list"),
        Expr::Map(_) => Some("map"),
        Expr::Call(call) => match call.func_name.as_str() {
            operators::LOGICAL_AND
            | operators::LOGICAL_OR
            | operators::LOGICAL_NOT
            | operators::EQUALS
            | operators::NOT_EQUALS
            | operators::LESS
            | operators::LESS_EQUALS
            | operators::GREATER
            | operators::GREATER_EQUALS
            | operators::IN
            | "startsWith"
            | "endsWith"
            | "contains"
            | "matches" => Some("bool"),
            "size" => Some("int"),
            "string" | "format" | "join" | "lowerAscii" | "upperAscii" | "replace" | "trim" => Some("string"),
            operators::ADD => {
                let [left, right] = call.args.as_slice() else {
                    return None;
                };
                match (static_type(left), static_type(right)) {
                    (Some("string"), _) | (_, Some("string")) => Some("string"),
                    (Some(a), Some(b)) if a == b => Some(a),
                    _ => None,
                }
            }
            operators::CONDITIONAL => {
                let [_, yes, no] = call.args.as_slice() else {
                    return None;
                };
                let (yes, no) = (static_type(yes)?, static_type(no)?);
                (yes == no).then_some(yes)
            }
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::parse::Parsed;

    fn type_of(source: &str) -> Option<&'static str> {
        static_type(&Parsed::new(source)?.root)
    }

    #[test]
    fn shapes_that_fix_a_type() {
        assert_eq!(type_of("object.spec.replicas > 3"), Some("bool"));
        assert_eq!(type_of("42"), Some("int"));
        assert_eq!(
            type_of("'replicas: ' + string(object.spec.replicas)"),
            Some("string")
        );
        assert_eq!(type_of("x ? 'a' : 'b'"), Some("string"));
        assert_eq!(type_of("object.metadata.name"), None);
        assert_eq!(type_of("x ? 'a' : 1"), None);
    }
}
