//! What a raw value's validation lets through that a parse refuses. serde_json checks the syntax
//! of a [`RawValue`](serde_json::value::RawValue) without decoding it: an escaped UTF-16
//! surrogate that is not half of a pair (`"\uDC00"`) and a number beyond `f64` (`1e400`, or 400
//! digits) pass, and fail only when the text is parsed. The one-pass review reader keeps text for
//! later parsing and promises that it will parse, so it leaves a body that may hold either to the
//! typed reading, whose error names the fault.

use memchr::memmem;

/// The fewest digits in a row that can overflow `f64` (`f64::MAX` is about 1.8e308).
const OVERFLOWING_DIGITS: usize = 309;

/// Whether `text` may hold an escaped surrogate or a number beyond `f64`. Looked for in the bytes
/// alone, strings included, so it over-approximates (a valid surrogate pair, `"1e100"` inside a
/// string): a body it flags is only read the slower, typed way.
pub(crate) fn beyond_raw_validation(text: &[u8]) -> bool {
    escaped_surrogate(text) || large_exponent(text) || long_digit_run(text)
}

/// `\uD800` to `\uDFFF`, in any case.
fn escaped_surrogate(text: &[u8]) -> bool {
    memmem::find_iter(text, br"\u").any(|at| {
        matches!(text.get(at + 2), Some(b'd' | b'D'))
            && matches!(text.get(at + 3), Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
    })
}

/// A number with an exponent of three digits or more: `1e309` and `-2.5E+400` overflow, `1e100`
/// and `1e-300` would not (over-approximated, like the rest). Only where a JSON value can start,
/// so that the hex of a uid, a resourceVersion or an image digest (`…-8e569…`, `sha256:…4e123…`)
/// does not send every review that carries one the slower way.
///
/// An exponent's `e` follows a digit of its mantissa, and few of a review's `e`s do (its keys
/// and words are full of them: a search for every `e` stopped about once every ten bytes). So
/// the text is passed over in blocks, each checked for a digit followed by `e` or `E` without a
/// branch per byte; only a block holding one is looked at closely.
fn large_exponent(text: &[u8]) -> bool {
    const BLOCK: usize = 64;
    let mut start = 1;
    while start < text.len() {
        let end = (start + BLOCK).min(text.len());
        let letters = &text[start..end];
        let before = &text[start - 1..end - 1];
        let candidate = letters
            .iter()
            .zip(before)
            .fold(false, |found, (&letter, &before)| {
                found | ((letter | 0x20) == b'e') & before.is_ascii_digit()
            });
        if candidate && (start..end).any(|at| large_exponent_at(text, at)) {
            return true;
        }
        start = end;
    }
    false
}

/// Whether an exponent of three digits or more starts at `text[at]` (an `e` or `E`), in a number
/// where a value can start.
fn large_exponent_at(text: &[u8], at: usize) -> bool {
    if !matches!(text[at], b'e' | b'E') {
        return false;
    }
    let rest = &text[at + 1..];
    let rest = rest
        .strip_prefix(b"+")
        .or_else(|| rest.strip_prefix(b"-"))
        .unwrap_or(rest);
    let long_exponent = rest.iter().take(3).filter(|b| b.is_ascii_digit()).count() == 3;
    long_exponent && starts_a_number(&text[..at])
}

/// Whether `before` ends with the mantissa of a JSON number (`-`, digits, `.`) where a value can
/// start: after `:`, `,`, `[`, whitespace, or at the start of the text.
fn starts_a_number(before: &[u8]) -> bool {
    let mantissa = before
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit() || **b == b'.')
        .count();
    let ends_in_digit = before.last().is_some_and(u8::is_ascii_digit);
    let mut start = before.len() - mantissa;
    if start > 0 && before[start - 1] == b'-' {
        start -= 1;
    }
    ends_in_digit
        && (start == 0
            || matches!(
                before[start - 1],
                b':' | b',' | b'[' | b' ' | b'\t' | b'\n' | b'\r'
            ))
}

/// [`OVERFLOWING_DIGITS`] digits in a row. Such a run covers a multiple of
/// `OVERFLOWING_DIGITS - 1`, so only those bytes are looked at first.
fn long_digit_run(text: &[u8]) -> bool {
    let stride = OVERFLOWING_DIGITS - 1;
    (stride..text.len()).step_by(stride).any(|at| {
        if !text[at].is_ascii_digit() {
            return false;
        }
        let before = text[..at].iter().rev().take_while(|b| b.is_ascii_digit()).count();
        let after = text[at..].iter().take_while(|b| b.is_ascii_digit()).count();
        before + after >= OVERFLOWING_DIGITS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_what_a_parse_refuses() {
        for text in [
            r#"{"a":"\uDC00"}"#,
            r#"{"a":"\ud800x"}"#,
            r#"{"a":1e400}"#,
            r#"{"a":-2.5E+309}"#,
            r#"[0.5e999]"#,
            "{\"a\":\n  1e400}",
        ] {
            assert!(serde_json::from_str::<serde_json::Value>(text).is_err(), "{text}");
            assert!(beyond_raw_validation(text.as_bytes()), "{text}");
        }
        let digits = format!(r#"{{"a":{}}}"#, "9".repeat(400));
        assert!(serde_json::from_str::<serde_json::Value>(&digits).is_err());
        assert!(beyond_raw_validation(digits.as_bytes()));
    }

    /// The blocks find what a look at every `e` finds, wherever a block ends.
    #[test]
    fn blocks_find_what_every_e_finds() {
        let every_e =
            |text: &[u8]| memchr::memchr2_iter(b'e', b'E', text).any(|at| large_exponent_at(text, at));
        let mut texts: Vec<Vec<u8>> = Vec::new();
        for pad in 0..140 {
            for number in ["1e400", "1E+400", "-2.5e-300", "1e30", "x9e999", "9e99"] {
                texts.push(format!(r#"{{"{}":{number},"k":"e1e"}}"#, "a".repeat(pad)).into_bytes());
            }
        }
        let reviews = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/reviews");
        for entry in std::fs::read_dir(reviews).unwrap() {
            texts.push(std::fs::read(entry.unwrap().path()).unwrap());
        }
        texts.push(b"1e400".to_vec());
        texts.push(b"e".to_vec());
        texts.push(Vec::new());
        for text in &texts {
            assert_eq!(
                large_exponent(text),
                every_e(text),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        assert!(texts.iter().filter(|t| large_exponent(t)).count() > 100);
    }

    #[test]
    fn passes_the_usual() {
        let digits = format!(r#"{{"a":{},"b":"x"}}"#, "9".repeat(308));
        for text in [
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"e1","uid":"3e5"}}"#,
            // Hex in uids and digests: no number starts there.
            r#"{"uid":"5b1c-8e569a","u":"8e569","i":"sha256:af4e1234","v":"1-2e300"}"#,
            r#"{"a":1e30,"b":"\u00e9\u2028","c":1.5e-7,"d":"caf\u00E9"}"#,
            digits.as_str(),
        ] {
            assert!(!beyond_raw_validation(text.as_bytes()), "{text}");
        }
    }
}
