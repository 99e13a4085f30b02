//! Escaped quotes in string literals, as CEL defines them: `\'` and `\"` are escapes in any
//! (non-raw) string, whichever quote delimits it, so `"\'" == "'"` and `'\"' == '"'`.
//!
//! The `cel` crate's parser keeps the backslash of the quote that does not delimit the literal
//! (`"\'"` becomes the two characters `\'`), and keeps no positions after a successful parse, so
//! the literal cannot be mended afterwards. Instead the source is rewritten before parsing: each
//! such escape becomes the hex escape of the same character (`\x27`, `\x22`), which the parser
//! reads right. Raw strings (`r'...'`) and comments are left alone. [`Rewritten::original_offset`]
//! maps a position in the rewritten text back to the source, for carets.

use std::borrow::Cow;

/// An expression's source, ready for the parser.
pub(crate) struct Rewritten<'a> {
    pub text: Cow<'a, str>,
    /// Where each rewritten escape starts in the rewritten text, in order.
    rewrites: Vec<usize>,
}

/// Each rewrite turns two bytes into four.
const GROWTH: usize = 2;

impl Rewritten<'_> {
    /// The offset in the original source of `offset` in the rewritten text.
    pub(crate) fn original_offset(&self, offset: usize) -> usize {
        let before = self.rewrites.iter().take_while(|&&start| start < offset).count();
        offset.saturating_sub(before * GROWTH)
    }
}

/// Rewrites `\'` inside `"`-strings and `\"` inside `'`-strings (triple-quoted too) as hex escapes.
pub(crate) fn rewrite_quote_escapes(source: &str) -> Rewritten<'_> {
    let bytes = source.as_bytes();
    let mut out: Option<String> = None;
    let mut rewrites = Vec::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n);
            }
            quote @ (b'"' | b'\'') => {
                let end = literal_end(bytes, i);
                if !is_raw_prefix(&bytes[..i]) {
                    let other = if quote == b'"' { b'\'' } else { b'"' };
                    // Escapes inside the literal, its closing quote(s) excluded.
                    let mut at = i + 1;
                    while at + 1 < end {
                        if bytes[at] != b'\\' {
                            at += 1;
                            continue;
                        }
                        if bytes[at + 1] == other {
                            let text = out.get_or_insert_with(|| String::with_capacity(source.len() + 8));
                            text.push_str(&source[copied..at]);
                            rewrites.push(text.len());
                            text.push_str(if other == b'\'' { "\\x27" } else { "\\x22" });
                            copied = at + 2;
                        }
                        at += 2;
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    let text = match out {
        Some(mut text) => {
            text.push_str(&source[copied..]);
            Cow::Owned(text)
        }
        None => Cow::Borrowed(source),
    };
    Rewritten { text, rewrites }
}

/// The offset just past the string literal whose opening quote is at `start`, read as the lexer
/// reads it: a raw literal (`r'…'`, [`is_raw_prefix`]) has no escapes, and a one-line literal ends
/// at its line. A literal the lexer cannot close is no literal to it (it drops the quote and
/// reads on): then only the quote is skipped.
pub(crate) fn literal_end(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let raw = is_raw_prefix(&bytes[..start]);
    let triple = bytes.get(start + 1) == Some(&quote) && bytes.get(start + 2) == Some(&quote);
    let unclosed = start + 1;
    let mut i = start + if triple { 3 } else { 1 };
    while i < bytes.len() {
        match bytes[i] {
            b'\n' | b'\r' if !triple => return unclosed,
            b'\\' if !raw => {
                if !triple && matches!(bytes.get(i + 1), Some(b'\n' | b'\r')) {
                    return unclosed;
                }
                i += 2;
            }
            b if b == quote && !triple => return i + 1,
            b if b == quote && bytes.get(i + 1) == Some(&quote) && bytes.get(i + 2) == Some(&quote) => {
                return i + 3;
            }
            _ => i += 1,
        }
    }
    unclosed
}

/// True when the quote after `before` opens a raw string: an `r`/`R` prefix, alone or beside a
/// bytes prefix (`rb`, `bR`, ...), that is not the end of an identifier.
fn is_raw_prefix(before: &[u8]) -> bool {
    let prefix_len = before
        .iter()
        .rev()
        .take(2)
        .take_while(|b| matches!(b, b'r' | b'R' | b'b' | b'B'))
        .count();
    let prefix = &before[before.len() - prefix_len..];
    let starts_word = before
        .len()
        .checked_sub(prefix_len + 1)
        .is_none_or(|i| !(before[i].is_ascii_alphanumeric() || before[i] == b'_'));
    starts_word && prefix.iter().any(|b| matches!(b, b'r' | b'R'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(source: &str) -> String {
        rewrite_quote_escapes(source).text.into_owned()
    }

    #[test]
    fn the_other_quote_escaped_becomes_a_hex_escape() {
        assert_eq!(text(r#""\'""#), r#""\x27""#);
        assert_eq!(text(r#"'\"'"#), r#"'\x22'"#);
        assert_eq!(text(r#""""it\'s""""#), r#""""it\x27s""""#);
        assert_eq!(text(r#"'''say \"hi\"'''"#), r#"'''say \x22hi\x22'''"#);
    }

    #[test]
    fn everything_else_is_left_alone() {
        for source in [
            r#""\"" + '\''"#,
            r#"r"\'" + R'\"'"#,
            r#"rb"\'" + bR'\"'"#,
            r#""\\" + '\\'"#,
            "a // \"\\'\"\n + 'x'",
            r#"x"\'""#,
        ] {
            let rewritten = rewrite_quote_escapes(source);
            let escaped = source.starts_with("x\"");
            assert_eq!(matches!(rewritten.text, Cow::Borrowed(_)), !escaped, "{source}");
        }
        // `x"..."` is no raw string: `x` is an identifier, not a prefix.
        assert_eq!(text(r#"x"\'""#), r#"x"\x27""#);
        // An escaped backslash before a quote is not an escaped quote.
        assert_eq!(text(r#""\\'""#), r#""\\'""#);
    }

    #[test]
    fn offsets_map_back_to_the_source() {
        let source = r#""\'" + "\'" + bad"#;
        let rewritten = rewrite_quote_escapes(source);
        let bad = rewritten.text.find("bad").unwrap();
        assert_eq!(rewritten.original_offset(bad), source.find("bad").unwrap());
        assert_eq!(rewritten.original_offset(0), 0);
    }
}
