//! Functions: the hot ones natively ([`Builtin`]), the Kubernetes libraries through the
//! `kube-cel` [`bridge`], and the [`authorizer`]. Where `kube-cel` disagrees with Kubernetes the
//! function is implemented here instead and resolved ahead of the bridge: [`urls`], [`semver`],
//! named [`format`]s, [`strings`]' `format`, the [`string_index`] functions, [`time`] accessors,
//! `lists.sum` and `sortBy`'s ordering; [`types`] adds `type()` and the type identifiers.

pub mod authorizer;
pub mod bridge;
pub mod cluster;
pub mod format;
pub mod history;
pub(crate) mod lists;
pub(crate) mod native;
pub mod semver;
pub(crate) mod string_index;
pub mod strings;
pub mod time;
pub mod types;
pub mod urls;

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
    /// `type(x)`.
    Type,
    /// `timestamp(x)`: of a string (through the library), of seconds since the epoch, of a
    /// timestamp.
    Timestamp,
    /// `duration(x)`: of a string (through the library), of a duration.
    Duration,
    Join,
    LowerAscii,
    UpperAscii,
    Replace,
    Split,
    Trim,
    /// `string.format(list)`.
    StringFormat,
    /// `list.sum()`.
    Sum,
    /// `x.includes(y)` (Kubernetes lists library, version 1).
    Includes,
    /// `list.sort()`.
    Sort,
    /// `list.slice(start, end)`.
    Slice,
    /// `list.flatten()`, `list.flatten(depth)`.
    Flatten,
    /// `quantity.isInteger()`: integral and within int64, as Kubernetes' `AsInt64` answers.
    QuantityIsInteger,
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
    /// Internal: a list ordered by a list of keys (`sortBy`, cel-go's `@sortByAssociatedKeys`).
    SortByKeys,
    Authorizer(authorizer::Method),
    Time(time::Getter),
    Url(urls::Function),
    Format(format::Function),
    Semver(semver::Function),
    /// `charAt`, `indexOf`, `lastIndexOf`, `substring`.
    StringIndex(string_index::Function),
}

impl Builtin {
    /// True when `name` is implemented here for some receiver form and argument count.
    pub(crate) fn is_declared(name: &str) -> bool {
        (0..=3).any(|argc| {
            Builtin::resolve(name, true, argc).is_some() || Builtin::resolve(name, false, argc).is_some()
        })
    }

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
            ("type", false, 1) => Type,
            ("timestamp", false, 1) => Timestamp,
            ("duration", false, 1) => Duration,
            ("join", true, 0 | 1) => Join,
            ("lowerAscii", true, 0) => LowerAscii,
            ("upperAscii", true, 0) => UpperAscii,
            ("replace", true, 2 | 3) => Replace,
            ("split", true, 1 | 2) => Split,
            ("trim", true, 0) => Trim,
            ("format", true, 1) => StringFormat,
            ("sum", true, 0) => Sum,
            ("includes", true, 1) => Includes,
            ("sort", true, 0) => Sort,
            ("slice", true, 2) => Slice,
            ("flatten", true, 0 | 1) => Flatten,
            ("isInteger", true, 0) => QuantityIsInteger,
            ("optional.of", false, 1) => OptionalOf,
            ("optional.none", false, 0) => OptionalNone,
            ("optional.ofNonZeroValue", false, 1) => OptionalOfNonZero,
            ("hasValue", true, 0) => HasValue,
            ("value", true, 0) => OptionalValue,
            ("or", true, 1) => Or,
            ("orValue", true, 1) => OrValue,
            _ => {
                return time::Getter::resolve(name, method, argc)
                    .map(Time)
                    .or_else(|| urls::Function::resolve(name, method, argc).map(Url))
                    .or_else(|| format::Function::resolve(name, method, argc).map(Format))
                    .or_else(|| semver::Function::resolve(name, method, argc).map(Semver))
                    .or_else(|| string_index::Function::resolve(name, method, argc).map(StringIndex))
                    .or_else(|| authorizer::Method::resolve(name, method, argc).map(Authorizer));
            }
        };
        Some(builtin)
    }
}
