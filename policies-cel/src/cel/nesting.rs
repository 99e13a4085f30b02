//! How deep an expression nests, estimated from its text before the parser sees it.
//!
//! The `cel` crate's parser bounds its recursion with a listener that counts `expr` rules on entry
//! and exit. Past the bound, the entry is refused but the exit still counts, so an expression
//! nested past the bound (fuzzing found `0[[[[…` about a hundred deep in a policy) underflows the
//! counter: a panic where overflow checks are on (debug builds, `cargo test`, the fuzz targets),
//! and a misleading recursion error where they are off. Expressions whose estimated depth passes
//! the bound are refused here instead, with a message of our own.
//!
//! The estimate never undercounts the parser's: one level per enclosing bracket (`(`, `[`, `{`)
//! and one per conditional (`?` … `:`) still open in the same bracket, as the grammar recurses
//! into `expr` for each. String literals (as the lexer reads them, [`literal_end`]) and comments
//! are skipped; the `?` of optional syntax
//! (`a.?b`, `a[?0]`, `{?k: v}`, `[?x]`) opens no level.

use crate::cel::quotes::literal_end;

/// The estimated nesting depth of `source` past `max`, as the byte offset where the depth first
/// passes it; `None` when it stays within.
pub(crate) fn deeper_than(source: &str, max: usize) -> Option<usize> {
    let bytes = source.as_bytes();
    // Open conditionals in each enclosing bracket, innermost last; the first is the top level.
    let mut frames: Vec<usize> = vec![0];
    let mut conditionals = 0;
    // The last byte that is not whitespace (outside literals and comments).
    let mut previous = b'(';
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n);
                continue;
            }
            b'"' | b'\'' => {
                i = literal_end(bytes, i);
                previous = b;
                continue;
            }
            b'(' | b'[' | b'{' => frames.push(0),
            b')' | b']' | b'}' => {
                if frames.len() > 1
                    && let Some(open) = frames.pop()
                {
                    conditionals -= open;
                }
            }
            b'?' if !matches!(previous, b'.' | b'[' | b'{' | b',' | b'(') => {
                if let Some(open) = frames.last_mut() {
                    *open += 1;
                }
                conditionals += 1;
            }
            _ => {}
        }
        if frames.len() + conditionals > max {
            return Some(i);
        }
        if !b.is_ascii_whitespace() {
            previous = b;
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_and_conditionals_each_count_one_level() {
        assert_eq!(deeper_than("f(a[0], {'k': (1)})", 4), None);
        assert_eq!(deeper_than("f(a[0], {'k': (1)})", 3), Some(14));
        assert_eq!(deeper_than("a ? b : c ? d : e", 3), None);
        assert_eq!(deeper_than("a ? b : c ? d : e", 2), Some(10));
        // A conditional closes with its bracket.
        assert_eq!(deeper_than("(a ? b : c) + (d ? e : f)", 3), None);
    }

    #[test]
    fn literals_comments_and_optional_syntax_open_nothing() {
        assert_eq!(deeper_than("'(((?' + \"[[\" + r'\\d(' + '''((('''", 1), None);
        assert_eq!(deeper_than("a // ((((\n", 1), None);
        assert_eq!(deeper_than("a.?b.orValue(1)", 2), None);
        assert_eq!(deeper_than("[?a.?b] + {?'k': x}", 2), None);
    }

    #[test]
    fn a_literal_the_lexer_cannot_close_hides_nothing() {
        // An `r` ending an identifier is no raw prefix: `\'` is an escape, and the string ends
        // after the next quote, so the brackets are code.
        assert_eq!(deeper_than("ar'\\'' + [[[1]]]", 3), Some(11));
        // A one-line literal ends at its line; an unclosed one is only its quote.
        assert_eq!(deeper_than("'abc\n[[[1]]]'", 3), Some(7));
        assert_eq!(deeper_than("'abc [[[1]]]", 3), Some(7));
        assert_eq!(deeper_than("'''abc\n[[[1]]]'''", 3), None);
    }

    #[test]
    fn deep_nesting_is_found_where_it_passes_the_bound() {
        let source = format!("x{}1{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(deeper_than(&source, 96), Some(96));
        let chain = "a ? b : ".repeat(150) + "c";
        assert!(deeper_than(&chain, 96).is_some());
    }
}
