//! The Kubernetes semver library (`semver`, `isSemver`, `major`, `minor`, `patch`,
//! `isGreaterThan`, `isLessThan`, `compareTo`), parsing and ordering as `blang/semver` does.
//!
//! Replaces `kube-cel`'s, whose ordering and equality take build metadata into account
//! (`semver('1.28.3+k3s2').isGreaterThan(semver('1.28.3+k3s1'))` was true; in Kubernetes build
//! metadata never affects precedence) and which also accepted a `V` prefix when normalising.
//! `isGreaterThan`, `isLessThan` and `compareTo` are shared with the quantity library: receivers
//! that are not versions go on to `kube-cel`.

use std::cmp::Ordering;
use std::sync::{Arc, LazyLock};

use crate::cel::functions::bridge::BridgeCall;
use crate::cel::upstream::objects::Opaque;
use crate::cel::value::type_name;
use crate::cel::{Budget, EvalError, Value};

/// A function of the semver library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    Parse,
    IsSemver,
    Major,
    Minor,
    Patch,
    IsGreaterThan,
    IsLessThan,
    CompareTo,
}

impl Function {
    pub(crate) fn resolve(name: &str, method: bool, argc: usize) -> Option<Function> {
        Some(match (name, method, argc) {
            ("semver", false, 1 | 2) => Function::Parse,
            ("isSemver", false, 1 | 2) => Function::IsSemver,
            ("major", true, 0) => Function::Major,
            ("minor", true, 0) => Function::Minor,
            ("patch", true, 0) => Function::Patch,
            ("isGreaterThan", true, 1) => Function::IsGreaterThan,
            ("isLessThan", true, 1) => Function::IsLessThan,
            ("compareTo", true, 1) => Function::CompareTo,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Function::Parse => "semver",
            Function::IsSemver => "isSemver",
            Function::Major => "major",
            Function::Minor => "minor",
            Function::Patch => "patch",
            Function::IsGreaterThan => "isGreaterThan",
            Function::IsLessThan => "isLessThan",
            Function::CompareTo => "compareTo",
        }
    }
}

/// A pre-release identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Identifier {
    Numeric(u64),
    Alphanumeric(String),
}

/// A semantic version.
#[derive(Debug, Clone)]
pub struct Semver {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<Identifier>,
}

impl Opaque for Semver {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Semver"
    }
}

/// Equality is precedence equality: build metadata is ignored, as Kubernetes does.
impl PartialEq for Semver {
    fn eq(&self, other: &Self) -> bool {
        self.precedence(other) == Ordering::Equal
    }
}

impl Eq for Semver {}

impl Semver {
    /// `blang/semver`'s `Compare`.
    fn precedence(&self, other: &Semver) -> Ordering {
        let core = (self.major, self.minor, self.patch).cmp(&(other.major, other.minor, other.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.pre.is_empty(), other.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            (false, false) => {}
        }
        for (a, b) in self.pre.iter().zip(&other.pre) {
            let order = match (a, b) {
                (Identifier::Numeric(x), Identifier::Numeric(y)) => x.cmp(y),
                (Identifier::Numeric(_), Identifier::Alphanumeric(_)) => Ordering::Less,
                (Identifier::Alphanumeric(_), Identifier::Numeric(_)) => Ordering::Greater,
                (Identifier::Alphanumeric(x), Identifier::Alphanumeric(y)) => x.cmp(y),
            };
            if order != Ordering::Equal {
                return order;
            }
        }
        self.pre.len().cmp(&other.pre.len())
    }
}

fn numeric(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

fn alphanumeric(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn number(s: &str, what: &str) -> Result<u64, String> {
    if !numeric(s) {
        return Err(format!("Invalid character(s) found in {what} number {s:?}"));
    }
    if s.len() > 1 && s.starts_with('0') {
        return Err(format!(
            "{} number must not contain leading zeroes {s:?}",
            capitalized(what)
        ));
    }
    s.parse()
        .map_err(|_| format!("strconv.ParseUint: parsing {s:?}: invalid syntax"))
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// `blang/semver`'s strict `Parse`.
pub fn parse(s: &str) -> Result<Semver, String> {
    if s.is_empty() {
        return Err("Version string empty".into());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    let [major, minor, rest] = parts.as_slice() else {
        return Err("No Major.Minor.Patch elements found".into());
    };
    let major = number(major, "major")?;
    let minor = number(minor, "minor")?;
    let (rest, build) = match rest.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (*rest, None),
    };
    let (patch, pre) = match rest.split_once('-') {
        Some((patch, pre)) => (patch, Some(pre)),
        None => (rest, None),
    };
    let patch = number(patch, "patch")?;
    let mut version = Semver {
        major,
        minor,
        patch,
        pre: Vec::new(),
    };
    for identifier in pre.into_iter().flat_map(|p| p.split('.')) {
        if identifier.is_empty() {
            return Err("Prerelease is empty".into());
        }
        if numeric(identifier) {
            if identifier.len() > 1 && identifier.starts_with('0') {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {identifier:?}"
                ));
            }
            let n = identifier
                .parse()
                .map_err(|_| format!("invalid prerelease number {identifier:?}"))?;
            version.pre.push(Identifier::Numeric(n));
        } else if alphanumeric(identifier) {
            version.pre.push(Identifier::Alphanumeric(identifier.to_owned()));
        } else {
            return Err(format!("Invalid character(s) found in prerelease {identifier:?}"));
        }
    }
    for identifier in build.into_iter().flat_map(|b| b.split('.')) {
        if identifier.is_empty() {
            return Err("Build meta data is empty".into());
        }
        if !alphanumeric(identifier) {
            return Err(format!(
                "Invalid character(s) found in build meta data {identifier:?}"
            ));
        }
    }
    Ok(version)
}

/// Kubernetes' `normalizeAndParse`: one `v` prefix dropped, leading zeros removed from each of
/// the (at most three) dot-separated parts, a missing minor or patch filled with 0 — but a short
/// version with a pre-release or build suffix (`1-alpha`, `1.2+b`) is refused, as is anything the
/// strict parser then refuses (the empty string).
pub fn parse_normalized(s: &str) -> Result<Semver, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s
        .splitn(3, '.')
        .map(|part| {
            if part.len() <= 1 {
                return part.to_owned();
            }
            let trimmed = part.trim_start_matches('0');
            if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                trimmed.to_owned()
            } else {
                format!("0{trimmed}")
            }
        })
        .collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|last| last.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".into());
        }
        parts.resize(3, "0".to_owned());
    }
    parse(&parts.join("."))
}

fn as_semver(value: &Value) -> Option<&Semver> {
    match value {
        Value::Opaque(o) => o.downcast_ref::<Semver>(),
        _ => None,
    }
}

static BRIDGED: LazyLock<[BridgeCall; 3]> = LazyLock::new(|| {
    [
        BridgeCall::new("isGreaterThan", true, 1),
        BridgeCall::new("isLessThan", true, 1),
        BridgeCall::new("compareTo", true, 1),
    ]
});

/// Calls `function`; `this` is the receiver, or the first argument of a global call.
pub(crate) fn call(
    function: Function,
    this: Value,
    arg: Option<Value>,
    budget: &Budget,
) -> Result<Value, EvalError> {
    let overload = |this: &Value| EvalError::overload(format!("{} on {}", function.name(), type_name(this)));
    match function {
        Function::Parse | Function::IsSemver => {
            let Value::String(s) = &this else {
                return Err(overload(&this));
            };
            let normalize = match arg {
                None => false,
                Some(Value::Bool(b)) => b,
                Some(other) => return Err(overload(&other)),
            };
            let parsed = if normalize { parse_normalized(s) } else { parse(s) };
            match function {
                Function::IsSemver => Ok(Value::Bool(parsed.is_ok())),
                _ => parsed
                    .map(|v| Value::Opaque(Arc::new(v)))
                    .map_err(|e| EvalError::function("semver", e)),
            }
        }
        Function::Major | Function::Minor | Function::Patch => {
            let Some(version) = as_semver(&this) else {
                return Err(overload(&this));
            };
            let n = match function {
                Function::Major => version.major,
                Function::Minor => version.minor,
                _ => version.patch,
            };
            i64::try_from(n)
                .map(Value::Int)
                .map_err(|_| EvalError::Overflow("int"))
        }
        Function::IsGreaterThan | Function::IsLessThan | Function::CompareTo => {
            let other = arg.unwrap_or(Value::Null);
            let Some(version) = as_semver(&this) else {
                let index = match function {
                    Function::IsGreaterThan => 0,
                    Function::IsLessThan => 1,
                    _ => 2,
                };
                return BRIDGED[index].call(Some(this), vec![other], budget);
            };
            let Some(other) = as_semver(&other) else {
                return Err(overload(&other));
            };
            let order = version.precedence(other);
            Ok(match function {
                Function::IsGreaterThan => Value::Bool(order == Ordering::Greater),
                Function::IsLessThan => Value::Bool(order == Ordering::Less),
                _ => Value::Int(order as i64),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Semver {
        parse(s).unwrap_or(Semver {
            major: 999,
            minor: 0,
            patch: 0,
            pre: Vec::new(),
        })
    }

    #[test]
    fn precedence_follows_semver_2() {
        let order = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
        ];
        for pair in order.windows(2) {
            assert_eq!(
                v(pair[0]).precedence(&v(pair[1])),
                Ordering::Less,
                "{} < {}",
                pair[0],
                pair[1]
            );
        }
        assert_eq!(v("1.28.3+k3s2").precedence(&v("1.28.3+k3s1")), Ordering::Equal);
        assert_eq!(v("1.28.3+k3s2"), v("1.28.3"));
    }

    #[test]
    fn parsing_is_strict_unless_normalized() {
        assert_eq!(
            parse("1.2").err(),
            Some("No Major.Minor.Patch elements found".to_owned())
        );
        assert_eq!(
            parse("01.2.3").err(),
            Some("Major number must not contain leading zeroes \"01\"".to_owned())
        );
        assert!(parse("v1.2.3").is_err());
        assert_eq!(parse_normalized("v1.02"), Ok(v("1.2.0")));
        assert!(parse_normalized("V1.2.3").is_err());
        assert_eq!(parse_normalized("v1.28.3+k3s1"), Ok(v("1.28.3")));
        assert_eq!(parse_normalized("1.2.03-alpha"), Ok(v("1.2.3-alpha")));
        assert_eq!(parse_normalized("00"), Ok(v("0.0.0")));
        // Kubernetes' normalizeAndParse refuses these.
        assert!(parse_normalized("").is_err());
        assert_eq!(
            parse_normalized("1-alpha").err(),
            Some("short version cannot contain PreRelease/Build meta data".to_owned())
        );
        assert!(parse_normalized("1.2+build").is_err());
        assert_eq!(
            parse("1.0.0+a..b").err(),
            Some("Build meta data is empty".to_owned())
        );
    }
}
