//! The direct reading of an already parsed AdmissionReview (YAML or JSON files, tests) into a
//! [`Request`]: the objects move out of the document after their metadata proved to read as
//! typed metadata. It gives what the typed review gives for the usual shape; anything unusual (an
//! extra top-level field, an object that is not a JSON object, a malformed field) returns `None`,
//! and the caller takes the typed reading, whose result or error is the reference. The reading
//! from a body's text is [`WireReview`](super::wire_review::WireReview).

use kube_core::admission::AdmissionRequest;
use kube_core::{DynamicObject, ObjectMeta, TypeMeta};
use serde::Deserialize;
use serde_json::Value as Json;

use crate::eval::request::{Objects, Request, request_value_from_fields};
use crate::eval::wire::WireObject;

/// Reads `review` (an `admission.k8s.io/v1` AdmissionReview with a request), moving its objects
/// out of it; `None`, with `review` untouched, when it is anything but the usual shape.
pub(super) fn read(review: &mut Json) -> Option<Request> {
    let envelope = review.as_object()?;
    if envelope
        .keys()
        .any(|key| !matches!(key.as_str(), "apiVersion" | "kind" | "request"))
    {
        return None;
    }
    let types = TypeMeta {
        api_version: envelope.get("apiVersion")?.as_str()?.to_owned(),
        kind: envelope.get("kind")?.as_str()?.to_owned(),
    };
    let raw = envelope.get("request")?.as_object()?;
    if !usual_object(raw.get("object")) || !usual_object(raw.get("oldObject")) {
        return None;
    }
    let fields: serde_json::Map<String, Json> = raw
        .iter()
        .filter(|(key, _)| !matches!(key.as_str(), "object" | "oldObject"))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let fields = Json::Object(fields);
    let mut admission = AdmissionRequest::<DynamicObject>::deserialize(&fields).ok()?;
    admission.types = types;
    let options = admission.options.as_ref().map(|options| options.0.clone());
    let Json::Object(fields) = fields else {
        return None;
    };
    let request = request_value_from_fields(fields);
    let raw = review.get_mut("request")?.as_object_mut()?;
    let mut take = |key: &str| WireObject::from_tree(raw.remove(key));
    let objects = Objects {
        object: take("object"),
        old_object: take("oldObject"),
        options: options.filter(|o| !o.is_null()),
    };
    Some(Request::assemble(admission, objects, request))
}

/// Absent, null, or an object of the usual shape: a map with string `apiVersion` and `kind`
/// and a (typed-readable) map or no `metadata`, as the typed review requires.
fn usual_object(json: Option<&Json>) -> bool {
    let Some(json) = json.filter(|json| !json.is_null()) else {
        return true;
    };
    let Some(map) = json.as_object() else {
        return false;
    };
    let string = |key: &str| map.get(key).is_some_and(Json::is_string);
    string("apiVersion")
        && string("kind")
        && match map.get("metadata") {
            None => true,
            Some(metadata @ Json::Object(_)) => ObjectMeta::deserialize(metadata).is_ok(),
            Some(_) => false,
        }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::eval::wire_review::WireReview;
    use serde_json::json;

    /// The one-pass reading of a body, finished into a request.
    fn read_text(text: &[u8]) -> Option<Request> {
        WireReview::read(text).map(WireReview::into_request)
    }

    #[test]
    fn objects_of_unusual_shape_are_left_to_the_typed_reading() {
        let usual = [
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
                   "metadata": {"name": "db", "labels": {"a": "b"}, "generation": 3}}),
            json!({"apiVersion": "v1", "kind": "Pod"}),
            json!(null),
        ];
        for object in usual {
            assert!(usual_object(Some(&object)), "{object}");
        }
        for unusual in [
            json!({"kind": "Pod"}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": null}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": 5}}),
            json!("x"),
        ] {
            assert!(!usual_object(Some(&unusual)), "{unusual}");
        }
    }

    /// Every recorded AdmissionReview (JSON) of the repository, and those captured from a real
    /// kube-apiserver in `../shared` when it is there.
    /// True when `../shared`'s captured reviews are beside the repository (a clone without them
    /// checks testdata's alone).
    pub(crate) fn shared_reviews_present() -> bool {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/fixtures/admission-reviews")
            .is_dir()
    }

    pub(crate) fn recorded_reviews() -> Vec<(std::path::PathBuf, Vec<u8>)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut dirs = vec![root.join("testdata")];
        let shared = root.join("../shared/fixtures/admission-reviews");
        if shared.is_dir() {
            dirs.push(shared);
        } else {
            eprintln!("../shared/fixtures/admission-reviews is absent: its reviews are not compared");
        }
        let mut found = Vec::new();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "json") {
                    let text = std::fs::read(&path).unwrap();
                    if let Ok(json) = serde_json::from_slice::<Json>(&text)
                        && json.get("kind").and_then(Json::as_str) == Some("AdmissionReview")
                    {
                        found.push((path, text));
                    }
                }
            }
        }
        found
    }

    /// What a request holds, as comparable values.
    fn parts(
        r: &Request,
    ) -> (
        Json,
        crate::cel::Value,
        crate::cel::Value,
        crate::cel::Value,
        Vec<Option<Json>>,
    ) {
        let mut admission = serde_json::to_value(&r.admission).unwrap();
        admission["types"] = json!([r.admission.types.api_version, r.admission.types.kind]);
        let objects = r.objects();
        let json = vec![
            objects.object.json().cloned(),
            objects.old_object.json().cloned(),
            objects.options.clone(),
        ];
        (
            admission,
            r.request().clone(),
            r.object().clone(),
            r.old_object().clone(),
            json,
        )
    }

    #[test]
    fn the_direct_readings_equal_the_typed_one_on_every_recorded_review() {
        let reviews = recorded_reviews();
        assert!(reviews.len() >= 10, "{}", reviews.len());
        let (mut from_text, mut from_tree) = (0, 0);
        for (path, text) in reviews {
            let review: Json = serde_json::from_slice(&text).unwrap();
            let typed = Request::from_review_typed(review.clone());
            let wire = read_text(&text);
            let tree = read(&mut review.clone());
            let Ok(typed) = typed else {
                assert!(wire.is_none() && tree.is_none(), "{}", path.display());
                continue;
            };
            let typed = parts(&typed);
            // Every recorded review is of the usual shape: the one-pass reading takes them all
            // (uids, resourceVersions and image digests in them once sent some the slower way).
            let wire = wire.unwrap_or_else(|| panic!("not read in one pass: {}", path.display()));
            from_text += 1;
            assert_eq!(parts(&wire), typed, "{}", path.display());
            if let Some(tree) = tree {
                from_tree += 1;
                assert_eq!(parts(&tree), typed, "{}", path.display());
            }
        }
        assert!(from_text >= 10 && from_tree >= 10, "{from_text} {from_tree}");
    }

    #[test]
    fn unusual_reviews_are_left_to_the_typed_reading() {
        let review = json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                        "resource": {"group": "", "version": "v1", "resource": "pods"},
                        "operation": "CREATE", "userInfo": {"username": "me"},
                        "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}}
        });
        let text = |json: &Json| serde_json::to_vec(json).unwrap();
        assert!(read(&mut review.clone()).is_some());
        assert!(read_text(&text(&review)).is_some());
        let mut extra = review.clone();
        extra["response"] = json!({"uid": "u", "allowed": true});
        assert!(read(&mut extra).is_none());
        assert!(read_text(&text(&extra)).is_none());
        let mut not_an_object = review.clone();
        not_an_object["request"]["object"] = json!([1]);
        assert!(read_text(&text(&not_an_object)).is_none());
        let mut malformed = review.clone();
        malformed["request"]["operation"] = json!("SMASH");
        let before = malformed.clone();
        assert!(read(&mut malformed).is_none());
        assert!(read_text(&text(&malformed)).is_none());
        assert_eq!(malformed, before, "a review read no further is left as it was");
        let error = Request::from_review(malformed).unwrap_err().to_string();
        assert!(error.contains("request.operation"), "{error}");
        let deep = format!(
            r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","object":{}{}}}}}"#,
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        assert!(
            read_text(deep.as_bytes()).is_none(),
            "too deep for the JSON reader"
        );
    }

    /// The one-pass reading accepts what the reference accepts, and beyond it only objects whose
    /// `metadata` does not type (which kube-apiserver never sends): those are judged as JSON,
    /// without a panic, instead of being refused.
    #[test]
    fn the_text_reading_differs_from_the_reference_only_on_untyped_metadata() {
        let base = json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                        "resource": {"group": "", "version": "v1", "resource": "pods"},
                        "namespace": "default", "name": "p",
                        "operation": "UPDATE", "userInfo": {"username": "system:serviceaccount:db:op"},
                        "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}}
        });
        let pack = crate::pack::builtin().unwrap();
        let model = crate::cluster::ClusterModel::new();
        let cases = [
            (json!({}), true),
            (json!({"kind": "Pod"}), true),
            (json!({"apiVersion": 1, "kind": "Pod"}), true),
            (json!(null), true),
            (
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": null}),
                false,
            ),
            (
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": 5}}),
                false,
            ),
            (json!([1]), false),
        ];
        for (object, typed_reading_accepts) in cases {
            let mut review = base.clone();
            review["request"]["object"] = object.clone();
            review["request"]["oldObject"] = object.clone();
            let text = serde_json::to_vec(&review).unwrap();
            let reference = Request::from_review_typed(review.clone());
            assert_eq!(reference.is_ok(), typed_reading_accepts, "{object}");
            let Some(request) = read_text(&text) else {
                assert!(!object.is_object(), "{object}: a JSON object is read");
                continue;
            };
            assert!(object.is_object() || object.is_null(), "{object}");
            let decision = crate::evaluate(&pack, &request, &model);
            assert!(decision.allowed || !decision.denials.is_empty(), "{object}");
        }
    }

    /// The objects are parsed only by what reads them: the estimate of a scale-down projects the
    /// new StatefulSet's spec from its text (falling back to the parsed object would show here)
    /// and compares the pod templates as text, and neither it nor the escape hatch behind its
    /// denial parses either object whole; the estimate of a Pod DELETE parses neither object,
    /// and the pack's decision on an allowed Pod DELETE reads nothing of the Pod (the escape
    /// hatch is looked up only for a denial).
    #[test]
    fn objects_are_parsed_only_when_read() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
        let cluster = root.join("clusters/database");
        let model = crate::cluster::snapshot::load_snapshots(&[cluster.as_path()], &mut |_| {}).unwrap();
        let read = |name: &str| read_text(&std::fs::read(root.join("reviews").join(name)).unwrap()).unwrap();

        let scale_down = read("statefulset-update-scale-down.json");
        let objects = scale_down.objects();
        assert!(!objects.object.is_parsed() && !objects.old_object.is_parsed());
        let impact = crate::impact::estimate(&scale_down, &model);
        assert!(impact.summary.pods_disrupted > 0, "{:?}", impact.summary);
        assert!(!objects.object.is_parsed() && !objects.old_object.is_parsed());
        let decision = crate::evaluate(&crate::pack::builtin().unwrap(), &scale_down, &model);
        assert!(!decision.allowed, "{decision:?}");
        assert!(
            !objects.object.is_parsed() && !objects.old_object.is_parsed(),
            "the decision parsed a StatefulSet"
        );

        let pod_delete = read("pod-delete-pg-main-0.json");
        assert!(pod_delete.objects().old_object.is_present());
        let impact = crate::impact::estimate(&pod_delete, &model);
        assert_eq!(impact.summary.pods_disrupted, 1, "{:?}", impact.summary);
        assert!(
            !pod_delete.objects().old_object.is_parsed(),
            "the estimate parsed the Pod"
        );

        let mut pack = crate::pack::builtin().unwrap();
        pack.policies.retain(|p| p.name == "suture-blast-radius");
        let decision = crate::evaluate(&pack, &pod_delete, &model);
        assert!(decision.allowed && decision.impact_evaluated, "{decision:?}");
        assert!(
            !pod_delete.objects().old_object.is_parsed(),
            "the decision parsed the Pod"
        );
    }
}
