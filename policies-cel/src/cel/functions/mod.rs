//! Functions: the hot ones natively ([`Builtin`]), the Kubernetes libraries through the
//! `kube-cel` [`bridge`], and the [`authorizer`].

pub mod authorizer;
pub mod bridge;
pub(crate) mod native;

pub(crate) use native::call;

/// A function implemented here, resolved at compile time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    Size,
    Contains,
    StartsWith,
    EndsWith,
    Matches,
    String,
    Int,
    Uint,
    Double,
    Bool,
    Join,
    LowerAscii,
    UpperAscii,
    Replace,
    Split,
    Trim,
    OptionalOf,
    OptionalNone,
    OptionalOfNonZero,
    HasValue,
    OptionalValue,
    Or,
    OrValue,
    /// Internal: `accu` with one more key (transformMap).
    MapInsert,
    /// Internal: `accu` merged with a one-entry map (transformMapEntry).
    MapMerge,
    Authorizer(authorizer::Method),
}

impl Builtin {
    /// The native implementation for `name` called with (or without) a target and `argc` arguments.
    pub(crate) fn resolve(name: &str, method: bool, argc: usize) -> Option<Builtin> {
        use Builtin::*;
        let builtin = match (name, method, argc) {
            ("size", true, 0) | ("size", false, 1) => Size,
            ("contains", true, 1) => Contains,
            ("startsWith", true, 1) => StartsWith,
            ("endsWith", true, 1) => EndsWith,
            ("matches", true, 1) | ("matches", false, 2) => Matches,
            ("string", false, 1) => String,
            ("int", false, 1) => Int,
            ("uint", false, 1) => Uint,
            ("double", false, 1) => Double,
            ("bool", false, 1) => Bool,
            ("join", true, 0 | 1) => Join,
            ("lowerAscii", true, 0) => LowerAscii,
            ("upperAscii", true, 0) => UpperAscii,
            ("replace", true, 2 | 3) => Replace,
            ("split", true, 1 | 2) => Split,
            ("trim", true, 0) => Trim,
            ("optional.of", false, 1) => OptionalOf,
            ("optional.none", false, 0) => OptionalNone,
            ("optional.ofNonZeroValue", false, 1) => OptionalOfNonZero,
            ("hasValue", true, 0) => HasValue,
            ("value", true, 0) => OptionalValue,
            ("or", true, 1) => Or,
            ("orValue", true, 1) => OrValue,
            _ => return authorizer::Method::resolve(name, method, argc).map(Authorizer),
        };
        Some(builtin)
    }
}
