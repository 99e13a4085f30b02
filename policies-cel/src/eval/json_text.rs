//! Reading JSON text without building a tree: the value at a path ([`find`]), and whether the
//! text equals a tree ([`equals`]). A request's `oldObject` is often read only for a field or
//! two (a workload's pod template, to compare with `object`'s; an escape-hatch annotation):
//! skipping over its text allocates nothing, where parsing it into a tree allocated every key
//! and string of the object (and freeing them cost as much again).
//!
//! Both read exactly as `serde_json::Value` would (a repeated key keeps its last value, numbers
//! compare as serde_json's `Number` does), so they never disagree with the tree they stand in for.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;

/// The text of the value at `path` (object keys from the root) in `text`, a JSON document
/// already read as valid (an object's text in a review that was read): found by skipping over
/// the text, nothing parsed. `None` when a step is missing or not an object. Text that is not
/// valid JSON gives no answer or a wrong one, never a panic.
pub(crate) fn find<'a>(text: &'a str, path: &[&str]) -> Option<&'a str> {
    text.get(find_range(text, path)?)
}

/// Where [`find`]'s value is in `text`.
pub(crate) fn find_range(text: &str, path: &[&str]) -> Option<Range<usize>> {
    let mut scan = Scan {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    scan.find(path)
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

/// The bytes that matter between an object's or array's brackets: strings and nesting.
static CONTAINER_STOPS: [bool; 256] = stops(b"\"{}[]");

const fn stops(bytes: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    table
}

/// A position in valid JSON text, moved over it value by value.
struct Scan<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    /// The value at `path` below the value that starts here; the whole value is passed over.
    fn find(&mut self, path: &[&str]) -> Option<Range<usize>> {
        self.skip_space();
        let Some((first, rest)) = path.split_first() else {
            let start = self.at;
            self.skip_value();
            return Some(start..self.at.min(self.bytes.len()));
        };
        if self.peek() != Some(b'{') {
            self.skip_value();
            return None;
        }
        self.at += 1;
        let mut found = None;
        loop {
            self.skip_space();
            match self.peek() {
                Some(b'"') => {}
                Some(b'}') => {
                    self.at += 1;
                    return found;
                }
                _ => return None,
            }
            let key = self.key()?;
            self.skip_space();
            if self.peek() != Some(b':') {
                return None;
            }
            self.at += 1;
            if key == *first {
                // A repeated key keeps its last value, as the tree does.
                found = self.find(rest);
            } else {
                self.skip_value();
            }
            self.skip_space();
            if self.peek() == Some(b',') {
                self.at += 1;
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
    fn key(&mut self) -> Option<Cow<'a, str>> {
        let start = self.at;
        self.skip_string();
        as_str(self.text.get(start..self.at)?)
    }

    /// Passes the string starting here (its opening quote). Its text is searched for the
    /// closing quote or a backslash many bytes at a time.
    fn skip_string(&mut self) {
        let mut at = self.at + 1;
        loop {
            let rest = self.bytes.get(at..).unwrap_or_default();
            match memchr::memchr2(b'"', b'\\', rest) {
                Some(offset) if rest.get(offset) == Some(&b'"') => {
                    self.at = at + offset + 1;
                    return;
                }
                // A backslash and the character it escapes.
                Some(offset) => at += offset + 2,
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
                    let rest = self.bytes.get(self.at..).unwrap_or_default();
                    let Some(offset) = rest.iter().position(|b| CONTAINER_STOPS[usize::from(*b)]) else {
                        self.at = self.bytes.len();
                        return;
                    };
                    self.at += offset;
                    match self.peek() {
                        Some(b'"') => self.skip_string(),
                        Some(b'{' | b'[') => {
                            depth += 1;
                            self.at += 1;
                        }
                        _ => {
                            depth -= 1;
                            self.at += 1;
                            if depth == 0 {
                                return;
                            }
                        }
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
mod tests {
    use super::*;
    use serde_json::json;

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
        fn paths<'t>(tree: &'t Json, path: &mut Vec<&'t str>, out: &mut Vec<Vec<&'t str>>) {
            out.push(path.clone());
            if let Json::Object(map) = tree {
                for (key, value) in map {
                    path.push(key);
                    paths(value, path, out);
                    path.pop();
                }
            }
        }
        let mut checked = 0;
        for (file, text) in crate::eval::review::tests::recorded_reviews() {
            let review: Review = serde_json::from_slice(&text).unwrap();
            let objects = review.request.into_iter().flat_map(|r| [r.object, r.old_object]);
            for object in objects.flatten() {
                let tree: Json = serde_json::from_str(object.get()).unwrap();
                let mut all = Vec::new();
                paths(&tree, &mut Vec::new(), &mut all);
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
        assert!(checked > 500, "only {checked} paths checked");
    }
}
