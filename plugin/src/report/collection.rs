//! The verdict of `check` on a what-if collection (`delete pvc -l app=pg`): one `check` verdict
//! per object, in the order kube-apiserver would send them, under a line saying how many of the
//! collection's deletions would be refused. `-o json|yaml`: the `check` document of each object
//! under `items`, beside `allowed` (every deletion admitted) and the counts. `impact` on a
//! collection: each object's estimate, as a tree or under `items`.

use serde::Serialize;

use policies_cel::Request;
use policies_cel::impact::Impact;

use crate::report::check::{self, CheckDocument};
use crate::report::sequence;
use crate::style::Style;
use crate::whatif::collection::{Collection, Judged};

/// The `-o json` / `-o yaml` document.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CollectionDocument<'a> {
    /// Every deletion of the collection would be admitted (true when it selects nothing).
    pub allowed: bool,
    pub collection: Selection<'a>,
    /// Objects selected, and how many of their deletions would be denied.
    pub objects: usize,
    pub denied: usize,
    pub items: Vec<Item<'a>>,
}

/// What was selected, as given.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Selection<'a> {
    pub resource: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<&'a str>,
    pub description: &'a str,
}

/// One object's deletion: its name, and the `check` document of its verdict.
#[derive(Debug, Serialize)]
pub struct Item<'a> {
    pub name: String,
    #[serde(flatten)]
    pub verdict: CheckDocument<'a>,
}

/// The document for the judged deletions of `collection`.
pub fn document<'a>(collection: &'a Collection, judged: &'a [Judged]) -> CollectionDocument<'a> {
    let denied = sequence::denied(judged);
    CollectionDocument {
        allowed: denied == 0,
        collection: selection(collection),
        objects: judged.len(),
        denied,
        items: judged
            .iter()
            .map(|j| Item {
                name: j.request.target_name().into_owned(),
                verdict: check::document(&j.decision),
            })
            .collect(),
    }
}

fn selection(collection: &Collection) -> Selection<'_> {
    Selection {
        resource: &collection.kind.resource,
        namespace: collection.namespace.as_deref(),
        description: &collection.description,
    }
}

/// The human report: the collection's line, then each object's `check` report.
pub fn text(collection: &Collection, judged: &[Judged], user: &str, verbose: bool, style: Style) -> String {
    let counts = match (judged.len(), sequence::denied(judged)) {
        (0, _) => "no object matches, nothing would be deleted".to_owned(),
        (total, 0) => format!("all {total} deletions admitted"),
        (total, denied) => format!("{denied} of {total} deletions denied"),
    };
    let header = format!(
        "{}  DELETECOLLECTION {} by {user}: {counts}",
        sequence::verdict(judged, style),
        collection.description
    );
    sequence::verdicts(&header, judged, verbose, style)
}

/// `impact`'s `-o json` / `-o yaml` document for a collection.
#[derive(Debug, Serialize)]
pub struct ImpactsDocument<'a> {
    pub collection: Selection<'a>,
    pub objects: usize,
    pub items: Vec<ImpactItem<'a>>,
}

/// One object's deletion and its estimate.
#[derive(Debug, Serialize)]
pub struct ImpactItem<'a> {
    pub name: String,
    pub impact: &'a Impact,
}

/// The document for the estimates of `collection`'s deletions.
pub fn impacts<'a>(collection: &'a Collection, estimates: &'a [(Request, Impact)]) -> ImpactsDocument<'a> {
    ImpactsDocument {
        collection: selection(collection),
        objects: estimates.len(),
        items: estimates
            .iter()
            .map(|(request, impact)| ImpactItem {
                name: request.target_name().into_owned(),
                impact,
            })
            .collect(),
    }
}

/// `impact`'s trees for a collection, one per object, under a line naming the collection.
pub fn impact_trees(collection: &Collection, estimates: &[(Request, Impact)], style: Style) -> String {
    let counts = match estimates.len() {
        0 => "no object matches, nothing would be deleted".to_owned(),
        total => format!("{total} deletions, one after the other"),
    };
    let header = format!("DELETECOLLECTION {}: {counts}", collection.description);
    sequence::trees(&header, estimates, style)
}
