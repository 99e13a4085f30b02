//! Fuzz harness of the gateway's own body path (`suture_gateway::admission::parse::parse`: the
//! one-pass reading, or else UTF-8, JSON and `Request::from_review` with messages for each kind
//! of garbage), then the judgement the gateway gives a readable body: the built-in pack against a
//! small model. An unreadable body must say why, and keep the uid only when it has one.

use policies_cel::evaluate;
use serde_json::Value as Json;
use suture_gateway::admission::parse::parse;

use super::fixtures;

/// Runs one input; panics when the path panics or an answer is malformed.
pub fn run(data: &[u8]) {
    match parse(data) {
        Ok(request) => {
            let decision = evaluate(fixtures::pack(), &request, fixtures::model());
            assert!(
                decision.allowed || decision.status_message().is_some(),
                "a denial without a message"
            );
        }
        Err(unreadable) => {
            assert!(
                !unreadable.message.is_empty(),
                "an unreadable body without a message"
            );
            if let Some(uid) = &unreadable.uid {
                let json: Option<Json> = serde_json::from_slice(data).ok();
                let sent = json
                    .as_ref()
                    .and_then(|j| j.pointer("/request/uid"))
                    .and_then(Json::as_str);
                assert_eq!(sent, Some(uid.as_str()), "an echoed uid that was not sent");
            }
        }
    }
}
