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

#[derive(Clone, Copy)]
struct Literal {
    quote: u8,
    triple: bool,
    raw: bool,
}

/// Rewrites `\'` inside `"`-strings and `\"` inside `'`-strings (triple-quoted too) as hex escapes.
pub(crate) fn rewrite_quote_escapes(source: &str) -> Rewritten<'_> {
    let bytes = source.as_bytes();
    let mut out: Option<String> = None;
    let mut rewrites = Vec::new();
    let mut copied = 0;
    let mut literal: Option<Literal> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match literal {
            None => {
                if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
                    i = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n);
                    continue;
                }
                if b == b'"' || b == b'\'' {
                    let triple = bytes.get(i + 1) == Some(&b) && bytes.get(i + 2) == Some(&b);
                    literal = Some(Literal {
                        quote: b,
                        triple,
                        raw: is_raw_prefix(&bytes[..i]),
                    });
                    i += if triple { 3 } else { 1 };
                    continue;
                }
                i += 1;
            }
            Some(lit) => {
                if b == b'\\' && !lit.raw {
                    let other = if lit.quote == b'"' { b'\'' } else { b'"' };
                    if bytes.get(i + 1) == Some(&other) {
                        let text = out.get_or_insert_with(|| String::with_capacity(source.len() + 8));
                        text.push_str(&source[copied..i]);
                        rewrites.push(text.len());
                        text.push_str(if other == b'\'' { "\\x27" } else { "\\x22" });
                        copied = i + 2;
                    }
                    i += 2;
                    continue;
                }
                if b == lit.quote {
                    if !lit.triple {
                        literal = None;
                    } else if bytes.get(i + 1) == Some(&b) && bytes.get(i + 2) == Some(&b) {
                        literal = None;
                        i += 3;
                        continue;
                    }
                }
                i += 1;
            }
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

/// True when the quote after `before` opens a raw string: an `r`/`R` prefix, alone or beside a
/// bytes prefix (`rb`, `bR`, ...), that is not the end of an identifier.
pub(crate) fn is_raw_prefix(before: &[u8]) -> bool {
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
