//! The Kubernetes named-format library: `format.dns1123Label()` & co., `format.named(name)` and
//! `<format>.validate(s)`, with the messages of Kubernetes' `apimachinery` validation.
//!
//! Replaces `kube-cel`'s, whose `format.named()` returns the format itself (or `null`) instead of
//! an optional, and whose messages are its own (users see them through `messageExpression`).

use std::sync::Arc;

use chrono::NaiveDate;

use crate::cel::functions::native::optional;
use crate::cel::functions::urls;
use crate::cel::upstream::objects::Opaque;
use crate::cel::value::type_name;
use crate::cel::{EvalError, Value};

/// A named format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Dns1123Label,
    Dns1123Subdomain,
    Dns1035Label,
    QualifiedName,
    Dns1123LabelPrefix,
    Dns1123SubdomainPrefix,
    Dns1035LabelPrefix,
    LabelValue,
    Uri,
    Uuid,
    Byte,
    Date,
    Datetime,
}

const ALL: [(&str, Format); 13] = [
    ("dns1123Label", Format::Dns1123Label),
    ("dns1123Subdomain", Format::Dns1123Subdomain),
    ("dns1035Label", Format::Dns1035Label),
    ("qualifiedName", Format::QualifiedName),
    ("dns1123LabelPrefix", Format::Dns1123LabelPrefix),
    ("dns1123SubdomainPrefix", Format::Dns1123SubdomainPrefix),
    ("dns1035LabelPrefix", Format::Dns1035LabelPrefix),
    ("labelValue", Format::LabelValue),
    ("uri", Format::Uri),
    ("uuid", Format::Uuid),
    ("byte", Format::Byte),
    ("date", Format::Date),
    ("datetime", Format::Datetime),
];

impl Opaque for Format {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.NamedFormat"
    }
}

/// A function of the format library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    /// `format.<name>()`.
    Constant(Format),
    /// `format.named(name)`.
    Named,
    /// `<format>.validate(s)`.
    Validate,
}

impl Function {
    pub(crate) fn resolve(name: &str, method: bool, argc: usize) -> Option<Function> {
        match (name, method, argc) {
            ("format.named", false, 1) => Some(Function::Named),
            ("validate", true, 1) => Some(Function::Validate),
            (name, false, 0) => {
                let short = name.strip_prefix("format.")?;
                ALL.iter()
                    .find(|(n, _)| *n == short)
                    .map(|(_, f)| Function::Constant(*f))
            }
            _ => None,
        }
    }
}

/// Calls `function`; `this` is the receiver, or the first argument of a global call.
pub(crate) fn call(function: Function, this: Value, arg: Value) -> Result<Value, EvalError> {
    match function {
        Function::Constant(format) => Ok(Value::Opaque(Arc::new(format))),
        Function::Named => match &this {
            Value::String(name) => Ok(optional(
                ALL.iter()
                    .find(|(n, _)| *n == name.as_str())
                    .map(|(_, f)| Value::Opaque(Arc::new(*f))),
            )),
            other => Err(EvalError::overload(format!("format.named({})", type_name(other)))),
        },
        Function::Validate => {
            let format = match &this {
                Value::Opaque(o) => o.downcast_ref::<Format>().copied(),
                _ => None,
            };
            let (Some(format), Value::String(s)) = (format, &arg) else {
                return Err(EvalError::overload(format!(
                    "validate({}) on {}",
                    type_name(&arg),
                    type_name(&this)
                )));
            };
            let errors = validate(format, s);
            Ok(optional((!errors.is_empty()).then(|| {
                Value::List(Arc::new(
                    errors.into_iter().map(|e| Value::String(Arc::new(e))).collect(),
                ))
            })))
        }
    }
}

/// The validation errors of `s` for `format` (empty when valid).
pub fn validate(format: Format, s: &str) -> Vec<String> {
    match format {
        Format::Dns1123Label => dns1123_label(s),
        Format::Dns1123LabelPrefix => dns1123_label(&mask_trailing_dash(s)),
        Format::Dns1123Subdomain => dns1123_subdomain(s),
        Format::Dns1123SubdomainPrefix => dns1123_subdomain(&mask_trailing_dash(s)),
        Format::Dns1035Label => dns1035_label(s),
        Format::Dns1035LabelPrefix => dns1035_label(&mask_trailing_dash(s)),
        Format::QualifiedName => qualified_name(s),
        Format::LabelValue => label_value(s),
        Format::Uri => urls::parse_request_uri(s).err().into_iter().collect(),
        Format::Uuid => single(is_uuid(s), "does not match the UUID format"),
        Format::Byte => single(is_base64(s), "invalid base64"),
        Format::Date => single(is_date(s), "invalid date"),
        Format::Datetime => single(is_datetime(s), "invalid datetime"),
    }
}

fn single(valid: bool, message: &str) -> Vec<String> {
    if valid {
        Vec::new()
    } else {
        vec![message.to_owned()]
    }
}

/// apimachinery's `maskTrailingDash` (sic: it drops two characters).
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        let cut = name.len() - 2;
        if name.is_char_boundary(cut) {
            return format!("{}a", &name[..cut]);
        }
    }
    name.to_owned()
}

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// apimachinery's `RegexError`.
fn regex_error(message: &str, regex: &str, examples: &[&str]) -> String {
    let mut out = message.to_owned();
    if examples.is_empty() {
        out.push_str(&format!(" (regex used for validation is '{regex}')"));
        return out;
    }
    out.push_str(" (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{example}', "));
    }
    out.push_str(&format!("regex used for validation is '{regex}')"));
    out
}

/// `[first]([middle]*[last])?`: one or more characters from `middle`, starting with one
/// accepted by `first` and ending with one accepted by `last`.
fn shaped(s: &str, first: fn(u8) -> bool, middle: fn(u8) -> bool, last: fn(u8) -> bool) -> bool {
    let bytes = s.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(&a), Some(&z)) => first(a) && last(z) && bytes.iter().all(|&b| middle(b) || first(b)),
        _ => false,
    }
}

fn lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

fn is_dns1123_label(s: &str) -> bool {
    shaped(s, lower_alnum, |b| lower_alnum(b) || b == b'-', lower_alnum)
}

fn is_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(is_dns1123_label)
}

fn is_qualified_name_part(s: &str) -> bool {
    shaped(
        s,
        |b| b.is_ascii_alphanumeric(),
        |b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'),
        |b| b.is_ascii_alphanumeric(),
    )
}

fn dns1123_label(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 63 {
        errors.push(max_len_error(63));
    }
    if !is_dns1123_label(s) {
        errors.push(if is_dns1123_subdomain(s) {
            "must not contain dots".to_owned()
        } else {
            regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            )
        });
    }
    errors
}

fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 253 {
        errors.push(max_len_error(253));
    }
    if !is_dns1123_subdomain(s) {
        errors.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errors
}

fn dns1035_label(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 63 {
        errors.push(max_len_error(63));
    }
    if !shaped(
        s,
        |b| b.is_ascii_lowercase(),
        |b| lower_alnum(b) || b == b'-',
        lower_alnum,
    ) {
        errors.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errors
}

fn qualified_name(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_owned());
            } else {
                errors.extend(
                    dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            )];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errors.push(format!("name part {}", max_len_error(63)));
    }
    if !is_qualified_name_part(name) {
        errors.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errors
}

fn label_value(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > 63 {
        errors.push(max_len_error(63));
    }
    if !s.is_empty() && !is_qualified_name_part(s) {
        errors.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errors
}

/// kube-openapi's `uuid`: `(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$`.
fn is_uuid(s: &str) -> bool {
    let mut rest = s.as_bytes();
    for (i, len) in [8usize, 4, 4, 4, 12].into_iter().enumerate() {
        if i > 0 && rest.first() == Some(&b'-') {
            rest = &rest[1..];
        }
        if rest.len() < len || !rest[..len].iter().all(u8::is_ascii_hexdigit) {
            return false;
        }
        rest = &rest[len..];
    }
    rest.is_empty()
}

/// govalidator's `IsBase64`: standard alphabet, padded, at least one group.
fn is_base64(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
        return false;
    }
    let alphabet = |b: &u8| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/';
    let body = bytes.len() - 4;
    let last = &bytes[body..];
    bytes[..body].iter().all(alphabet)
        && match last {
            [a, b, b'=', b'='] => alphabet(a) && alphabet(b),
            [a, b, c, b'='] => alphabet(a) && alphabet(b) && alphabet(c),
            group => group.iter().all(alphabet),
        }
}

/// Go's `time.Parse("2006-01-02", s)`.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
        && NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
}

/// kube-openapi's `IsDateTime`: a date, `t`, then `hh:mm:ss[.frac](z|±hh:mm)`, case-insensitively.
fn is_datetime(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let t = time.as_bytes();
    let two = |i: usize| t.get(i..i + 2).filter(|d| d.iter().all(u8::is_ascii_digit));
    let (Some(hh), Some(mm), Some(ss)) = (two(0), two(3), two(6)) else {
        return false;
    };
    if t.get(2) != Some(&b':') || t.get(5) != Some(&b':') {
        return false;
    }
    let mut rest = &t[8..];
    // `(.[0-9]+)?`: any one character, then digits.
    if rest.len() > 1 && rest[0] != b'z' && rest[0] != b'+' && rest[0] != b'-' && rest[1].is_ascii_digit() {
        let digits = rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        rest = &rest[1 + digits..];
    }
    let zone_ok = rest == b"z"
        || (rest.len() == 6
            && matches!(rest[0], b'+' | b'-')
            && rest[1].is_ascii_digit()
            && rest[2].is_ascii_digit()
            && rest[3] == b':'
            && rest[4].is_ascii_digit()
            && rest[5].is_ascii_digit());
    zone_ok && hh <= b"23".as_slice() && mm <= b"59".as_slice() && ss <= b"59".as_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_apimachinery_s() {
        assert!(validate(Format::Dns1123Label, "my-name").is_empty());
        assert_eq!(
            validate(Format::Dns1123Label, "a.b"),
            vec!["must not contain dots"]
        );
        assert_eq!(
            validate(Format::Dns1123Label, "My_Name"),
            vec![
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(
            validate(Format::QualifiedName, "/x"),
            vec!["prefix part must be non-empty"]
        );
        assert!(validate(Format::QualifiedName, "example.com/MyName").is_empty());
        assert_eq!(
            validate(Format::LabelValue, &"a".repeat(64)),
            vec!["must be no more than 63 characters"]
        );
        assert!(validate(Format::LabelValue, "").is_empty());
    }

    #[test]
    fn prefixes_may_end_with_a_dash() {
        assert!(validate(Format::Dns1123LabelPrefix, "my-label-prefix-").is_empty());
        assert!(validate(Format::Dns1123SubdomainPrefix, "mysubdomain.prefix.-").is_empty());
        assert!(!validate(Format::Dns1123Label, "my-label-prefix-").is_empty());
    }

    #[test]
    fn openapi_formats() {
        assert!(is_uuid("123e4567-e89b-12d3-a456-426614174000"));
        assert!(is_uuid("123E4567E89B12D3A456426614174000"));
        assert!(!is_uuid("123e4567-e89b-12d3-a456-42661417400"));
        assert!(is_base64("aGVsbG8="));
        assert!(!is_base64("aGVsbG8"));
        assert!(!is_base64(""));
        assert!(is_date("2021-01-01"));
        assert!(!is_date("2021-02-30"));
        assert!(!is_date("21-01-01"));
        assert!(is_datetime("2021-01-01T00:00:00Z"));
        assert!(is_datetime("2021-01-01t23:59:59.123+02:00"));
        assert!(!is_datetime("2021-01-01T24:00:00Z"));
        assert!(!is_datetime("2021-01-01"));
    }
}
