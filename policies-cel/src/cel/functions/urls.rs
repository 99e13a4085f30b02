//! The Kubernetes URL library (`url`, `isURL`, `getScheme`, `getHost`, `getHostname`, `getPort`,
//! `getEscapedPath`, `getQuery`), following Go's `net/url` as Kubernetes does.
//!
//! Replaces `kube-cel`'s, which parses with the WHATWG `url` crate and so normalises what Go keeps
//! as written: `url('/path').getHost()` gave `localhost`, `url('https://e.com').getEscapedPath()`
//! gave `/`, a default port (`https://e.com:443`) vanished from `getPort()`/`getHost()`, and host
//! names were lower-cased.

use std::collections::HashMap;
use std::sync::Arc;

use crate::cel::upstream::objects::{Key, Map, Opaque};
use crate::cel::value::type_name;
use crate::cel::{EvalError, Value};

/// A function of the URL library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    Url,
    IsUrl,
    Scheme,
    Host,
    Hostname,
    Port,
    EscapedPath,
    Query,
}

impl Function {
    pub(crate) fn resolve(name: &str, method: bool, argc: usize) -> Option<Function> {
        Some(match (name, method, argc) {
            ("url", false, 1) => Function::Url,
            ("isURL", false, 1) => Function::IsUrl,
            ("getScheme", true, 0) => Function::Scheme,
            ("getHost", true, 0) => Function::Host,
            ("getHostname", true, 0) => Function::Hostname,
            ("getPort", true, 0) => Function::Port,
            ("getEscapedPath", true, 0) => Function::EscapedPath,
            ("getQuery", true, 0) => Function::Query,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Function::Url => "url",
            Function::IsUrl => "isURL",
            Function::Scheme => "getScheme",
            Function::Host => "getHost",
            Function::Hostname => "getHostname",
            Function::Port => "getPort",
            Function::EscapedPath => "getEscapedPath",
            Function::Query => "getQuery",
        }
    }
}

/// A parsed URL: the fields of Go's `url.URL` that the library reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GoUrl {
    scheme: String,
    opaque: String,
    user: Option<String>,
    host: String,
    path: String,
    raw_path: String,
    force_query: bool,
    raw_query: String,
    fragment: String,
}

impl Opaque for GoUrl {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.URL"
    }
}

/// Calls `function` on an evaluated receiver (or first argument).
pub(crate) fn call(function: Function, this: &Value) -> Result<Value, EvalError> {
    let text = |s: String| Value::String(Arc::new(s));
    match function {
        Function::Url | Function::IsUrl => {
            let Value::String(s) = this else {
                return Err(EvalError::overload(format!(
                    "{}({})",
                    function.name(),
                    type_name(this)
                )));
            };
            let parsed = parse_request_uri(s).and_then(|_| parse(s));
            match function {
                Function::IsUrl => Ok(Value::Bool(parsed.is_ok())),
                _ => parsed
                    .map(|u| Value::Opaque(Arc::new(u)))
                    .map_err(|e| EvalError::function("url", e)),
            }
        }
        _ => {
            let url = match this {
                Value::Opaque(o) => o.downcast_ref::<GoUrl>(),
                _ => None,
            };
            let Some(url) = url else {
                return Err(EvalError::overload(format!(
                    "{} on {}",
                    function.name(),
                    type_name(this)
                )));
            };
            Ok(match function {
                Function::Scheme => text(url.scheme.clone()),
                Function::Host => text(url.host.clone()),
                Function::Hostname => text(split_host_port(&url.host).0.to_owned()),
                Function::Port => text(split_host_port(&url.host).1.to_owned()),
                Function::EscapedPath => text(url.escaped_path()),
                _ => query(&url.raw_query),
            })
        }
    }
}

/// Go's `url.ParseRequestURI`: an absolute URI or an absolute path, no fragment split.
pub(crate) fn parse_request_uri(raw: &str) -> Result<GoUrl, String> {
    parse_inner(raw, true).map_err(|e| format!("parse {}: {e}", go_quote(raw)))
}

/// Go's `url.Parse`.
fn parse(raw: &str) -> Result<GoUrl, String> {
    let (rest, fragment) = raw.split_once('#').map_or((raw, None), |(r, f)| (r, Some(f)));
    let mut url = parse_inner(rest, false).map_err(|e| format!("parse {}: {e}", go_quote(rest)))?;
    if let Some(fragment) = fragment {
        url.fragment =
            unescape(fragment, Mode::Fragment).map_err(|e| format!("parse {}: {e}", go_quote(raw)))?;
    }
    Ok(url)
}

/// Go's `%q` for the strings that appear in URL errors (printable ASCII is kept as is).
fn go_quote(s: &str) -> String {
    format!("{s:?}")
}

fn parse_inner(raw: &str, via_request: bool) -> Result<GoUrl, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".into());
    }
    let mut url = GoUrl::default();
    if raw == "*" {
        url.path = "*".into();
        return Ok(url);
    }
    let (scheme, mut rest) = scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_owned();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_owned();
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".into());
        }
        if rest
            .split('/')
            .next()
            .is_some_and(|segment| segment.contains(':'))
        {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///")) && rest.starts_with("//") {
        let authority_and_path = &rest[2..];
        let (authority, path) = match authority_and_path.find('/') {
            Some(i) => (&authority_and_path[..i], &authority_and_path[i..]),
            None => (authority_and_path, ""),
        };
        let (user, host) = parse_authority(authority)?;
        url.user = user;
        url.host = host;
        rest = path;
    }
    url.path = unescape(rest, Mode::Path)?;
    if escape(&url.path, Mode::Path) != rest {
        url.raw_path = rest.to_owned();
    }
    Ok(url)
}

fn scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

fn parse_authority(authority: &str) -> Result<(Option<String>, String), String> {
    let (user, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let host = parse_host(host)?;
    let Some(user) = user else { return Ok((None, host)) };
    let valid = user.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                '-' | '.'
                    | '_'
                    | ':'
                    | '~'
                    | '!'
                    | '$'
                    | '&'
                    | '\''
                    | '('
                    | ')'
                    | '*'
                    | '+'
                    | ','
                    | ';'
                    | '='
                    | '%'
                    | '@'
            )
    });
    if !valid {
        return Err("net/url: invalid userinfo".into());
    }
    unescape(user, Mode::UserPassword)?;
    Ok((Some(user.to_owned()), host))
}

fn parse_host(host: &str) -> Result<String, String> {
    if host.starts_with('[') {
        let Some(i) = host.rfind(']') else {
            return Err("missing ']' in host".into());
        };
        let colon_port = &host[i + 1..];
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", go_quote(colon_port)));
        }
    } else if let Some(i) = host.rfind(':') {
        let colon_port = &host[i..];
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", go_quote(colon_port)));
        }
    }
    unescape(host, Mode::Host)
}

fn valid_optional_port(port: &str) -> bool {
    match port.strip_prefix(':') {
        _ if port.is_empty() => true,
        Some(digits) => digits.bytes().all(|b| b.is_ascii_digit()),
        None => false,
    }
}

/// Go's `splitHostPort`: host without brackets, and the port (empty when absent).
fn split_host_port(host_port: &str) -> (&str, &str) {
    let (mut host, mut port) = (host_port, "");
    if let Some(colon) = host.rfind(':')
        && valid_optional_port(&host[colon..])
    {
        (host, port) = (&host[..colon], &host[colon + 1..]);
    }
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        host = inner;
    }
    (host, port)
}

impl GoUrl {
    /// Go's `URL.EscapedPath`.
    fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded(&self.raw_path)
            && unescape(&self.raw_path, Mode::Path).is_ok_and(|p| p == self.path)
        {
            return self.raw_path.clone();
        }
        if self.path == "*" {
            return "*".into();
        }
        escape(&self.path, Mode::Path)
    }
}

/// `getQuery()`: Go's `url.ParseQuery`, keeping what parses.
fn query(raw: &str) -> Value {
    let mut values: HashMap<Key, Vec<Value>> = HashMap::new();
    for pair in raw.split('&') {
        if pair.is_empty() || pair.contains(';') {
            continue;
        }
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (Ok(key), Ok(value)) = (
            unescape(key, Mode::QueryComponent),
            unescape(value, Mode::QueryComponent),
        ) else {
            continue;
        };
        values
            .entry(Key::String(Arc::new(key)))
            .or_default()
            .push(Value::String(Arc::new(value)));
    }
    let map = values
        .into_iter()
        .map(|(k, v)| (k, Value::List(Arc::new(v))))
        .collect();
    Value::Map(Map { map: Arc::new(map) })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    UserPassword,
    QueryComponent,
    Fragment,
}

/// Go's `shouldEscape`.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if mode == Mode::Host
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => c == b'?',
            Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::QueryComponent => true,
            Mode::Fragment => false,
            Mode::Host => true,
        },
        b'!' | b'(' | b')' | b'*' if mode == Mode::Fragment => false,
        _ => true,
    }
}

/// Go's `validEncoded` for paths.
fn valid_encoded(s: &str) -> bool {
    s.bytes().all(|c| {
        matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'['
                | b']'
                | b'%'
        ) || !should_escape(c, Mode::Path)
    })
}

/// Go's `escape`.
fn escape(s: &str, mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s.as_bytes() {
        if should_escape(c, mode) {
            if c == b' ' && mode == Mode::QueryComponent {
                out.push('+');
            } else {
                out.push('%');
                out.push(char::from(b"0123456789ABCDEF"[usize::from(c >> 4)]));
                out.push(char::from(b"0123456789ABCDEF"[usize::from(c & 15)]));
            }
        } else {
            out.push(char::from(c));
        }
    }
    out
}

/// Go's `unescape`: decodes `%XX` (and `+` in query components), rejecting bad escapes and,
/// in hosts, characters that would need escaping.
fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = |b: u8| char::from(b).to_digit(16);
                let (Some(high), Some(low)) = (
                    bytes.get(i + 1).copied().and_then(hex),
                    bytes.get(i + 2).copied().and_then(hex),
                ) else {
                    let end = (i + 3).min(bytes.len());
                    return Err(format!(
                        "invalid URL escape {}",
                        go_quote(&String::from_utf8_lossy(&bytes[i..end]))
                    ));
                };
                if mode == Mode::Host && high < 8 && &bytes[i..i + 3] != b"%25" {
                    return Err(format!(
                        "invalid URL escape {}",
                        go_quote(&String::from_utf8_lossy(&bytes[i..i + 3]))
                    ));
                }
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            b'+' if mode == Mode::QueryComponent => {
                out.push(b' ');
                i += 1;
            }
            c => {
                if mode == Mode::Host && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        go_quote(&char::from(c).to_string())
                    ));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> GoUrl {
        parse_request_uri(s).and_then(|_| parse(s)).unwrap_or_default()
    }

    #[test]
    fn keeps_what_go_keeps() {
        let u = url("https://user:pass@Example.com:443/a%2Fb/c%20d?k=v&k=w+x#frag");
        assert_eq!(u.scheme, "https");
        assert_eq!(u.host, "Example.com:443");
        assert_eq!(split_host_port(&u.host), ("Example.com", "443"));
        assert_eq!(u.escaped_path(), "/a%2Fb/c%20d");
        assert_eq!(u.raw_query, "k=v&k=w+x");
        assert_eq!(u.fragment, "frag");
        assert_eq!(url("https://example.com").escaped_path(), "");
        assert_eq!(url("https://example.com/a%2Fb/c d").escaped_path(), "/a/b/c%20d");
        assert_eq!(split_host_port("[::1]:80"), ("::1", "80"));
        assert_eq!(split_host_port("[::1]"), ("::1", ""));
    }

    #[test]
    fn rejects_what_go_rejects() {
        assert_eq!(
            parse_request_uri("../relative-path").map(|_| ()),
            Err("parse \"../relative-path\": invalid URI for request".into())
        );
        assert_eq!(
            parse_request_uri("https://a:b:c/").map(|_| ()),
            Err("parse \"https://a:b:c/\": invalid port \":c\" after host".into())
        );
        assert!(parse_request_uri("https://exa mple.com/").is_err());
        assert!(parse_request_uri("https://example.com/%zz").is_err());
        assert!(parse_request_uri("/absolute-path").is_ok());
        assert!(parse_request_uri("mailto:someone@example.com").is_ok());
    }
}
