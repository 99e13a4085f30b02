//! Positions in an expression's source: turning the parser's line/column into byte offsets and
//! finding where a name or literal stands, so compile errors put their caret in the right place.

use crate::cel::CompileError;
use crate::cel::quotes::Rewritten;

/// The first parse error of `parsed` (the source as the parser read it), placed in `source`.
pub(crate) fn parse_error(
    source: &str,
    parsed: &Rewritten<'_>,
    errors: &crate::cel::upstream::ParseErrors,
) -> CompileError {
    let Some(first) = errors.errors.first() else {
        return CompileError::new("syntax error", source, 0, 0);
    };
    let (line, column) = first.pos;
    let offset = parsed.original_offset(offset_of(
        &parsed.text,
        line.max(1) as usize,
        column.max(1) as usize,
    ));
    let message = if first.msg == "UNKNOWN" {
        "syntax error".to_owned()
    } else {
        first.msg.clone()
    };
    CompileError::new(message, source, offset, 1)
}

/// Byte offset of a 1-based line and 1-based column (in characters).
pub(crate) fn offset_of(source: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (index, text) in source.split_inclusive('\n').enumerate() {
        if index + 1 == line {
            return offset
                + text
                    .char_indices()
                    .nth(column.saturating_sub(1))
                    .map_or(text.len(), |(i, _)| i);
        }
        offset += text.len();
    }
    source.len()
}

/// Byte offset of the quote opening the string literal whose text is `text`.
pub(crate) fn find_literal(source: &str, text: &str) -> Option<usize> {
    ['\'', '"'].iter().find_map(|quote| {
        let needle = format!("{quote}{text}{quote}");
        source.find(&needle).map(|i| {
            if source[..i].ends_with('r') || source[..i].ends_with('R') {
                i - 1
            } else {
                i
            }
        })
    })
}

/// Byte offset of the first whole-word occurrence of `word` outside string literals.
pub(crate) fn find_word(source: &str, word: &str) -> Option<usize> {
    if word.is_empty() {
        return None;
    }
    let bytes = source.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) => {
                if b == b'\\' {
                    i += 1;
                } else if b == q {
                    quote = None;
                }
            }
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None => {
                if bytes[i..].starts_with(word.as_bytes())
                    && (i == 0 || !is_word(bytes[i - 1]))
                    && bytes.get(i + word.len()).is_none_or(|b| !is_word(*b))
                {
                    return Some(i);
                }
            }
        }
        i += 1;
    }
    source.find(word)
}
