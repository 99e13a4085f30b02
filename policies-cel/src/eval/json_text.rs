//! Reading JSON text without building a tree: the value at a path ([`find`]), and whether the
//! text equals a tree ([`equals`]), over a [`Scan`] that passes values eight bytes at a time
//! (the outline of an object and the pruned parse use it too). A request's objects are often
//! read only for a field or two (a workload's pod template, to compare; an escape-hatch
//! annotation): skipping over text allocates nothing, where parsing it into a tree allocated
//! every key and string of the object (and freeing them cost as much again).
//!
//! Both read exactly as `serde_json::Value` would (a repeated key keeps its last value, numbers
//! compare as serde_json's `Number` does), so they never disagree with the tree they stand in for.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;

use crate::eval::swar::{bytes_equal, first_stop, fold_brackets};

/// The text of the value at `path` (object keys from the root) in `text`, a JSON document
/// already read as valid (an object's text in a review that was read): found by skipping over
/// the text, nothing parsed. `None` when a step is missing or not an object. Text that is not
/// valid JSON gives no answer or a wrong one, never a panic.
pub(crate) fn find<'a>(text: &'a str, path: &[&str]) -> Option<&'a str> {
    text.get(find_range(text, path)?)
}

/// Where [`find`]'s value is in `text`.
pub(crate) fn find_range(text: &str, path: &[&str]) -> Option<Range<usize>> {
    Scan::new(text).find(path)
}

/// Whether the JSON document `text` parses to a value equal to `expected`. Equal text is read
/// once, without a tree; at the first difference (or a repeated key, where a later value would
/// replace the one compared) the comparison stops and the parsed text decides.
pub(crate) fn equals(text: &str, expected: &Json) -> bool {
    let mut reader = serde_json::Deserializer::from_str(text);
    let same = Equals(expected)
        .deserialize(&mut reader)
        .and_then(|()| reader.end())
        .is_ok();
    same || serde_json::from_str::<Json>(text).is_ok_and(|tree| tree == *expected)
}

/// The string `text` (a JSON value's text) holds; `None` when it is not a string.
pub(crate) fn as_str(text: &str) -> Option<Cow<'_, str>> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(text).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// An object's key as it stands in the text, between its quotes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawKey<'a> {
    /// The text between the quotes, escapes as written.
    pub raw: &'a str,
    /// Where `raw` starts in the text scanned.
    pub start: usize,
}

impl<'a> RawKey<'a> {
    /// Whether the key holds an escape.
    pub(crate) fn has_escape(&self) -> bool {
        has_backslash(self.raw)
    }

    /// Whether the key is `wanted` (unescaped first only when it has escapes). An escape is
    /// longer written than what it stands for, so a key with escapes is longer than its text
    /// unescaped: most keys are told apart by their length alone, and most longer keys by their
    /// first byte (which is the first character unescaped unless it begins an escape).
    pub(crate) fn is(&self, wanted: &str) -> bool {
        match self.raw.len().cmp(&wanted.len()) {
            std::cmp::Ordering::Less => false,
            // Equal bytes hold a backslash in both or in neither: a key with one stands for less.
            std::cmp::Ordering::Equal => self.raw == wanted && !has_backslash(wanted),
            std::cmp::Ordering::Greater => {
                let first = self.raw.as_bytes().first().copied();
                (first == Some(b'\\') || first == wanted.as_bytes().first().copied())
                    && has_backslash(self.raw)
                    && self.unescaped() == wanted
            }
        }
    }

    /// The key, unescaped when it has escapes.
    pub(crate) fn unescaped(&self) -> Cow<'a, str> {
        if has_backslash(self.raw) {
            serde_json::from_str::<String>(&format!("\"{}\"", self.raw))
                .map_or(Cow::Borrowed(self.raw), Cow::Owned)
        } else {
            Cow::Borrowed(self.raw)
        }
    }
}

/// Whether the key written at `range` of `text` (between its quotes) is `wanted`, knowing
/// whether it holds an escape (an outline notes it): byte for byte when it holds none, else as
/// [`RawKey::is`] reads escapes.
#[inline]
pub(crate) fn written_key_is(text: &str, range: Range<usize>, escaped: bool, wanted: &str) -> bool {
    if escaped {
        let start = range.start;
        return text
            .get(range)
            .is_some_and(|raw| RawKey { raw, start }.is(wanted));
    }
    text.as_bytes().get(range) == Some(wanted.as_bytes())
}

/// Whether `key` holds a backslash: a loop over its bytes, which for a key (a few bytes to a few
/// dozen) costs less than setting up `str::contains`' search.
fn has_backslash(key: &str) -> bool {
    key.bytes().any(|byte| byte == b'\\')
}

/// Where the first of the bytes `in_string` looks for is in the eight bytes of `word`: a
/// quote or a backslash.
const fn string_stop(word: u64) -> u64 {
    bytes_equal(word, b'"') | bytes_equal(word, b'\\')
}

/// The same for the bytes that matter between brackets: strings and nesting (`"{}[]`; `[`
/// and `]` are `{` and `}` with bit 5 clear).
const fn container_stop(word: u64) -> u64 {
    let folded = fold_brackets(word);
    bytes_equal(word, b'"') | bytes_equal(folded, b'{') | bytes_equal(folded, b'}')
}

/// A position in valid JSON text, moved over it value by value.
pub(crate) struct Scan<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    /// At the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            at: 0,
        }
    }

    /// The value at `path` below the value that starts here; the whole value is passed over.
    fn find(&mut self, path: &[&str]) -> Option<Range<usize>> {
        let Some((first, rest)) = path.split_first() else {
            return Some(self.value());
        };
        let mut found = None;
        let object = self.members(|scan, key| {
            if key.is(first) {
                // A repeated key keeps its last value, as the tree does.
                found = scan.find(rest);
            } else {
                scan.skip_value();
            }
        });
        object.and(found)
    }

    /// Passes the value starting here and says where it is.
    pub(crate) fn value(&mut self) -> Range<usize> {
        self.skip_space();
        let start = self.at;
        self.skip_value();
        start..self.at.min(self.bytes.len())
    }

    /// Whether the value starting here is an object.
    pub(crate) fn at_object(&mut self) -> bool {
        self.skip_space();
        self.peek() == Some(b'{')
    }

    /// Passes the object starting here, handing each key to `member`, which must pass its
    /// value. `None` (with the value passed over) when the value is not an object.
    pub(crate) fn members(&mut self, mut member: impl FnMut(&mut Self, RawKey<'a>)) -> Option<()> {
        self.enter(b'{')?;
        loop {
            self.skip_space();
            match self.peek() {
                Some(b'"') => {}
                Some(b'}') => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
            let key = self.key()?;
            self.skip_space();
            if self.peek() != Some(b':') {
                return None;
            }
            self.at += 1;
            member(self, key);
            self.skip_space();
            if self.peek() == Some(b',') {
                self.at += 1;
            }
        }
    }

    /// Steps into the object or array (by its `opening` bracket) starting here; `None`, with the
    /// value passed over, when the value is something else.
    fn enter(&mut self, opening: u8) -> Option<()> {
        self.skip_space();
        if self.peek() != Some(opening) {
            self.skip_value();
            return None;
        }
        self.at += 1;
        Some(())
    }

    /// Passes the array starting here, calling `element` at each element, which must pass it.
    /// `None` (with the value passed over) when the value is not an array.
    pub(crate) fn elements(&mut self, mut element: impl FnMut(&mut Self)) -> Option<()> {
        self.enter(b'[')?;
        loop {
            self.skip_space();
            match self.peek() {
                Some(b']') => {
                    self.at += 1;
                    return Some(());
                }
                None => return None,
                Some(_) => {}
            }
            let before = self.at;
            element(self);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {}
                _ => return None,
            }
            // Text that is not JSON (a stray `:`) must not hold the scan in place.
            if self.at == before {
                return None;
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// The key starting here (its quote), unescaped only when it has escapes.
    fn key(&mut self) -> Option<RawKey<'a>> {
        let start = self.at + 1;
        self.skip_string();
        let raw = self.text.get(start..self.at.checked_sub(1)?)?;
        Some(RawKey { raw, start })
    }

    /// Where the scan is.
    pub(crate) fn position(&self) -> usize {
        self.at
    }

    /// Passes the string starting here (its opening quote), eight bytes at a time.
    fn skip_string(&mut self) {
        let mut at = self.at + 1;
        loop {
            at = first_stop(self.bytes, at, string_stop);
            match self.bytes.get(at) {
                Some(b'"') => {
                    self.at = at + 1;
                    return;
                }
                // A backslash and the character it escapes.
                Some(b'\\') => at += 2,
                // Fewer than eight bytes were left: one at a time.
                Some(_) => at += 1,
                None => {
                    self.at = self.bytes.len();
                    return;
                }
            }
        }
    }

    /// Passes the value starting here: a string, an object or array with everything in it, or
    /// a number, `true`, `false` or `null`.
    fn skip_value(&mut self) {
        self.skip_space();
        match self.peek() {
            Some(b'"') => self.skip_string(),
            Some(b'{' | b'[') => {
                self.at += 1;
                let mut depth = 1_usize;
                loop {
                    self.at = first_stop(self.bytes, self.at, container_stop);
                    match self.peek() {
                        Some(b'"') => self.skip_string(),
                        Some(b'{' | b'[') => {
                            depth += 1;
                            self.at += 1;
                        }
                        Some(b'}' | b']') => {
                            depth -= 1;
                            self.at += 1;
                            if depth == 0 {
                                return;
                            }
                        }
                        // Fewer than eight bytes were left: one at a time.
                        Some(_) => self.at += 1,
                        None => return,
                    }
                }
            }
            Some(_) => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.at += 1;
                }
            }
            None => {}
        }
    }
}

/// A map key, borrowed from the text unless it has escapes.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

/// Deserializes a value, comparing it with the expected one on the way: a difference is an
/// error, which stops the reading.
struct Equals<'e>(&'e Json);

impl Equals<'_> {
    fn check<E: de::Error>(same: bool) -> Result<(), E> {
        if same {
            Ok(())
        } else {
            Err(E::custom("the text differs here"))
        }
    }
}

impl<'de> DeserializeSeed<'de> for Equals<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Equals<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Json::Object(expected) = self.0 else {
            return Self::check(false);
        };
        // The expected entries met so far, by their place in the map: meeting one twice is a
        // repeated key in the text (whose last value counts), left to the tree.
        if expected.len() > 64 {
            return Self::check(false);
        }
        let mut met = 0_u64;
        while let Some(key) = map.next_key_seed(Key)? {
            let Some((place, value)) = expected
                .iter()
                .enumerate()
                .find_map(|(place, (k, value))| (*k == *key).then_some((place, value)))
            else {
                return Self::check(false);
            };
            if met & (1 << place) != 0 {
                return Self::check(false);
            }
            met |= 1 << place;
            map.next_value_seed(Equals(value))?;
        }
        Self::check(met.count_ones() as usize == expected.len())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Json::Array(expected) = self.0 else {
            return Self::check(false);
        };
        let mut items = expected.iter();
        loop {
            let Some(item) = items.next() else {
                // The text may not have more items than expected.
                let more = seq.next_element::<IgnoredAny>()?.is_some();
                return Self::check(!more);
            };
            if seq.next_element_seed(Equals(item))?.is_none() {
                return Self::check(false);
            }
        }
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        Self::check(self.0.as_bool() == Some(v))
    }
    // serde_json reads non-negative integers as u64, negative ones as i64, the rest as f64,
    // and its `Number`s are equal only when read the same way.
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        Self::check(self.0.is_u64() && self.0.as_u64() == Some(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        Self::check(!self.0.is_u64() && self.0.is_i64() && self.0.as_i64() == Some(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        Self::check(self.0.is_f64() && self.0.as_f64() == Some(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        Self::check(self.0.as_str() == Some(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Self::check(self.0.is_null())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// Every path of object keys into `tree`, the root's empty one first.
    pub(crate) fn every_path(tree: &Json) -> Vec<Vec<&str>> {
        fn walk<'t>(tree: &'t Json, path: &mut Vec<&'t str>, out: &mut Vec<Vec<&'t str>>) {
            out.push(path.clone());
            if let Json::Object(map) = tree {
                for (key, value) in map {
                    path.push(key);
                    walk(value, path, out);
                    path.pop();
                }
            }
        }
        let mut out = Vec::new();
        walk(tree, &mut Vec::new(), &mut out);
        out
    }

    const OBJECT: &str = r#"{
        "metadata": {"name": "db", "labels": {"app": "db"}},
        "spec": {"replicas": 3, "template": {"metadata": {"labels": {"app": "db"}},
                 "spec": {"containers": [{"name": "db", "image": "pg:16", "args": ["-c", "x=1.5"]}]}},
                 "ordinals": {"start": 2}, "note": null},
        "status": {"replicas": 3}
    }"#;

    #[test]
    fn find_reads_the_value_at_a_path_as_the_tree_does() {
        let tree: Json = serde_json::from_str(OBJECT).unwrap();
        for path in [
            &["spec", "template"][..],
            &["spec", "ordinals", "start"],
            &["spec", "note"],
            &["metadata"],
            &["spec", "replicas"],
        ] {
            let text = find(OBJECT, path).unwrap_or_else(|| panic!("{path:?} found"));
            let parsed: Json = serde_json::from_str(text).unwrap();
            assert_eq!(Some(&parsed), crate::impact::field(&tree, path), "{path:?}");
        }
        for missing in [
            &["spec", "paused"][..],
            &["spec", "replicas", "x"],
            &["spec", "template", "spec", "containers", "0"],
            &["nothing"],
        ] {
            assert!(find(OBJECT, missing).is_none(), "{missing:?}");
        }
        assert!(find("[1, {\"a\": 1}]", &["a"]).is_none(), "not an object");
        for broken in ["{\"a\": 1", "{\"a", "{", "", "]]", "{\"a\": {]", "\"\\"] {
            let _ = find(broken, &["a", "b"]);
        }
    }

    #[test]
    fn find_keeps_the_last_of_a_repeated_key_and_reads_escaped_keys() {
        let text = r#"{"a": {"b": 1}, "x\u0079": 2, "a": {"b": 3}}"#;
        assert_eq!(find(text, &["a", "b"]), Some("3"));
        assert_eq!(find(text, &["xy"]), Some("2"));
        assert_eq!(
            find(r#"{"a": {"b": 1}, "a": 2}"#, &["a", "b"]),
            None,
            "the last a has no b"
        );
    }

    #[test]
    fn a_raw_key_is_the_text_it_stands_for() {
        let key = |raw| RawKey { raw, start: 0 };
        assert!(key("template").is("template"));
        assert!(key(r"t\u0065mplate").is("template"), "escaped, longer");
        assert!(key(r"a\\b").is(r"a\b"));
        assert!(
            !key(r"a\\b").is(r"a\\b"),
            "the same text, but escaped it stands for a\\b"
        );
        assert!(!key("templat").is("template"));
        assert!(!key("templates").is("template"));
        assert!(!key(r"t\u0065mplatex").is("template"));
        assert!(
            key(r"\u0074emplate").is("template"),
            "escaped from the first byte"
        );
        assert!(key(r"\\t").is(r"\t") && !key(r"x\u0074").is("tt"));
        assert!(key("").is(""));
    }

    #[test]
    fn equals_agrees_with_comparing_trees() {
        let tree: Json = serde_json::from_str(OBJECT).unwrap();
        assert!(equals(OBJECT, &tree));
        let different = [
            json!(null),
            json!([]),
            json!({}),
            json!({"metadata": tree["metadata"], "spec": tree["spec"]}),
        ];
        for expected in &different {
            assert!(!equals(OBJECT, expected), "{expected}");
        }
        let cases = [
            ("1", json!(1), true),
            ("1", json!(1.0), false),
            ("1.0", json!(1.0), true),
            ("-1", json!(-1), true),
            ("-1", json!(-1.0), false),
            ("18446744073709551615", json!(u64::MAX), true),
            ("\"a\\u0062\"", json!("ab"), true),
            ("\"ab\"", json!("abc"), false),
            ("true", json!(true), true),
            ("null", json!(false), false),
            ("[1, 2]", json!([1, 2]), true),
            ("[1, 2]", json!([1]), false),
            ("[1]", json!([1, 2]), false),
            ("{\"a\": 1}", json!({"a": 1, "b": 2}), false),
            ("{\"a\": 1, \"b\": 2}", json!({"a": 1}), false),
            (
                "{\"a\": {\"b\": [1, {\"c\": null}]}}",
                json!({"a": {"b": [1, {"c": null}]}}),
                true,
            ),
            (
                "{\"a\": {\"b\": [1, {\"c\": null}]}}",
                json!({"a": {"b": [1, {"c": 0}]}}),
                false,
            ),
            // A repeated key keeps its last value, as in the tree.
            ("{\"a\": 1, \"a\": 2}", json!({"a": 2}), true),
            ("{\"a\": 1, \"a\": 2}", json!({"a": 1}), false),
            ("{\"a\": 1, \"a\": 1}", json!({"a": 1, "b": 1}), false),
            ("not json", json!(null), false),
        ];
        for (text, expected, same) in cases {
            let tree_says = serde_json::from_str::<Json>(text).is_ok_and(|t| t == expected);
            assert_eq!(tree_says, same, "the case itself: {text} vs {expected}");
            assert_eq!(equals(text, &expected), same, "{text} vs {expected}");
        }
        // Past 64 keys the tree decides, with the same answer.
        let wide: serde_json::Map<String, Json> = (0..70).map(|n| (format!("k{n}"), json!(n))).collect();
        let wide = Json::Object(wide);
        assert!(equals(&wide.to_string(), &wide));
        assert!(!equals(&wide.to_string(), &json!({"k0": 0})));
    }

    /// Quotes, backslashes and brackets inside strings, at every place in an eight-byte word
    /// and near the end of the text, are passed over as the string they are in.
    #[test]
    fn strings_are_passed_whatever_they_hold_wherever_it_falls() {
        for len in 0..20 {
            for at in 0..=len {
                let mut content = "x".repeat(len);
                content.insert_str(at, r#"\"}]{[\\"#);
                let text = format!(r#"{{"s": "{content}", "k": [1, {{"a": "{content}"}}], "t": 2}}"#);
                let tree: Json = serde_json::from_str(&text).unwrap();
                assert_eq!(find(&text, &["t"]), Some("2"), "{text}");
                let list = find(&text, &["k"]).unwrap();
                assert_eq!(serde_json::from_str::<Json>(list).unwrap(), tree["k"], "{text}");
                let tail = format!(r#"{{"t": 2, "s": "{content}"}}"#);
                assert_eq!(
                    find(&tail, &["s"]).and_then(as_str).as_deref(),
                    tree["s"].as_str()
                );
            }
        }
    }

    /// Every path into every object of every recorded review (the repository's, and those
    /// captured from a real kube-apiserver in `../shared` when it is there): the text found is
    /// the tree's value, and equals it.
    #[test]
    fn find_and_equals_agree_with_the_tree_on_recorded_objects() {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Objects<'a> {
            #[serde(borrow)]
            object: Option<&'a serde_json::value::RawValue>,
            #[serde(borrow)]
            old_object: Option<&'a serde_json::value::RawValue>,
        }
        #[derive(serde::Deserialize)]
        struct Review<'a> {
            #[serde(borrow)]
            request: Option<Objects<'a>>,
        }
        let mut checked = 0;
        for (file, text) in crate::eval::review::tests::recorded_reviews() {
            let review: Review = serde_json::from_slice(&text).unwrap();
            let objects = review.request.into_iter().flat_map(|r| [r.object, r.old_object]);
            for object in objects.flatten() {
                let tree: Json = serde_json::from_str(object.get()).unwrap();
                let all = every_path(&tree);
                for path in &all {
                    let value = crate::impact::field(&tree, path).unwrap();
                    let found = find(object.get(), path);
                    let found = found.unwrap_or_else(|| panic!("{}: {path:?} not found", file.display()));
                    assert_eq!(&serde_json::from_str::<Json>(found).unwrap(), value, "{path:?}");
                    assert!(equals(found, value), "{}: {path:?}", file.display());
                    checked += 1;
                }
                let mut absent = all[all.len() / 2].clone();
                absent.push("no-such-field");
                assert_eq!(find(object.get(), &absent), None, "{absent:?}");
            }
        }
        let floor = if crate::eval::review::tests::shared_reviews_present() {
            500
        } else {
            300
        };
        assert!(checked > floor, "only {checked} paths checked");
    }
}
