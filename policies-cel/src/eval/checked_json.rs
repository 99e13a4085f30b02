//! A pass over JSON text that checks it as it goes: the one-pass review reader
//! ([`WireReview::read`](super::wire_review::WireReview::read)) checks the body and notes where
//! each value is in the same pass, so that nothing passes over the objects' text again to find
//! their fields.
//!
//! It accepts only text that serde_json parses into a tree, and refuses a little more, which the
//! caller then reads the slower, typed way (whose result or error is the reference): an escaped
//! UTF-16 surrogate (`"\uD83D\uDE00"` is valid as a pair), a number that may not fit an `f64`
//! (an exponent of three digits, or digits and exponent together reaching 300: `f64::MAX` is
//! about 1.8e308), and nesting deeper than [`MAX_DEPTH`] (serde_json refuses 128 levels). The
//! text is a `str`: its UTF-8 is checked before, as serde_json checks it in strings (outside
//! strings JSON is ASCII).

use std::borrow::Cow;
use std::ops::Range;

use crate::eval::swar::{bytes_below, bytes_equal, first_stop};

/// Deeper nesting is refused.
const MAX_DEPTH: u32 = 100;

/// Digits and exponent of a number together from which it is refused.
const NUMBER_REACH: usize = 300;

/// Where a string's scan stops: a quote, a backslash or a control character (refused).
const fn string_stop(word: u64) -> u64 {
    bytes_equal(word, b'"') | bytes_equal(word, b'\\') | bytes_below(word, 0x20)
}

/// A string read: where its text is between the quotes, and whether it has escapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Str {
    /// Between the quotes, escapes as written.
    pub inner: Range<usize>,
    /// Whether the text holds an escape (then [`Str::unescaped`] decodes it).
    pub escaped: bool,
}

impl Str {
    /// The string's value in `text` (the text it was read from).
    #[inline]
    pub(crate) fn unescaped<'t>(&self, text: &'t str) -> Option<Cow<'t, str>> {
        if self.escaped {
            self.decoded(text).map(Cow::Owned)
        } else {
            text.get(self.inner.clone()).map(Cow::Borrowed)
        }
    }

    /// The value of a string with escapes, decoded by serde_json.
    #[inline(never)]
    fn decoded(&self, text: &str) -> Option<String> {
        let quoted = text.get(self.inner.start.checked_sub(1)?..self.inner.end + 1)?;
        serde_json::from_str(quoted).ok()
    }
}

/// A position in JSON text, moved over it value by value, each value checked as it is passed.
/// Every method gives `None` when the text is refused; the position is then meaningless.
#[derive(Debug, Clone)]
pub(crate) struct Checked<'a> {
    bytes: &'a [u8],
    at: usize,
    depth: u32,
}

impl<'a> Checked<'a> {
    /// At the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            bytes: text.as_bytes(),
            at: 0,
            depth: 0,
        }
    }

    /// Where the scan is.
    pub(crate) fn position(&self) -> usize {
        self.at
    }

    /// The first byte of the value starting here, past white space.
    #[inline(always)]
    pub(crate) fn next_byte(&mut self) -> Option<u8> {
        self.skip_space();
        self.peek()
    }

    /// Whether nothing but white space is left.
    pub(crate) fn at_end(&mut self) -> bool {
        self.skip_space();
        self.at == self.bytes.len()
    }

    /// Passes and checks the value starting here (past white space) and says where it is.
    pub(crate) fn value(&mut self) -> Option<Range<usize>> {
        self.skip_space();
        let start = self.at;
        self.pass()?;
        Some(start..self.at)
    }

    /// Passes the `len` bytes of a value starting here (past white space) that are the bytes
    /// of a value checked before at the same depth (a [`Counterpart`](super::counterpart)'s).
    pub(crate) fn pass_vouched(&mut self, len: usize) -> Range<usize> {
        self.skip_space();
        let start = self.at;
        self.at = (start + len).min(self.bytes.len());
        start..self.at
    }

    /// Passes and checks the value starting here, containers and all, in one loop: the
    /// containers open are a stack of bits (set: an object), as deep as [`MAX_DEPTH`] allows.
    fn pass(&mut self) -> Option<()> {
        let base = self.depth;
        let mut objects: u128 = 0;
        loop {
            // A value is expected here.
            match self.next_byte()? {
                b'"' => drop(self.pass_string()?),
                b'{' => {
                    self.enter(b'{')?;
                    objects = objects << 1 | 1;
                    if self.next_byte()? != b'}' {
                        self.key()?;
                        continue;
                    }
                    self.leave()?;
                    objects >>= 1;
                }
                b'[' => {
                    self.enter(b'[')?;
                    objects <<= 1;
                    if self.next_byte()? != b']' {
                        continue;
                    }
                    self.leave()?;
                    objects >>= 1;
                }
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                b'-' | b'0'..=b'9' => self.number()?,
                _ => return None,
            }
            // After a value: close containers until one goes on, or the value started is done.
            loop {
                if self.depth == base {
                    return Some(());
                }
                let in_object = objects & 1 == 1;
                match self.next_byte()? {
                    b',' => {
                        self.at += 1;
                        if in_object {
                            self.key()?;
                        }
                        break;
                    }
                    b'}' if in_object => {}
                    b']' if !in_object => {}
                    _ => return None,
                }
                self.leave()?;
                objects >>= 1;
            }
        }
    }

    /// Passes an object's key and the colon after it.
    #[inline(always)]
    fn key(&mut self) -> Option<()> {
        (self.next_byte()? == b'"').then_some(())?;
        self.pass_string()?;
        (self.next_byte()? == b':').then_some(())?;
        self.at += 1;
        Some(())
    }

    /// Passes the string starting here (past white space), which must be one.
    #[inline(always)]
    pub(crate) fn string_value(&mut self) -> Option<Str> {
        (self.next_byte()? == b'"').then_some(())?;
        self.string()
    }

    /// Passes the object starting here (past white space), which must be one, handing each
    /// member's key to `member`, which must pass (and so check) its value.
    pub(crate) fn object(&mut self, mut member: impl FnMut(&mut Self, Str) -> Option<()>) -> Option<()> {
        self.members(|checked| {
            let key = checked.key_and_colon()?;
            member(checked, key)
        })
    }

    /// Passes the object starting here (past white space), which must be one, calling `member`
    /// at each member's key (past white space), which must pass the key, its colon and its value:
    /// checking them ([`Checked::key_and_colon`], then the value) or passing bytes known valid.
    pub(crate) fn members(&mut self, mut member: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.enter(b'{')?;
        if self.next_byte()? == b'}' {
            return self.leave();
        }
        loop {
            self.skip_space();
            member(self)?;
            match self.next_byte()? {
                b',' => self.at += 1,
                b'}' => return self.leave(),
                _ => return None,
            }
        }
    }

    /// Passes a member's key and the colon after it, and gives the key.
    #[inline(always)]
    pub(crate) fn key_and_colon(&mut self) -> Option<Str> {
        let key = self.string_value()?;
        (self.next_byte()? == b':').then_some(())?;
        self.at += 1;
        Some(key)
    }

    /// Passes the array starting here (past white space), which must be one, calling `element`
    /// at each element, which must pass (and so check) it.
    pub(crate) fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.enter(b'[')?;
        if self.next_byte()? == b']' {
            return self.leave();
        }
        loop {
            element(self)?;
            match self.next_byte()? {
                b',' => self.at += 1,
                b']' => return self.leave(),
                _ => return None,
            }
        }
    }

    /// Steps past the `opening` bracket starting here, one level deeper.
    #[inline(always)]
    fn enter(&mut self, opening: u8) -> Option<()> {
        (self.next_byte()? == opening).then_some(())?;
        self.depth += 1;
        self.at += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// Steps past a closing bracket, one level up.
    #[inline(always)]
    fn leave(&mut self) -> Option<()> {
        self.at += 1;
        self.depth -= 1;
        Some(())
    }

    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    #[inline(always)]
    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    #[inline(always)]
    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word).then_some(())?;
        self.at = end;
        Some(())
    }

    /// The string starting at its opening quote.
    #[inline(always)]
    fn string(&mut self) -> Option<Str> {
        let start = self.at + 1;
        let escaped = self.pass_string()?;
        Some(Str {
            inner: start..self.at - 1,
            escaped,
        })
    }

    /// Passes the string starting at its opening quote, eight bytes at a time while eight are
    /// left; says whether it has escapes.
    #[inline(always)]
    fn pass_string(&mut self) -> Option<bool> {
        let bytes = self.bytes;
        let mut at = self.at + 1;
        let mut escaped = false;
        loop {
            at = first_stop(bytes, at, string_stop);
            // Past the last eight bytes, one at a time.
            while bytes
                .get(at)
                .is_some_and(|&byte| !matches!(byte, b'"' | b'\\') && byte >= 0x20)
            {
                at += 1;
            }
            let stop = *bytes.get(at)?;
            match stop {
                b'"' => {
                    self.at = at + 1;
                    return Some(escaped);
                }
                b'\\' => {
                    escaped = true;
                    at = self.escape(at + 1)?;
                }
                _ => return None,
            }
        }
    }

    /// Past the escape whose letter is at `at` (after the backslash).
    fn escape(&self, at: usize) -> Option<usize> {
        match *self.bytes.get(at)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(at + 1),
            b'u' => {
                let digits = self.bytes.get(at + 1..at + 5)?;
                let unit = digits.iter().try_fold(0_u32, |unit, &digit| {
                    Some(unit * 16 + char::from(digit).to_digit(16)?)
                })?;
                // Half of a pair, which a raw check cannot vouch for.
                (!(0xD800..=0xDFFF).contains(&unit)).then_some(at + 5)
            }
            _ => None,
        }
    }

    /// `-`, an integer without leading zeros, an optional fraction and exponent.
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let integer = match self.peek()? {
            b'0' => {
                self.at += 1;
                1
            }
            b'1'..=b'9' => self.digits(),
            _ => return None,
        };
        let mut fraction = 0;
        if self.peek() == Some(b'.') {
            self.at += 1;
            fraction = self.digits();
            (fraction > 0).then_some(())?;
        }
        let mut exponent = 0;
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            let start = self.at;
            let count = self.digits();
            (1..=2).contains(&count).then_some(())?;
            exponent = self
                .bytes
                .get(start..self.at)?
                .iter()
                .fold(0, |n, d| n * 10 + usize::from(d - b'0'));
        }
        (integer + fraction + exponent < NUMBER_REACH).then_some(())
    }

    /// Passes the digits starting here and counts them.
    #[inline(always)]
    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - start
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value as Json;

    /// Whether the checker accepts `text` as one JSON document.
    fn accepts(text: &str) -> bool {
        let mut checked = Checked::new(text);
        checked.value().is_some() && checked.at_end()
    }

    fn serde_accepts(text: &str) -> bool {
        serde_json::from_str::<Json>(text).is_ok()
    }

    #[test]
    fn valid_documents_are_accepted() {
        for text in [
            "{}",
            "[]",
            " \t\r\n{ \"a\" : [ 1 , -0 , 0.5 , -1.25e+10 , 2E-3 , 1e99 , true , false , null ] } \n",
            r#"{"":"","a\"b":"\\\/\b\f\n\r\t\u00e9\u0041","nested":{"x":[[[]],{}]}}"#,
            r#""élan 😀 ⊕""#,
            "123456789012345678901234567890",
            "0",
            "-0.0e0",
            r#"[{"a":{"b":{"c":[1,2,{"d":null}]}}}]"#,
        ] {
            assert!(serde_accepts(text), "serde_json refuses {text}");
            assert!(accepts(text), "{text}");
        }
    }

    #[test]
    fn what_serde_json_refuses_is_refused() {
        for text in [
            "",
            " ",
            "{",
            "}",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{a:1}",
            "{'a':1}",
            "[1 2]",
            "01",
            "[01]",
            "1.",
            ".5",
            "+1",
            "-",
            "1e",
            "1e+",
            "[-]",
            "tru",
            "nul",
            "nullx",
            "[true false]",
            "\"abc",
            "\"a\u{1}b\"",
            "\"tab\tin\"",
            r#""\x""#,
            r#""\u12""#,
            r#""\u12G4""#,
            "\"\\",
            "{\"a\":1}}",
            "{\"a\":1} x",
            "[1]\u{feff}",
            "\u{feff}[1]",
            "{\"a\":1\u{a0}}",
            "NaN",
            "Infinity",
            "[1,2",
            "{\"a\":{\"b\":[}}",
            "[1}",
            "{\"a\":1]",
            "[{]}",
            "[{}}",
            "[,1]",
            "{,}",
            "{\"a\":1,,\"b\":2}",
            "{\"a\":1,}",
            "{\"a\"}",
            "[[1],[2]",
        ] {
            assert!(!serde_accepts(text), "serde_json accepts {text:?}");
            assert!(!accepts(text), "{text:?}");
        }
    }

    /// What serde_json accepts but a raw check cannot vouch for goes the slower way.
    #[test]
    fn what_a_check_cannot_vouch_for_is_refused() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        for text in [
            r#""\uD83D\uDE00""#.to_owned(),
            r#""\udc00""#.to_owned(),
            "1e100".to_owned(),
            "1E-300".to_owned(),
            format!("1{}", "0".repeat(300)),
            format!("1{}e99", "0".repeat(250)),
            format!("0.{}1", "0".repeat(300)),
            deep(MAX_DEPTH as usize + 1),
        ] {
            assert!(!accepts(&text), "{text}");
        }
        assert!(accepts(&deep(MAX_DEPTH as usize)));
        assert!(accepts("1e99") && accepts(&format!("1{}e9", "0".repeat(280))));
        // Beyond f64, refused by serde_json too.
        for beyond in [format!("1{}e99", "0".repeat(260)), "1e400".to_owned()] {
            assert!(!serde_accepts(&beyond) && !accepts(&beyond), "{beyond}");
        }
    }

    #[test]
    fn strings_and_values_are_placed() {
        let text = r#" {"k\"ey" : "v\u00e9" , "n": [1, {"x": 2}] } "#;
        let mut checked = Checked::new(text);
        let mut seen = Vec::new();
        let whole = checked
            .object(|checked, key| {
                let value = checked.value()?;
                seen.push((key.unescaped(text)?.into_owned(), key.escaped, &text[value]));
                Some(())
            })
            .map(|()| checked.position());
        assert_eq!(whole, Some(text.len() - 1));
        assert_eq!(
            seen,
            [
                ("k\"ey".to_owned(), true, r#""v\u00e9""#),
                ("n".to_owned(), false, r#"[1, {"x": 2}]"#),
            ]
        );
        assert_eq!(Checked::new("[1]").string_value(), None, "not a string");
        assert_eq!(
            Checked::new("\"a\"").object(|_, _| Some(())),
            None,
            "not an object"
        );
    }

    /// Every recorded review, whole and mutated byte by byte (cut short, a byte replaced by one
    /// that matters to JSON, a byte left out): whatever the checker accepts, serde_json parses;
    /// and it accepts each review as recorded.
    #[test]
    fn mutated_reviews_are_never_accepted_when_serde_json_refuses_them() {
        const BYTES: &[u8] = b"\"\\{}[],:0-e.+ \x01ut9E\x7f";
        let mut refused = 0;
        let mut accepted = 0;
        for (path, body) in crate::eval::review::tests::recorded_reviews() {
            let name = path.display();
            let Ok(text) = std::str::from_utf8(&body) else {
                continue;
            };
            let surrogate = text.contains("\\ud") || text.contains("\\uD");
            assert!(accepts(text) || surrogate, "{name} is refused");
            let mut mutated = Vec::with_capacity(body.len());
            for at in (0..body.len()).step_by(31) {
                let byte = BYTES[at % BYTES.len()];
                for variant in 0..3 {
                    mutated.clear();
                    match variant {
                        0 => mutated.extend_from_slice(&body[..at]),
                        1 => {
                            mutated.extend_from_slice(&body);
                            mutated[at] = byte;
                        }
                        _ => {
                            mutated.extend_from_slice(&body[..at]);
                            mutated.extend_from_slice(&body[at + 1..]);
                        }
                    }
                    let Ok(text) = std::str::from_utf8(&mutated) else {
                        continue;
                    };
                    if accepts(text) {
                        assert!(serde_accepts(text), "{name}, mutation {variant} at {at}: {text}");
                        accepted += 1;
                    } else {
                        refused += 1;
                    }
                }
            }
        }
        assert!(refused > 1000 && accepted > 1000, "{refused} / {accepted}");
    }
}
