//! Judging only the pre-filter's candidates (`EvalContext::only`, as the gateway does): the
//! verdict, messages, warnings and annotations are those of judging every policy, and the
//! policies left out are neither evaluated nor listed.

use policies_cel::eval::{Outcome, prefilter};
use policies_cel::{EvalContext, Request, evaluate, evaluate_in, pack};

use crate::support::repository::{database, testdata};

/// Every repository review that reads as one request.
fn reviews() -> Vec<(String, Request)> {
    let mut reviews: Vec<(String, Request)> = std::fs::read_dir(testdata("reviews"))
        .unwrap()
        .filter_map(|entry| {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let request = Request::from_review(serde_json::from_str(&text).ok()?).ok()?;
            Some((path.file_name()?.to_string_lossy().into_owned(), request))
        })
        .collect();
    reviews.sort_by(|a, b| a.0.cmp(&b.0));
    reviews
}

#[test]
fn judging_the_candidates_gives_every_policys_verdict() {
    let set = pack::builtin().unwrap();
    let model = database();
    let reviews = reviews();
    assert!(reviews.len() >= 10, "{} reviews read", reviews.len());
    let mut left_out = 0;
    let mut denied = 0;
    for (name, request) in &reviews {
        let whole = evaluate(&set, request, &model);
        let candidates = prefilter::candidates(&set, &request.admission);
        let context = EvalContext {
            only: Some(&candidates),
            ..EvalContext::default()
        };
        let narrowed = evaluate_in(&set, request, &model, &context);
        assert_eq!(narrowed.allowed, whole.allowed, "{name}");
        assert_eq!(narrowed.denials, whole.denials, "{name}");
        assert_eq!(narrowed.warnings, whole.warnings, "{name}");
        assert_eq!(narrowed.audit_annotations, whole.audit_annotations, "{name}");
        assert_eq!(narrowed.impact, whole.impact, "{name}");
        // The policies listed are the candidates, each with the whole evaluation's outcome; the
        // others did not match.
        let listed: Vec<&str> = narrowed.policies.iter().map(|p| p.policy.as_str()).collect();
        let names: Vec<&str> = candidates.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(listed, names, "{name}");
        for result in &whole.policies {
            match narrowed.policies.iter().find(|p| p.policy == result.policy) {
                Some(kept) => assert_eq!(kept, result, "{name}"),
                None => {
                    assert_eq!(result.outcome, Outcome::NotMatched, "{name}: {}", result.policy);
                    left_out += 1;
                }
            }
        }
        denied += usize::from(!whole.allowed);
    }
    assert!(left_out > 0, "some review leaves some policy out");
    assert!(denied > 0, "some review is denied");
}

#[test]
fn a_policy_left_out_is_not_evaluated() {
    let set = pack::builtin().unwrap();
    let model = database();
    let (_, request) = reviews()
        .into_iter()
        .find(|(_, request)| !evaluate(&set, request, &model).allowed)
        .expect("a review the pack denies");
    let context = EvalContext {
        only: Some(&[]),
        ..EvalContext::default()
    };
    let decision = evaluate_in(&set, &request, &model, &context);
    assert!(decision.allowed);
    assert!(decision.policies.is_empty() && decision.impact.is_none());
}
