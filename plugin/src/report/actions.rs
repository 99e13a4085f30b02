//! The verdict of `check` on an action naming several objects (`delete pod a b`): one `check`
//! verdict per object, in the order given, under a line saying how many of the requests would be
//! refused. `-o json|yaml`: `{"allowed", "action", "objects", "denied", "items"}`, each item the
//! object's operation, kind, namespace and name beside its `check` document (the items of a file
//! of several manifests). `impact` on such an action: each request's estimate, as a tree or under
//! `items`.

use serde::Serialize;

use policies_cel::Request;
use policies_cel::impact::Impact;

use crate::report::check;
use crate::report::manifests::{ImpactItem, Item, object};
use crate::report::sequence;
use crate::style::Style;
use crate::whatif::collection::Judged;

/// The `-o json` / `-o yaml` document.
#[derive(Debug, Serialize)]
pub struct ActionsDocument<'a> {
    /// Every request would be admitted.
    pub allowed: bool,
    /// The action, as given (`delete pod a b`).
    pub action: &'a str,
    /// Objects named, and how many of their requests would be denied.
    pub objects: usize,
    pub denied: usize,
    pub items: Vec<Item<'a>>,
}

/// The document for the judged requests of `action`.
pub fn document<'a>(action: &'a str, judged: &'a [Judged]) -> ActionsDocument<'a> {
    let denied = sequence::denied(judged);
    ActionsDocument {
        allowed: denied == 0,
        action,
        objects: judged.len(),
        denied,
        items: judged
            .iter()
            .map(|j| Item {
                object: object(&j.request),
                verdict: check::document(&j.decision),
            })
            .collect(),
    }
}

/// The human report: the action's line, then each request's `check` report.
pub fn text(action: &str, judged: &[Judged], user: &str, verbose: bool, style: Style) -> String {
    let counts = match sequence::denied(judged) {
        0 => format!("all {} requests admitted", judged.len()),
        denied => format!("{denied} of {} requests denied", judged.len()),
    };
    let header = format!(
        "{}  {action}, one request per object in order, by {user}: {counts}",
        sequence::verdict(judged, style)
    );
    sequence::verdicts(&header, judged, verbose, style)
}

/// `impact`'s `-o json` / `-o yaml` document for an action on several objects.
#[derive(Debug, Serialize)]
pub struct ImpactsDocument<'a> {
    pub action: &'a str,
    pub objects: usize,
    pub items: Vec<ImpactItem<'a>>,
}

/// The document for the estimates of `action`'s requests.
pub fn impacts<'a>(action: &'a str, estimates: &'a [(Request, Impact)]) -> ImpactsDocument<'a> {
    ImpactsDocument {
        action,
        objects: estimates.len(),
        items: estimates
            .iter()
            .map(|(request, impact)| ImpactItem {
                object: object(request),
                impact,
            })
            .collect(),
    }
}

/// `impact`'s trees for an action on several objects, one per request, under a line naming it.
pub fn impact_trees(action: &str, estimates: &[(Request, Impact)], style: Style) -> String {
    let header = format!("{action}: {} requests, one after the other", estimates.len());
    sequence::trees(&header, estimates, style)
}
