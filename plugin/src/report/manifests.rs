//! The verdict of `check` on a file of several manifests (`check -f release.yaml`): one `check`
//! verdict per object, in the file's order, under a line saying how many of the requests would
//! be refused. `-o json|yaml`: `{"allowed", "file", "objects", "denied", "items"}`, each item
//! the object's operation, kind, namespace and name beside its `check` document. `impact` on
//! such a file: each request's estimate, as a tree or under `items`.

use serde::Serialize;

use policies_cel::Request;
use policies_cel::impact::Impact;

use crate::report::check::{self, CheckDocument};
use crate::report::sequence;
use crate::style::Style;
use crate::whatif::collection::Judged;

/// The `-o json` / `-o yaml` document.
#[derive(Debug, Serialize)]
pub struct ManifestsDocument<'a> {
    /// Every request would be admitted (true for a file without objects).
    pub allowed: bool,
    /// The file, as given (`<stdin>` for `-f -`).
    pub file: &'a str,
    /// Objects in the file, and how many of their requests would be denied.
    pub objects: usize,
    pub denied: usize,
    pub items: Vec<Item<'a>>,
}

/// The object a request acts on.
#[derive(Debug, Serialize)]
pub struct Object {
    pub operation: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
}

/// One object's request: what it acts on, and the `check` document of its verdict.
#[derive(Debug, Serialize)]
pub struct Item<'a> {
    #[serde(flatten)]
    pub object: Object,
    #[serde(flatten)]
    pub verdict: CheckDocument<'a>,
}

/// The document for the judged requests of the manifests in `file`.
pub fn document<'a>(file: &'a str, judged: &'a [Judged]) -> ManifestsDocument<'a> {
    let denied = sequence::denied(judged);
    ManifestsDocument {
        allowed: denied == 0,
        file,
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

/// The object `request` acts on.
pub fn object(request: &Request) -> Object {
    let admission = &request.admission;
    Object {
        operation: request.operation().to_owned(),
        kind: admission.kind.kind.clone(),
        namespace: admission.namespace.clone().filter(|n| !n.is_empty()),
        name: request.target_name().into_owned(),
    }
}

/// The human report: the file's line, then each request's `check` report.
pub fn text(file: &str, judged: &[Judged], user: &str, verbose: bool, style: Style) -> String {
    let counts = match (judged.len(), sequence::denied(judged)) {
        (0, _) => "no objects, nothing to apply".to_owned(),
        (total, 0) => format!("all {total} requests admitted"),
        (total, denied) => format!("{denied} of {total} requests denied"),
    };
    let header = format!(
        "{}  {file}, one request per object in order, by {user}: {counts}",
        sequence::verdict(judged, style)
    );
    sequence::verdicts(&header, judged, verbose, style)
}

/// `impact`'s `-o json` / `-o yaml` document for a file of manifests.
#[derive(Debug, Serialize)]
pub struct ImpactsDocument<'a> {
    pub file: &'a str,
    pub objects: usize,
    pub items: Vec<ImpactItem<'a>>,
}

/// One object's request and its estimate.
#[derive(Debug, Serialize)]
pub struct ImpactItem<'a> {
    #[serde(flatten)]
    pub object: Object,
    pub impact: &'a Impact,
}

/// The document for the estimates of the requests of `file`'s manifests.
pub fn impacts<'a>(file: &'a str, estimates: &'a [(Request, Impact)]) -> ImpactsDocument<'a> {
    ImpactsDocument {
        file,
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

/// `impact`'s trees for a file of manifests, one per request, under a line naming the file.
pub fn impact_trees(file: &str, estimates: &[(Request, Impact)], style: Style) -> String {
    let counts = match estimates.len() {
        0 => "no objects, nothing to apply".to_owned(),
        total => format!("{total} requests, one after the other"),
    };
    sequence::trees(&format!("{file}: {counts}"), estimates, style)
}
