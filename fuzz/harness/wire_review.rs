//! Fuzz harness of the admission body as `policies-cel` reads it: the one-pass reader
//! [`WireReview::read`] and the reference reading (`serde_json` tree, then
//! [`Request::from_review`]: the direct tree reading with the typed review as fallback), and the
//! differential property between them: whenever both accept a body, they give the same request
//! (the target's name, typed fields, `request`, `object` and `oldObject` as JSON and as CEL
//! values) and the built-in pack judges both alike. Every accepted request is judged, so the lazy
//! readings of the objects' text (outline, field search, partial trees) run on fuzzed objects too.

use policies_cel::{Request, WireReview, evaluate};
use serde_json::Value as Json;

use super::fixtures;

/// Runs one input; panics when a reader panics or the two readings disagree.
pub fn run(data: &[u8]) {
    let (wire, typed) = match readings(data) {
        Ok(readings) => readings,
        Err(difference) => panic!("{difference}"),
    };
    for request in wire.iter().chain(typed.iter()) {
        let decision = evaluate(fixtures::pack(), request, fixtures::model());
        assert!(
            decision.allowed == decision.denials.is_empty(),
            "denied without a denial, or allowed with one"
        );
    }
    if let (Some(wire), Some(typed)) = (&wire, &typed) {
        let (from_wire, from_tree) = (
            evaluate(fixtures::pack(), wire, fixtures::model()),
            evaluate(fixtures::pack(), typed, fixtures::model()),
        );
        assert!(
            from_wire == from_tree,
            "the pack judges the two readings differently:\n{from_wire:?}\n{from_tree:?}"
        );
    }
}

/// The one-pass and the reference readings of `data`, each `None` when it refuses the body;
/// an error when the differential property fails: the one-pass reader accepted what is not JSON,
/// or both accepted and they differ.
pub fn readings(data: &[u8]) -> Result<(Option<Request>, Option<Request>), String> {
    let wire = WireReview::read(data).map(WireReview::into_request);
    let tree: Option<Json> = serde_json::from_slice(data).ok();
    if wire.is_some() && tree.is_none() {
        return Err("the one-pass reader accepted a body that is not a JSON document".into());
    }
    let typed = match tree.map(Request::from_review) {
        Some(Ok(request)) => Some(request),
        Some(Err(error)) if error.to_string().is_empty() => return Err("an error without a message".into()),
        Some(Err(_)) | None => None,
    };
    if let (Some(wire), Some(typed)) = (&wire, &typed) {
        agree(wire, typed)
            .map_err(|what| format!("the one-pass and the typed readings disagree on {what}"))?;
    }
    Ok((wire, typed))
}

/// Whether two readings of one body give the same request; the first difference otherwise.
pub fn agree(a: &Request, b: &Request) -> Result<(), String> {
    let typed = |r: &Request| {
        let mut admission = serde_json::to_value(&r.admission).unwrap_or(Json::Null);
        admission["types"] = Json::from(vec![
            r.admission.types.api_version.clone(),
            r.admission.types.kind.clone(),
        ]);
        admission
    };
    let same = |what: &str, same: bool| if same { Ok(()) } else { Err(what.to_owned()) };
    // First, while the one-pass reading's oldObject is still text (found through its outline).
    same("the name of the target", a.target_name() == b.target_name())?;
    same("the typed fields", typed(a) == typed(b))?;
    same("`request`", a.request() == b.request())?;
    same("`object` as JSON", a.object_json() == b.object_json())?;
    same("`oldObject` as JSON", a.old_object_json() == b.old_object_json())?;
    same("`object`", a.object() == b.object())?;
    same("`oldObject`", a.old_object() == b.old_object())?;
    same("the operation", a.operation() == b.operation())
}
