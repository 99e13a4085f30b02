//! What-if requests for `check` and `impact`: the file given with `-f` is an AdmissionReview as
//! recorded, a plain manifest to create, update or delete, or several manifests (one request
//! each, in order: [`manifests`]); or, without `-f`, an action on a named object (`delete
//! statefulset/db -n prod`, `delete statefulset db`, `scale deployment/web --replicas 0`), on
//! several (`delete pod a b`, one request per name in order: [`actions`]), or a deletecollection
//! (`delete pvc -l app=pg`, one request per object: [`collection`]). Either way the requests are
//! built as kube-apiserver would send them to a webhook.

pub mod actions;
pub mod args;
pub mod build;
pub mod collection;
pub mod manifests;
pub mod names;
pub mod source;
pub mod target;

use std::path::Path;

use anyhow::anyhow;
use policies_cel::{ClusterView, Request};
use serde_json::Value as Json;

pub use args::{OperationArg, WhatIfArgs};
pub use source::RequestArgs;

use crate::exit::{Exit, Failure, OrExit};
use crate::input;
use crate::review::build_review;

/// What `-f` or the action names, read once (stdin cannot be read twice).
#[derive(Debug, Clone)]
pub enum Subject {
    /// An AdmissionReview as recorded.
    Review { name: String, review: Json },
    /// A plain manifest to create, update or delete.
    Manifest { name: String, object: Json },
    /// Several manifests (documents, a `kind: List`'s items, a directory's files), one request
    /// each, in order.
    Manifests {
        name: String,
        documents: Vec<manifests::Document>,
    },
    /// A what-if action on one object (`delete sts/db`, `delete sts db`).
    Action,
    /// A what-if action on several objects (`delete pod a b`, `delete pod/a sts/b`), one request
    /// each, in order.
    Actions,
    /// A what-if deletecollection (`delete pvc -l app=pg`).
    Collection,
}

impl Subject {
    /// Reads `-f` (or takes the action), refusing contradictory flags.
    pub fn read(filename: Option<&Path>, args: &WhatIfArgs) -> Result<Self, Failure> {
        let Some(path) = filename else {
            if args.action.is_empty() {
                return Err(Failure::usage(anyhow!(
                    "nothing to judge: give -f REVIEW|MANIFEST, or a what-if action such as `delete statefulset/db -n prod`"
                )));
            }
            if args.selects() {
                return Ok(Subject::Collection);
            }
            let words = args.action.get(1..).unwrap_or_default();
            let named = names::parse(words).map_err(Failure::usage)?;
            return Ok(if named.len() > 1 {
                Subject::Actions
            } else {
                Subject::Action
            });
        };
        if !args.action.is_empty() {
            return Err(Failure::usage(anyhow!(
                "give either -f or a what-if action, not both"
            )));
        }
        if args.selects() {
            return Err(Failure::usage(anyhow!(
                "-l, --field-selector and --all select a collection for `delete TYPE`, not a file given with -f"
            )));
        }
        if path.is_dir() {
            let documents = manifests::read_dir(path).or_exit(Exit::Usage)?;
            return manifests::subject(path.display().to_string(), documents);
        }
        let source = input::read_source(path).or_exit(Exit::Usage)?;
        let mut documents = input::parse_documents(&source).or_exit(Exit::Usage)?;
        if documents.len() > 1 || documents.first().is_some_and(manifests::is_list) {
            return manifests::subject(source.name, manifests::of_file(None, documents));
        }
        let Some(document) = documents.pop() else {
            return Err(Failure::usage(anyhow!("{}: the document is empty", source.name)));
        };
        if !is_review(&document) {
            return Ok(Subject::Manifest {
                name: source.name,
                object: document,
            });
        }
        if args.any() {
            return Err(Failure::usage(anyhow!(
                "{}: an AdmissionReview already says what the request is (--operation, --replicas and --cascade apply to manifests and actions)",
                source.name
            )));
        }
        Ok(Subject::Review {
            name: source.name,
            review: document,
        })
    }
}

/// The request to judge: an AdmissionReview as given, or the one kube-apiserver would send for a
/// manifest or an action, built against `cluster`; an object that names no namespace (and no
/// `-n`) is in `default_namespace` (the context's in live mode), else `default`.
pub fn request(
    subject: &Subject,
    args: &WhatIfArgs,
    default_namespace: Option<&str>,
    cluster: &dyn ClusterView,
) -> Result<Request, Failure> {
    let spec = match subject {
        Subject::Review { name, review } => {
            return Request::from_review(review.clone()).map_err(|e| Failure::usage(anyhow!("{name}: {e}")));
        }
        Subject::Manifest { name, object } => {
            build::manifest(args, default_namespace, object.clone(), cluster)
                .map_err(|e| Failure::usage(e.context(name.clone())))?
        }
        Subject::Action => build::action(args, default_namespace, cluster).map_err(Failure::usage)?,
        // Many requests: `check` and `impact` build them with `collection`, `manifests` and
        // `actions`.
        Subject::Collection | Subject::Manifests { .. } | Subject::Actions => {
            return Err(Failure::usage(anyhow!(
                "a collection (-l, --field-selector, --all), a file of several manifests or several named objects is one request per object"
            )));
        }
    };
    let review = build_review(&spec).map_err(|e| Failure::usage(anyhow!("{e}")))?;
    Request::from_review(review).map_err(|e| Failure::usage(anyhow!("{e}")))
}

pub(crate) fn is_review(document: &Json) -> bool {
    document.get("kind").and_then(Json::as_str) == Some("AdmissionReview")
}
