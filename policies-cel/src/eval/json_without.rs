//! Parsing JSON text into a tree without some of its subtrees: the values at the skipped paths
//! are passed over unread, everything else is parsed as `serde_json::Value` would parse it.
//!
//! A reader that needs a large part of an object but never looks at some of it (the estimate
//! of a workload UPDATE projects the new spec and never reads `metadata`, `status` or the pod
//! template) pays for the parts it reads: building and then freeing the skipped subtrees cost
//! more than the rest of the reading together, and passing over text is cheaper still than
//! serde's validating skip (the text was validated when the review was read).

use serde_json::{Map, Value as Json};

use crate::eval::json_text::{RawKey, Scan};

/// `text`, a JSON document already read as valid, parsed into a tree without the values at
/// `skipped` (each a path of object keys from the root, where [`EVERY_ELEMENT`] stands for each
/// element of a list; a path through a value that is not an object, or a list for
/// [`EVERY_ELEMENT`], skips nothing). Text that is not valid JSON gives no tree or a wrong one,
/// never a panic.
pub(crate) fn parse_without(text: &str, skipped: &[&[&str]]) -> Option<Json> {
    let mut scan = Scan::new(text);
    let tree = tree_without(&mut scan, skipped)?;
    scan.at_end().then_some(tree)
}

/// The paths of `skipped` that go on below `key`, relative to its value; `None` when the value
/// at `key` is itself skipped.
pub(crate) fn below<'p>(skipped: &[&'p [&'p str]], key: RawKey<'_>) -> Option<Vec<&'p [&'p str]>> {
    rest_below(skipped, |first| key.is(first))
}

/// In a skipped path, each element of a list (`["spec", "volumeClaimTemplates", "*", "status"]`).
pub(crate) const EVERY_ELEMENT: &str = "*";

/// The paths of `skipped` that go on below each element of a list; `None` when the elements
/// themselves are skipped.
fn below_elements<'p>(skipped: &[&'p [&'p str]]) -> Option<Vec<&'p [&'p str]>> {
    rest_below(skipped, |first| first == EVERY_ELEMENT)
}

/// The rest of each path of `skipped` whose first step `step` takes; `None` when one of them
/// ends there (the value is itself skipped).
fn rest_below<'p>(skipped: &[&'p [&'p str]], step: impl Fn(&str) -> bool) -> Option<Vec<&'p [&'p str]>> {
    // Most values begin no skipped path: nothing to collect (and nothing allocated).
    if !skipped
        .iter()
        .any(|path| path.first().is_some_and(|first| step(first)))
    {
        return Some(Vec::new());
    }
    let below: Vec<&[&str]> = skipped
        .iter()
        .filter_map(|path| match path.split_first() {
            Some((first, rest)) if step(first) => Some(rest),
            _ => None,
        })
        .collect();
    (!below.iter().any(|rest| rest.is_empty())).then_some(below)
}

/// The value starting at `scan`, without the values at `skipped` (relative to it).
fn tree_without(scan: &mut Scan<'_>, skipped: &[&[&str]]) -> Option<Json> {
    if !skipped.is_empty() && scan.at_array() {
        let below = below_elements(skipped).unwrap_or_default();
        if !below.is_empty() {
            let mut elements = Vec::new();
            let mut whole = true;
            scan.elements(|scan| match tree_without(scan, &below) {
                Some(value) => elements.push(value),
                None => whole = false,
            })?;
            return whole.then_some(Json::Array(elements));
        }
    }
    if skipped.is_empty() || !scan.at_object() {
        let range = scan.value();
        return serde_json::from_str(scan.text(range)?).ok();
    }
    let mut tree = Map::new();
    let mut whole = true;
    scan.members(|scan, key| {
        let Some(below) = below(skipped, key) else {
            scan.value();
            return;
        };
        match tree_without(scan, &below) {
            // A repeated key keeps its last value, as in `serde_json::Value`.
            Some(value) => drop(tree.insert(key.unescaped().into_owned(), value)),
            None => whole = false,
        }
    })?;
    whole.then_some(Json::Object(tree))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The tree of `text` with the values at `skipped` removed, as a reader of the whole tree
    /// would cut it.
    fn cut(text: &str, skipped: &[&[&str]]) -> Json {
        fn remove(tree: &mut Json, path: &[&str]) {
            match (tree, path) {
                (Json::Object(map), [last]) => {
                    map.remove(*last);
                }
                (Json::Array(items), [first, rest @ ..]) if *first == EVERY_ELEMENT && !rest.is_empty() => {
                    items.iter_mut().for_each(|item| remove(item, rest));
                }
                (Json::Object(map), [first, rest @ ..]) => {
                    if let Some(below) = map.get_mut(*first) {
                        remove(below, rest);
                    }
                }
                _ => {}
            }
        }
        let mut tree: Json = serde_json::from_str(text).unwrap();
        for path in skipped {
            remove(&mut tree, path);
        }
        tree
    }

    #[test]
    fn skipped_paths_are_left_out_and_the_rest_is_the_tree() {
        let text = r#"{"metadata": {"name": "db", "labels": {"a": "b"}},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c"}]}},
                     "selector": {"matchLabels": {"a": "b"}}, "ratio": 1.5, "n": -2,
                     "big": 18446744073709551615, "none": null, "on": true, "list": [1, {"x": [2]}]},
            "status": {"replicas": 3}, "spec2": "x\u0079"}"#;
        let cases: [&[&[&str]]; 7] = [
            &[],
            &[&["metadata"], &["status"], &["spec", "template"]],
            &[&["spec", "list", "*", "x"], &["spec", "template", "*", "y"]],
            &[&["spec", "list", "*"], &["spec", "*"]],
            &[&["spec", "template", "spec", "containers"], &["spec", "nothing"]],
            &[&["spec2", "deeper"], &["spec", "ratio", "x"]],
            &[&["spec"], &["spec", "template"]],
        ];
        for skipped in cases {
            assert_eq!(
                parse_without(text, skipped),
                Some(cut(text, skipped)),
                "{skipped:?}"
            );
        }
        let pruned = parse_without(text, cases[1]).unwrap();
        assert_eq!(
            pruned,
            json!({"spec": {"replicas": 3, "selector": {"matchLabels": {"a": "b"}}, "ratio": 1.5,
                "n": -2, "big": 18446744073709551615_u64, "none": null, "on": true,
                "list": [1, {"x": [2]}]}, "spec2": "xy"})
        );
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value_and_scalars_read_as_themselves() {
        let skipped: &[&[&str]] = &[&["a", "skip"]];
        let text = r#"{"a": {"skip": 1, "k": 1}, "a": {"k": 2, "skip": [3]}}"#;
        assert_eq!(parse_without(text, skipped), Some(json!({"a": {"k": 2}})));
        for scalar in ["1", "-1", "1.5e3", "\"s\"", "true", "null", "[{\"a\": 1}]"] {
            assert_eq!(
                parse_without(scalar, skipped),
                serde_json::from_str(scalar).ok(),
                "{scalar}"
            );
        }
    }

    /// Every object of every recorded review, without what a workload's spec reader never
    /// reads, and without a path into a list or a string (which skips nothing).
    #[test]
    fn recorded_objects_are_cut_as_their_trees_are() {
        let mut objects = 0;
        for (file, text) in crate::eval::review::tests::recorded_reviews() {
            let review: Json = serde_json::from_slice(&text).unwrap();
            for key in ["object", "oldObject"] {
                let Some(object) = review["request"].get(key).filter(|o| o.is_object()) else {
                    continue;
                };
                let text = serde_json::to_string_pretty(object).unwrap();
                for skipped in [
                    crate::cluster::UNREAD_BY_WORKLOAD_SPECS,
                    &[&["metadata", "name", "x"], &["spec", "containers", "image"]],
                ] {
                    let cut_text = parse_without(&text, skipped);
                    assert_eq!(cut_text, Some(cut(&text, skipped)), "{}", file.display());
                }
                objects += 1;
            }
        }
        assert!(objects > 10, "{objects} objects");
    }

    #[test]
    fn text_that_is_not_json_never_panics() {
        let skipped: &[&[&str]] = &[&["a"], &["b", "c"], &["l", "*", "x"]];
        for broken in [
            "{\"l\": [1, }",
            "{\"l\": [:]}",
            "{\"l\": [{\"x\": 1} {\"y\": 2}]}",
            "{\"l\": [",
            "{\"l\": [{\"y\": tru}]}",
            "{\"a\": [1, }",
            "{\"b\": 1",
            "{} x",
            "",
            "{\"b\": {\"c\": tru}}",
            "{\"b\": {\"d\": tru}}",
            "{\"b\" 1}",
            "{\"a",
            "{\"b\": {\"d\": \"\\",
        ] {
            let _ = parse_without(broken, skipped);
        }
        for unread in ["{\"b\": {\"d\": tru}}", "{\"b\": 1", "{} x"] {
            assert_eq!(
                parse_without(unread, skipped),
                None,
                "{unread}: parsed text is read"
            );
        }
    }
}
