//! A linted file's text and the way back from what the loader knows — a line and a field, or an
//! offset inside an expression — to the file's line and column.
//!
//! An expression's text is the YAML scalar with its quoting, indentation and folding removed, so
//! an offset in it is mapped by walking the scalar in the file and the expression side by side,
//! any run of whitespace on one side matching any run on the other (a folded line break is a
//! space in the expression). Where the two stop agreeing (escapes in a quoted scalar) the
//! position falls back to the start of the value.

/// One linted file.
#[derive(Debug, Clone)]
pub(crate) struct SourceFile {
    pub(crate) name: String,
    pub(crate) text: String,
    /// Byte offset of the start of each line.
    starts: Vec<usize>,
}

/// A 1-based line and column (in characters) of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) line: usize,
    pub(crate) column: usize,
}

impl SourceFile {
    pub(crate) fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        let text: String = text.into();
        let text = text.strip_prefix('\u{feff}').map(str::to_owned).unwrap_or(text);
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self {
            name: name.into(),
            text,
            starts,
        }
    }

    /// The text of 1-based line `line`, without its line break.
    pub(crate) fn line(&self, line: usize) -> Option<&str> {
        let start = *self.starts.get(line.checked_sub(1)?)?;
        let end = self.starts.get(line).map_or(self.text.len(), |next| next - 1);
        self.text.get(start..end).map(|l| l.trim_end_matches('\r'))
    }

    /// Where the field whose last path segment is `key` (a map key, or `None` for a list item)
    /// is written on `line`: at its key, else at the line's first non-blank character.
    pub(crate) fn field(&self, line: usize, key: Option<&str>) -> Place {
        let text = self.line(line).unwrap_or_default();
        let byte = key
            .and_then(|key| key_offset(text, key))
            .unwrap_or_else(|| text.len() - text.trim_start().len());
        Place {
            line: line.max(1),
            column: column_of(text, byte),
        }
    }

    /// Where the list item `item` (a string) is written on `line`, after the key `key` when the
    /// list is in flow style (`resources: ["pods", "nodes"]`); else like [`field`](Self::field).
    pub(crate) fn item(&self, line: usize, key: Option<&str>, item: &str) -> Place {
        let text = self.line(line).unwrap_or_default();
        let after = key.and_then(|key| key_offset(text, key)).unwrap_or(0);
        let found = [format!("\"{item}\""), format!("'{item}'"), item.to_owned()]
            .iter()
            .find_map(|form| text[after..].find(form.as_str()).map(|i| after + i));
        match found {
            Some(byte) if !item.is_empty() => Place {
                line: line.max(1),
                column: column_of(text, byte),
            },
            _ => self.field(line, key),
        }
    }

    /// Where byte `offset` of `expression`, the value of the field `key` written on `line`, is.
    pub(crate) fn in_expression(&self, line: usize, key: &str, expression: &str, offset: usize) -> Place {
        self.walk(line, key, expression, offset).unwrap_or_else(|| {
            self.value_start(line, key)
                .unwrap_or_else(|| self.field(line, Some(key)))
        })
    }

    /// The first character of the value of `key` on `line` (past quotes and block indicators).
    fn value_start(&self, line: usize, key: &str) -> Option<Place> {
        let (line, byte) = self.value_byte(line, key)?;
        let text = self.line(line)?;
        Some(Place {
            line,
            column: column_of(text, byte),
        })
    }

    /// (line, byte in that line) where the value's characters begin.
    fn value_byte(&self, line: usize, key: &str) -> Option<(usize, usize)> {
        let text = self.line(line)?;
        let key_at = key_offset(text, key)?;
        let colon = key_at + text[key_at..].find(':')? + 1;
        let rest = &text[colon..];
        let value = colon + (rest.len() - rest.trim_start().len());
        match text[value..].chars().next() {
            Some('|' | '>') | None => {
                let mut next = line + 1;
                loop {
                    let body = self.line(next)?;
                    if !body.trim().is_empty() {
                        return Some((next, body.len() - body.trim_start().len()));
                    }
                    next += 1;
                }
            }
            Some('"' | '\'') => Some((line, value + 1)),
            Some(_) => Some((line, value)),
        }
    }

    /// Walks the value in the file and `expression` together up to `offset`.
    fn walk(&self, line: usize, key: &str, expression: &str, offset: usize) -> Option<Place> {
        let (start_line, byte) = self.value_byte(line, key)?;
        let start = self.starts.get(start_line - 1)? + byte;
        let mut file = self.text.get(start..)?.char_indices().peekable();
        let mut expr = expression.char_indices().peekable();
        let skip_space = |it: &mut std::iter::Peekable<std::str::CharIndices<'_>>| {
            while it.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        };
        skip_space(&mut expr);
        skip_space(&mut file);
        loop {
            let (at, wanted) = match expr.peek() {
                Some(&(at, c)) => (at, Some(c)),
                None => (expression.len(), None),
            };
            if at >= offset || wanted.is_none() {
                let (file_at, _) = file.peek().copied()?;
                return Some(self.place_of(start + file_at));
            }
            match wanted {
                Some(c) if c.is_whitespace() => {
                    skip_space(&mut expr);
                    skip_space(&mut file);
                }
                Some(c) => {
                    let (_, got) = file.next()?;
                    if got != c {
                        return None;
                    }
                    expr.next();
                }
                None => return None,
            }
        }
    }

    /// The place of a byte offset of the file.
    fn place_of(&self, byte: usize) -> Place {
        let line = self.starts.partition_point(|&start| start <= byte);
        let start = self.starts.get(line.saturating_sub(1)).copied().unwrap_or(0);
        let text = self.line(line).unwrap_or_default();
        Place {
            line,
            column: column_of(text, byte - start),
        }
    }
}

/// The last key of a field path as the loader prints it (`spec.validations[0].expression` →
/// `expression`; `None` when it ends with a list index).
pub(crate) fn last_key(field: &str) -> Option<&str> {
    if field.ends_with(']') {
        let open = field.rfind('[')?;
        let inside = &field[open + 1..field.len() - 1];
        return inside.strip_prefix('"').and_then(|k| k.strip_suffix('"'));
    }
    Some(field.rsplit('.').next().unwrap_or(field))
}

/// Byte offset of `key` written as a mapping key on `text` (`key:`, `"key":`, `'key':`).
fn key_offset(text: &str, key: &str) -> Option<usize> {
    let boundary = |i: usize| {
        text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    };
    let forms = [format!("\"{key}\""), format!("'{key}'"), key.to_owned()];
    forms.iter().find_map(|form| {
        text.match_indices(form.as_str())
            .map(|(i, _)| i)
            .find(|&i| boundary(i) && text[i + form.len()..].trim_start().starts_with(':'))
    })
}

/// 1-based character column of a byte offset of `text`.
fn column_of(text: &str, byte: usize) -> usize {
    let mut byte = byte.min(text.len());
    while !text.is_char_boundary(byte) {
        byte -= 1;
    }
    text[..byte].chars().count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "spec:\n  validations:\n  - expression: \"object.a > 1\"\n  - expression: >-\n      object.b ||\n      object.c == 2\n  - expression: |\n      x &&\n        false\n  - {\"expression\": 'y'}\n";

    #[test]
    fn fields_are_placed_at_their_keys() {
        let file = SourceFile::new("p.yaml", FILE);
        assert_eq!(file.field(2, Some("validations")), Place { line: 2, column: 3 });
        assert_eq!(file.field(3, None), Place { line: 3, column: 3 });
        assert_eq!(file.field(10, Some("expression")), Place { line: 10, column: 6 });
        let flow = SourceFile::new("p.yaml", "  resources: [\"pods\", \"nodes\"]\n");
        assert_eq!(
            flow.item(1, Some("resources"), "nodes"),
            Place { line: 1, column: 23 }
        );
    }

    #[test]
    fn offsets_in_quoted_folded_and_literal_scalars() {
        let file = SourceFile::new("p.yaml", FILE);
        assert_eq!(
            file.in_expression(3, "expression", "object.a > 1", 11),
            Place { line: 3, column: 29 }
        );
        let folded = "object.b || object.c == 2";
        assert_eq!(
            file.in_expression(4, "expression", folded, folded.find("==").unwrap_or(0)),
            Place { line: 6, column: 16 }
        );
        let literal = "x &&\n  false\n";
        assert_eq!(
            file.in_expression(7, "expression", literal, 7),
            Place { line: 9, column: 9 }
        );
        assert_eq!(
            file.in_expression(10, "expression", "y", 0),
            Place { line: 10, column: 21 }
        );
    }

    #[test]
    fn escapes_fall_back_to_the_value() {
        let file = SourceFile::new("p.json", "{\"expression\": \"a == \\\"b\\\"\"}\n");
        assert_eq!(
            file.in_expression(1, "expression", "a == \"b\"", 7),
            Place { line: 1, column: 17 }
        );
    }

    #[test]
    fn last_keys() {
        assert_eq!(last_key("spec.validations[0].expression"), Some("expression"));
        assert_eq!(last_key("spec.validations[0]"), None);
        assert_eq!(last_key("metadata.annotations[\"a.b/c\"]"), Some("a.b/c"));
        assert_eq!(last_key("kind"), Some("kind"));
    }
}
