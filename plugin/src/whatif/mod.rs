//! What-if requests for `check` and `impact`: the file given with `-f` is an AdmissionReview as
//! recorded, or a plain manifest to create, update or delete; or, without `-f`, an action on a
//! named object (`delete statefulset/db -n prod`, `scale deployment/web --replicas 0`). Either
//! way the request is built as kube-apiserver would send it to a webhook.

pub mod args;
pub mod build;

use std::path::Path;

use anyhow::anyhow;
use policies_cel::{ClusterView, Request};
use serde_json::Value as Json;

pub use args::{OperationArg, WhatIfArgs};

use crate::exit::{Exit, Failure, OrExit};
use crate::input;
use crate::review::build_review;

/// The request to judge, from `-f` (a review or a manifest) or from the what-if action.
pub fn request(
    filename: Option<&Path>,
    args: &WhatIfArgs,
    cluster: &dyn ClusterView,
) -> Result<Request, Failure> {
    let spec = match filename {
        Some(path) => {
            if !args.action.is_empty() {
                return Err(Failure::usage(anyhow!(
                    "give either -f or a what-if action, not both"
                )));
            }
            let source = input::read_source(path).or_exit(Exit::Usage)?;
            let document = input::parse_one(&source).or_exit(Exit::Usage)?;
            if is_review(&document) {
                if args.any() {
                    return Err(Failure::usage(anyhow!(
                        "{}: an AdmissionReview already says what the request is (--operation/--replicas apply to manifests)",
                        source.name
                    )));
                }
                return Request::from_review(document)
                    .map_err(|e| Failure::usage(anyhow!("{}: {e}", source.name)));
            }
            build::manifest(args, document, cluster).map_err(|e| Failure::usage(e.context(source.name)))?
        }
        None if args.action.is_empty() => {
            return Err(Failure::usage(anyhow!(
                "nothing to judge: give -f REVIEW|MANIFEST, or a what-if action such as `delete statefulset/db -n prod`"
            )));
        }
        None => build::action(args, cluster).map_err(Failure::usage)?,
    };
    let review = build_review(&spec).map_err(|e| Failure::usage(anyhow!("{e}")))?;
    Request::from_review(review).map_err(|e| Failure::usage(anyhow!("{e}")))
}

fn is_review(document: &Json) -> bool {
    document.get("kind").and_then(Json::as_str) == Some("AdmissionReview")
}
