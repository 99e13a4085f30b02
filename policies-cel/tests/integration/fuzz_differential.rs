//! Property: the one-pass reading of an admission body (`WireReview::read`) and the reference
//! reading (`Request::from_review` on the parsed document) agree whenever both accept — on
//! recorded reviews edited at random (fields removed, replaced by values of any JSON type, added,
//! keys spelled with escapes, compact or pretty text). The check is the fuzz harness's own
//! (`fuzz/harness/wire_review.rs`, `readings`).

use proptest::prelude::*;
use serde_json::{Map, Value as Json};

use crate::fuzz_regressions::wire_review::readings;

/// Where an edit lands: paths into the review (the usual fields and the objects' metadata).
const PLACES: [&[&str]; 16] = [
    &[],
    &["request"],
    &["request", "uid"],
    &["request", "kind"],
    &["request", "resource"],
    &["request", "subResource"],
    &["request", "operation"],
    &["request", "userInfo"],
    &["request", "userInfo", "extra"],
    &["request", "dryRun"],
    &["request", "options"],
    &["request", "namespace"],
    &["request", "object"],
    &["request", "object", "metadata"],
    &["request", "oldObject"],
    &["request", "oldObject", "metadata", "labels"],
];

#[derive(Debug, Clone)]
enum Edit {
    Remove(usize),
    Set(usize, Json),
    Add(usize, String, Json),
}

fn json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        (-1e6f64..1e6).prop_map(Json::from),
        "[a-zA-Z0-9:/._ \"\\\\é\u{1F600}-]{0,8}".prop_map(Json::String),
        prop_oneof![
            Just("CREATE"),
            Just("DELETE"),
            Just("v1"),
            Just("Pod"),
            Just("apps")
        ]
        .prop_map(Json::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
            prop::collection::vec((key(), inner), 0..4)
                .prop_map(|fields| Json::Object(fields.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop_oneof![
            Just("apiVersion"),
            Just("kind"),
            Just("metadata"),
            Just("name"),
            Just("labels"),
            Just("uid"),
            Just("group"),
            Just("version"),
            Just("username"),
            Just("object"),
            Just("oldObject"),
            Just("options"),
            Just("dryRun"),
            Just("response"),
        ]
        .prop_map(str::to_owned),
        "[a-z\"\\\\]{1,4}",
    ]
}

fn edit() -> impl Strategy<Value = Edit> {
    let place = 0..PLACES.len();
    prop_oneof![
        place.clone().prop_map(Edit::Remove),
        (place.clone(), json()).prop_map(|(at, value)| Edit::Set(at, value)),
        (place, key(), json()).prop_map(|(at, key, value)| Edit::Add(at, key, value)),
    ]
}

/// The value at `path`, if every step is an object field.
fn at<'a>(review: &'a mut Json, path: &[&str]) -> Option<&'a mut Json> {
    path.iter().try_fold(review, |value, step| value.get_mut(*step))
}

fn apply(review: &mut Json, edit: &Edit) {
    match edit {
        Edit::Remove(place) => {
            if let Some((last, parent)) = PLACES[*place].split_last()
                && let Some(Json::Object(fields)) = at(review, parent)
            {
                fields.remove(*last);
            }
        }
        Edit::Set(place, value) => {
            if let Some(slot) = at(review, PLACES[*place]) {
                *slot = value.clone();
            }
        }
        Edit::Add(place, key, value) => {
            if let Some(Json::Object(fields)) = at(review, PLACES[*place]) {
                fields.insert(key.clone(), value.clone());
            }
        }
    }
}

fn recorded() -> Vec<Json> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/reviews");
    let mut reviews: Vec<(std::path::PathBuf, Json)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| {
            let json = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            (path, json)
        })
        .collect();
    reviews.sort_by(|a, b| a.0.cmp(&b.0));
    reviews.into_iter().map(|(_, json)| json).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn both_readings_agree_whenever_both_accept(
        base in 0usize..64,
        edits in prop::collection::vec(edit(), 0..4),
        pretty in any::<bool>(),
        escape_a_key in any::<bool>(),
    ) {
        let reviews = recorded();
        let mut review = reviews[base % reviews.len()].clone();
        for edit in &edits {
            apply(&mut review, edit);
        }
        let mut text = if pretty {
            serde_json::to_string_pretty(&review).unwrap()
        } else {
            serde_json::to_string(&review).unwrap()
        };
        if escape_a_key {
            // The same key, spelled with an escape: the readers must unescape it alike.
            text = text.replacen("\"uid\"", "\"\\u0075id\"", 1);
        }
        if let Err(difference) = readings(text.as_bytes()) {
            prop_assert!(false, "{difference}\n{text}");
        }
    }
}
