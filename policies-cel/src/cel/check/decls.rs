//! Every function of the Kubernetes admission environment with its overloads, as the checker
//! sees them: CEL's standard library, cel-go's strings (version 2), lists (version 3), sets and
//! optional libraries, and Kubernetes' lists, regex, url, quantity, ip, cidr, format, semver and
//! authorizer libraries. A function missing here does not exist for a policy, whatever the
//! evaluator could run.
//!
//! Each overload has the Kubernetes version that introduced it (kube-apiserver's
//! `environment/base.go`): everything below is in 1.33, the oldest version Suture knows, except
//! cel-go's lists extension (version 3, from 1.34) and the Kubernetes lists library's version 1
//! (`includes`, from 1.37). A call is resolved among the overloads of the version compiled for.
//!
//! Signatures are written as text (`string.substring(int, int) -> string`, `size(list(A)) ->
//! int`) and read once; a single capital letter is a type parameter.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::cel::KubernetesVersion;
use crate::cel::check::types::{ExprType, OPTIONAL};

/// One overload: argument types (the receiver first for a method) and result.
#[derive(Debug, Clone)]
pub(crate) struct Overload {
    pub(crate) member: bool,
    pub(crate) params: Vec<ExprType>,
    pub(crate) result: ExprType,
    /// The Kubernetes version that introduced it.
    pub(crate) since: KubernetesVersion,
}

/// The overloads of `name` (`_+_`, `size`, `sets.contains`), if it is declared.
pub(crate) fn overloads(name: &str) -> Option<&'static [Overload]> {
    TABLE.get(name).map(Vec::as_slice)
}

/// Type parameters of a declaration are numbered by letter; an instance of an overload shifts
/// them by a multiple of this so that each call has its own.
pub(crate) const PARAMS_PER_OVERLOAD: u32 = 26;

/// Types `sort`, `min`, `max` and `isSorted` order.
const COMPARABLE: [&str; 8] = [
    "int",
    "uint",
    "double",
    "bool",
    "duration",
    "timestamp",
    "string",
    "bytes",
];

static TABLE: LazyLock<HashMap<String, Vec<Overload>>> = LazyLock::new(|| {
    let mut table: HashMap<String, Vec<Overload>> = HashMap::new();
    // Every signature reads (`every_signature_reads`).
    for (signature, since) in signatures() {
        if let Some((name, overload)) = parse_signature(&signature, since) {
            table.entry(name).or_default().push(overload);
        }
    }
    table
});

/// The signatures, one per overload, each with the version that introduced it.
fn signatures() -> Vec<(String, KubernetesVersion)> {
    let mut all: Vec<(String, KubernetesVersion)> = common()
        .into_iter()
        .map(|s| (s, KubernetesVersion::OLDEST))
        .collect();
    let lists_v3 = LISTS_EXTENSION
        .iter()
        .map(|s| (*s).to_owned())
        .chain(COMPARABLE.iter().flat_map(|t| {
            [
                format!("list({t}).sort() -> list({t})"),
                // What `sortBy` expands to: the list, and its keys computed as `map` would.
                format!("list(A).@sortByAssociatedKeys(list({t})) -> list(A)"),
            ]
        }));
    all.extend(lists_v3.map(|s| (s, KubernetesVersion::V1_34)));
    all.extend(
        KUBERNETES_LISTS_V1
            .iter()
            .map(|s| ((*s).to_owned(), KubernetesVersion::V1_37)),
    );
    all
}

/// The signatures of every version Suture knows.
fn common() -> Vec<String> {
    let mut s: Vec<String> = STATIC.iter().map(|s| (*s).to_owned()).collect();
    let numbers = ["int", "uint", "double"];
    for t in numbers {
        for op in ["_+_", "_-_", "_*_", "_/_"] {
            s.push(format!("{op}({t}, {t}) -> {t}"));
        }
    }
    for t in ["int", "uint"] {
        s.push(format!("_%_({t}, {t}) -> {t}"));
    }
    for op in ["_<_", "_<=_", "_>_", "_>=_"] {
        for t in [
            "bool",
            "int",
            "uint",
            "double",
            "string",
            "bytes",
            "timestamp",
            "duration",
        ] {
            s.push(format!("{op}({t}, {t}) -> bool"));
        }
        // Cross-type numeric comparisons, which Kubernetes enables.
        for a in numbers {
            for b in numbers.iter().filter(|b| **b != a) {
                s.push(format!("{op}({a}, {b}) -> bool"));
            }
        }
    }
    // The Kubernetes lists library (sort and sortBy are cel-go's lists extension: below).
    for t in COMPARABLE {
        s.push(format!("list({t}).isSorted() -> bool"));
        s.push(format!("list({t}).min() -> {t}"));
        s.push(format!("list({t}).max() -> {t}"));
    }
    for getter in [
        "getFullYear",
        "getMonth",
        "getDate",
        "getDayOfMonth",
        "getDayOfWeek",
        "getDayOfYear",
        "getHours",
        "getMinutes",
        "getSeconds",
        "getMilliseconds",
    ] {
        s.push(format!("timestamp.{getter}() -> int"));
        s.push(format!("timestamp.{getter}(string) -> int"));
    }
    for getter in ["getHours", "getMinutes", "getSeconds", "getMilliseconds"] {
        s.push(format!("duration.{getter}() -> int"));
    }
    for format in [
        "dns1123Label",
        "dns1123Subdomain",
        "dns1035Label",
        "qualifiedName",
        "dns1123LabelPrefix",
        "dns1123SubdomainPrefix",
        "dns1035LabelPrefix",
        "labelValue",
        "uri",
        "uuid",
        "byte",
        "date",
        "datetime",
    ] {
        s.push(format!("format.{format}() -> Format"));
    }
    s
}

const STATIC: &[&str] = &[
    // Operators.
    "_?_:_(bool, A, A) -> A",
    "!_(bool) -> bool",
    "@not_strictly_false(bool) -> bool",
    "-_(int) -> int",
    "-_(double) -> double",
    "_==_(A, A) -> bool",
    "_!=_(A, A) -> bool",
    "@in(A, list(A)) -> bool",
    "@in(A, map(A, B)) -> bool",
    "_[_](list(A), int) -> A",
    "_[_](map(A, B), A) -> B",
    // The optional library indexes optionals of lists and maps.
    "_[_](optional(list(A)), int) -> optional(A)",
    "_[_](optional(map(A, B)), A) -> optional(B)",
    "_[?_](list(A), int) -> optional(A)",
    "_[?_](map(A, B), A) -> optional(B)",
    "_[?_](optional(list(A)), int) -> optional(A)",
    "_[?_](optional(map(A, B)), A) -> optional(B)",
    "_+_(string, string) -> string",
    "_+_(bytes, bytes) -> bytes",
    "_+_(list(A), list(A)) -> list(A)",
    "_+_(duration, duration) -> duration",
    "_+_(timestamp, duration) -> timestamp",
    "_+_(duration, timestamp) -> timestamp",
    "_-_(timestamp, timestamp) -> duration",
    "_-_(timestamp, duration) -> timestamp",
    "_-_(duration, duration) -> duration",
    // Sizes, strings, regular expressions.
    "size(string) -> int",
    "size(bytes) -> int",
    "size(list(A)) -> int",
    "size(map(A, B)) -> int",
    "string.size() -> int",
    "bytes.size() -> int",
    "list(A).size() -> int",
    "map(A, B).size() -> int",
    "string.contains(string) -> bool",
    "string.startsWith(string) -> bool",
    "string.endsWith(string) -> bool",
    "matches(string, string) -> bool",
    "string.matches(string) -> bool",
    // Conversions.
    "int(int) -> int",
    "int(uint) -> int",
    "int(double) -> int",
    "int(string) -> int",
    "int(timestamp) -> int",
    "int(duration) -> int",
    "uint(int) -> uint",
    "uint(uint) -> uint",
    "uint(double) -> uint",
    "uint(string) -> uint",
    "double(int) -> double",
    "double(uint) -> double",
    "double(double) -> double",
    "double(string) -> double",
    "string(int) -> string",
    "string(uint) -> string",
    "string(double) -> string",
    "string(bool) -> string",
    "string(bytes) -> string",
    "string(string) -> string",
    "string(timestamp) -> string",
    "string(duration) -> string",
    "string(IP) -> string",
    "string(CIDR) -> string",
    "bytes(bytes) -> bytes",
    "bytes(string) -> bytes",
    "bool(bool) -> bool",
    "bool(string) -> bool",
    "duration(duration) -> duration",
    "duration(string) -> duration",
    "timestamp(timestamp) -> timestamp",
    "timestamp(string) -> timestamp",
    "timestamp(int) -> timestamp",
    "dyn(A) -> dyn",
    "type(A) -> type(A)",
    // cel-go strings extension, version 2.
    "string.charAt(int) -> string",
    "string.indexOf(string) -> int",
    "string.indexOf(string, int) -> int",
    "string.lastIndexOf(string) -> int",
    "string.lastIndexOf(string, int) -> int",
    "string.lowerAscii() -> string",
    "string.upperAscii() -> string",
    "string.replace(string, string) -> string",
    "string.replace(string, string, int) -> string",
    "string.split(string) -> list(string)",
    "string.split(string, int) -> list(string)",
    "string.substring(int) -> string",
    "string.substring(int, int) -> string",
    "string.trim() -> string",
    "string.format(list(dyn)) -> string",
    "strings.quote(string) -> string",
    "list(string).join() -> string",
    "list(string).join(string) -> string",
    // cel-go sets extension.
    "sets.contains(list(A), list(A)) -> bool",
    "sets.equivalent(list(A), list(A)) -> bool",
    "sets.intersects(list(A), list(A)) -> bool",
    // cel-go optional library (optMap and optFlatMap are macros).
    "optional.of(A) -> optional(A)",
    "optional.ofNonZeroValue(A) -> optional(A)",
    "optional.none() -> optional(A)",
    "optional(A).value() -> A",
    "optional(A).hasValue() -> bool",
    "optional(A).or(optional(A)) -> optional(A)",
    "optional(A).orValue(A) -> A",
    // Kubernetes lists library.
    "list(int).sum() -> int",
    "list(uint).sum() -> uint",
    "list(double).sum() -> double",
    "list(duration).sum() -> duration",
    "list(A).indexOf(A) -> int",
    "list(A).lastIndexOf(A) -> int",
    // Kubernetes regex library.
    "string.find(string) -> string",
    "string.findAll(string) -> list(string)",
    "string.findAll(string, int) -> list(string)",
    // Kubernetes URL library.
    "url(string) -> URL",
    "isURL(string) -> bool",
    "URL.getScheme() -> string",
    "URL.getHost() -> string",
    "URL.getHostname() -> string",
    "URL.getPort() -> string",
    "URL.getEscapedPath() -> string",
    "URL.getQuery() -> map(string, list(string))",
    // Kubernetes quantity library.
    "quantity(string) -> Quantity",
    "isQuantity(string) -> bool",
    "Quantity.sign() -> int",
    "Quantity.isInteger() -> bool",
    "Quantity.asInteger() -> int",
    "Quantity.asApproximateFloat() -> double",
    "Quantity.add(Quantity) -> Quantity",
    "Quantity.add(int) -> Quantity",
    "Quantity.sub(Quantity) -> Quantity",
    "Quantity.sub(int) -> Quantity",
    "Quantity.isLessThan(Quantity) -> bool",
    "Quantity.isGreaterThan(Quantity) -> bool",
    "Quantity.compareTo(Quantity) -> int",
    // Kubernetes IP and CIDR libraries.
    "ip(string) -> IP",
    "isIP(string) -> bool",
    "ip.isCanonical(string) -> bool",
    "IP.family() -> int",
    "IP.isUnspecified() -> bool",
    "IP.isLoopback() -> bool",
    "IP.isLinkLocalMulticast() -> bool",
    "IP.isLinkLocalUnicast() -> bool",
    "IP.isGlobalUnicast() -> bool",
    "cidr(string) -> CIDR",
    "isCIDR(string) -> bool",
    "CIDR.containsIP(string) -> bool",
    "CIDR.containsIP(IP) -> bool",
    "CIDR.containsCIDR(string) -> bool",
    "CIDR.containsCIDR(CIDR) -> bool",
    "CIDR.ip() -> IP",
    "CIDR.masked() -> CIDR",
    "CIDR.prefixLength() -> int",
    // Kubernetes format library (the named formats above).
    "format.named(string) -> optional(Format)",
    "Format.validate(string) -> optional(list(string))",
    // Kubernetes semver library.
    "semver(string) -> Semver",
    "semver(string, bool) -> Semver",
    "isSemver(string) -> bool",
    "isSemver(string, bool) -> bool",
    "Semver.major() -> int",
    "Semver.minor() -> int",
    "Semver.patch() -> int",
    "Semver.isLessThan(Semver) -> bool",
    "Semver.isGreaterThan(Semver) -> bool",
    "Semver.compareTo(Semver) -> int",
    // Kubernetes authorizer library, with selectors.
    "Authorizer.path(string) -> PathCheck",
    "Authorizer.group(string) -> GroupCheck",
    "Authorizer.serviceAccount(string, string) -> Authorizer",
    "GroupCheck.resource(string) -> ResourceCheck",
    "ResourceCheck.subresource(string) -> ResourceCheck",
    "ResourceCheck.namespace(string) -> ResourceCheck",
    "ResourceCheck.name(string) -> ResourceCheck",
    "ResourceCheck.fieldSelector(string) -> ResourceCheck",
    "ResourceCheck.labelSelector(string) -> ResourceCheck",
    "ResourceCheck.check(string) -> Decision",
    "PathCheck.check(string) -> Decision",
    "Decision.allowed() -> bool",
    "Decision.reason() -> string",
    "Decision.errored() -> bool",
    "Decision.error() -> string",
];

/// cel-go's lists extension, version 3, which Kubernetes enables from 1.34 (`sort` and what
/// the `sortBy` macro expands to are added per comparable type).
const LISTS_EXTENSION: &[&str] = &[
    "list(A).slice(int, int) -> list(A)",
    "list(list(A)).flatten() -> list(A)",
    "list(dyn).flatten(int) -> list(dyn)",
    "lists.range(int) -> list(int)",
    "list(A).reverse() -> list(A)",
    "list(A).distinct() -> list(A)",
];

/// The Kubernetes lists library's version 1, from 1.37: `includes`, on a list (an element
/// equal to the argument) or on any value (equal to the argument).
const KUBERNETES_LISTS_V1: &[&str] = &["dyn.includes(dyn) -> bool"];

/// Opaque types by the short names the signatures use.
const OPAQUE: [(&str, &str); 11] = [
    ("Quantity", "kubernetes.Quantity"),
    ("IP", "net.IP"),
    ("CIDR", "net.CIDR"),
    ("URL", "kubernetes.URL"),
    ("Semver", "kubernetes.Semver"),
    ("Format", "kubernetes.NamedFormat"),
    ("Authorizer", "kubernetes.authorization.Authorizer"),
    ("PathCheck", "kubernetes.authorization.PathCheck"),
    ("GroupCheck", "kubernetes.authorization.GroupCheck"),
    ("ResourceCheck", "kubernetes.authorization.ResourceCheck"),
    ("Decision", "kubernetes.authorization.Decision"),
];

/// The opaque type a signature calls `short`.
pub(crate) fn opaque(short: &str) -> Option<ExprType> {
    OPAQUE
        .iter()
        .find(|(s, _)| *s == short)
        .map(|(_, name)| ExprType::Opaque(name, Vec::new()))
}

/// The opaque type whose full name is `name` (`net.IP`), for type identifiers.
pub(crate) fn opaque_named(name: &str) -> Option<ExprType> {
    OPAQUE
        .iter()
        .find(|(_, full)| *full == name)
        .map(|(_, full)| ExprType::Opaque(full, Vec::new()))
}

/// `name(args) -> result` or `receiver.name(args) -> result`, introduced in `since`.
fn parse_signature(signature: &str, since: KubernetesVersion) -> Option<(String, Overload)> {
    let (call, result) = signature.split_once(" -> ")?;
    // The parenthesis opening the argument list: the one matching the last.
    let mut depth = 0;
    let open = call.char_indices().rev().find_map(|(i, c)| {
        match c {
            ')' => depth += 1,
            '(' => depth -= 1,
            _ => {}
        }
        (depth == 0).then_some(i)
    })?;
    let args = call[open + 1..].strip_suffix(')')?;
    let head = &call[..open];
    // A method's receiver is a type: everything before the last `.` outside parentheses, when
    // that text reads as a type (`sets.contains` is a namespaced function, not a method).
    let mut depth = 0;
    let mut split = None;
    for (i, c) in head.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '.' if depth == 0 => split = Some(i),
            _ => {}
        }
    }
    let receiver = split.and_then(|i| parse_type(&head[..i]).map(|t| (t, &head[i + 1..])));
    let (member, name, mut params) = match receiver {
        Some((receiver, name)) => (true, name, vec![receiver]),
        None => (false, head, Vec::new()),
    };
    for arg in split_top_level(args) {
        params.push(parse_type(arg)?);
    }
    Some((
        name.to_owned(),
        Overload {
            member,
            params,
            result: parse_type(result)?,
            since,
        },
    ))
}

/// The comma-separated parts of `text` outside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !text.trim().is_empty() {
        parts.push(text[start..].trim());
    }
    parts
}

/// A type as signatures write it.
fn parse_type(text: &str) -> Option<ExprType> {
    let text = text.trim();
    if let Some(open) = text.find('(') {
        let inner = split_top_level(text[open + 1..].strip_suffix(')')?);
        let mut params = inner.into_iter().map(parse_type);
        let mut one = || params.next().flatten();
        return match &text[..open] {
            "list" => Some(ExprType::list(one()?)),
            "map" => Some(ExprType::map(one()?, one()?)),
            "optional" => Some(ExprType::Opaque(OPTIONAL, vec![one()?])),
            "type" => Some(ExprType::Type(Box::new(one()?))),
            _ => None,
        };
    }
    if let Some(t) = ExprType::primitive(text) {
        return Some(t);
    }
    Some(match text {
        "dyn" => ExprType::Dyn,
        "null" => ExprType::Null,
        "duration" => ExprType::Duration,
        "timestamp" => ExprType::Timestamp,
        param if param.len() == 1 && param.as_bytes()[0].is_ascii_uppercase() => {
            ExprType::Param(u32::from(param.as_bytes()[0] - b'A'))
        }
        other => return opaque(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_signature_reads() {
        for (signature, since) in signatures() {
            assert!(parse_signature(&signature, since).is_some(), "{signature}");
        }
    }

    #[test]
    fn every_declared_function_can_be_evaluated() {
        use crate::cel::functions::{Builtin, bridge};
        for (name, overloads) in TABLE.iter() {
            // Operators and `dyn` are lowered by the compiler itself.
            if name.starts_with(['_', '@', '!', '-']) || name == "dyn" {
                continue;
            }
            for overload in overloads {
                let argc = overload.params.len() - usize::from(overload.member);
                assert!(
                    Builtin::resolve(name, overload.member, argc).is_some() || bridge::is_known(name),
                    "{name} with {argc} arguments is declared but not implemented"
                );
            }
        }
    }

    #[test]
    fn methods_and_namespaced_functions_are_told_apart() {
        let (name, o) =
            parse_signature("list(string).join(string) -> string", KubernetesVersion::OLDEST).unwrap();
        assert_eq!((name.as_str(), o.member), ("join", true));
        assert_eq!(o.params, vec![ExprType::list(ExprType::String), ExprType::String]);
        let (name, o) = parse_signature(
            "sets.contains(list(A), list(A)) -> bool",
            KubernetesVersion::OLDEST,
        )
        .unwrap();
        assert_eq!(
            (name.as_str(), o.member, o.params.len()),
            ("sets.contains", false, 2)
        );
        let (name, o) = parse_signature("optional.none() -> optional(A)", KubernetesVersion::OLDEST).unwrap();
        assert_eq!(
            (name.as_str(), o.member, o.params.len()),
            ("optional.none", false, 0)
        );
    }
}
