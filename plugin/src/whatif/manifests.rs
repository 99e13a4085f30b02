//! A what-if of many manifests — `check -f release.yaml` with several documents or a `kind:
//! List` (a `helm template` render, a GitOps sync), or `-f DIR` (its `.yaml`, `.yml` and `.json`
//! files in name order, as kubectl reads a directory) — judged as `kubectl apply -f` (or, with
//! `--operation DELETE`, `kubectl delete -f`) sends it: one request per object, in order. Each
//! request is built against the cluster as the ones before it left it (an UPDATE's `oldObject`
//! is what an earlier document of the same file created or changed) and judged with the
//! disruption the admitted ones recorded, so a release that restarts two workloads sharing a
//! budget is refused at the second.

use std::path::Path;

use anyhow::{Context as _, anyhow};
use chrono::{DateTime, Utc};
use policies_cel::cluster::ClusterModel;
use policies_cel::history::Ledger;
use policies_cel::impact::Impact;
use policies_cel::{PolicySet, Request};
use serde_json::Value as Json;

use crate::exit::Failure;
use crate::input::{self, InputError};
use crate::whatif::collection::{Judged, estimate_and_carry, judge_one};
use crate::whatif::{Subject, WhatIfArgs, build, is_review};

/// One object of the input, and where it is (`document 3`, `b.yaml document 1 item 2`).
#[derive(Debug, Clone)]
pub struct Document {
    pub origin: String,
    pub object: Json,
}

/// A `kind: List` (`v1 List`, `kubectl get -o yaml`, `DeploymentList`...) with its items.
pub fn is_list(document: &Json) -> bool {
    document
        .get("kind")
        .and_then(Json::as_str)
        .is_some_and(|kind| kind.ends_with("List"))
        && document.get("items").is_some_and(Json::is_array)
}

/// The objects of one file's documents, Lists expanded (as kubectl does), each with its origin
/// (prefixed with `file` when the input is a directory).
pub fn of_file(file: Option<&str>, documents: Vec<Json>) -> Vec<Document> {
    let prefix = file.map(|file| format!("{file} ")).unwrap_or_default();
    let mut out = Vec::with_capacity(documents.len());
    for (index, document) in documents.into_iter().enumerate() {
        let origin = format!("{prefix}document {}", index + 1);
        match document {
            Json::Object(mut map) if is_list(&Json::Object(map.clone())) => {
                if let Some(Json::Array(items)) = map.remove("items") {
                    out.extend(items.into_iter().enumerate().map(|(item, object)| Document {
                        origin: format!("{origin} item {}", item + 1),
                        object,
                    }));
                }
            }
            object => out.push(Document { origin, object }),
        }
    }
    out
}

/// The objects of a directory's `.yaml`, `.yml` and `.json` files, in name order (its
/// subdirectories are not read, as `kubectl apply -f DIR` without `-R`).
pub fn read_dir(dir: &Path) -> Result<Vec<Document>, InputError> {
    let io = |error| InputError::Io {
        name: dir.display().to_string(),
        error,
    };
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .filter(|path| {
            path.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
        })
        .collect();
    files.sort();
    let mut documents = Vec::new();
    for file in files {
        let source = input::read_source(&file)?;
        let parsed = input::parse_documents(&source)?;
        documents.extend(of_file(Some(&source.name), parsed));
    }
    Ok(documents)
}

/// The subject of `name`'s documents; an AdmissionReview among them is refused (a recorded review
/// is judged alone, one per file).
pub fn subject(name: String, documents: Vec<Document>) -> Result<Subject, Failure> {
    if let Some(review) = documents.iter().find(|d| is_review(&d.object)) {
        return Err(Failure::usage(anyhow!(
            "{name}: {} is an AdmissionReview: a recorded review is judged alone (one per file); several documents are manifests, one request each",
            review.origin
        )));
    }
    Ok(Subject::Manifests { name, documents })
}

/// Judges each of `documents` in turn against `model` (namespaced objects without a namespace in
/// `-n`'s, else `default_namespace`'s), each admitted one carried into the model and its
/// disruption recorded into `ledger` at `now`. A document that is not a manifest is an error
/// naming it.
pub fn judge(
    set: &PolicySet,
    args: &WhatIfArgs,
    default_namespace: Option<&str>,
    documents: &[Document],
    model: &mut ClusterModel,
    ledger: &mut Ledger,
    now: DateTime<Utc>,
) -> anyhow::Result<Vec<Judged>> {
    let records = set.uses_history();
    let mut judged = Vec::with_capacity(documents.len());
    for document in documents {
        let spec = build::manifest(args, default_namespace, document.object.clone(), &*model)
            .with_context(|| document.describe())?;
        judged.push(judge_one(set, &spec, model, ledger, now, records)?);
    }
    Ok(judged)
}

/// The estimate of each of `documents`' requests in turn, every one carried into `model` (no
/// policy judges them: all happen).
pub fn estimate_each(
    args: &WhatIfArgs,
    default_namespace: Option<&str>,
    documents: &[Document],
    model: &mut ClusterModel,
) -> anyhow::Result<Vec<(Request, Impact)>> {
    let mut estimates = Vec::with_capacity(documents.len());
    for document in documents {
        let spec = build::manifest(args, default_namespace, document.object.clone(), &*model)
            .with_context(|| document.describe())?;
        estimates.push(estimate_and_carry(&spec, model)?);
    }
    Ok(estimates)
}

impl Document {
    /// `document 3 (Deployment web)`: where a bad document is, and what it names.
    pub fn describe(&self) -> String {
        let text = |value: &Json| value.as_str().unwrap_or_default().to_owned();
        let (kind, name) = (text(&self.object["kind"]), text(&self.object["metadata"]["name"]));
        match (kind.is_empty(), name.is_empty()) {
            (false, false) => format!("{} ({kind} {name})", self.origin),
            (false, true) => format!("{} ({kind})", self.origin),
            _ => self.origin.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use policies_cel::cluster::project;
    use policies_cel::cluster::snapshot::SnapshotLoader;
    use serde::Deserialize as _;
    use serde_json::json;

    use super::*;

    fn deployment(name: &str, strategy: &str) -> Json {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "shop", "labels": {"app": name}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                "strategy": {"type": strategy},
                "template": {"metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "c", "image": "img:2"}]}}}})
    }

    fn model(objects: &[Json]) -> ClusterModel {
        let mut model = ClusterModel::new();
        for object in objects {
            let projected = project(object, &mut model).unwrap();
            model.insert(projected);
        }
        model
    }

    #[test]
    fn each_document_is_built_against_the_cluster_the_ones_before_it_left() {
        // The first document creates the Deployment; the second changes it to Recreate: it is
        // an UPDATE of what the first created (not a second CREATE).
        let objects = of_file(
            None,
            vec![deployment("api", "RollingUpdate"), deployment("api", "Recreate")],
        );
        let mut model = model(&[]);
        let estimates = estimate_each(&WhatIfArgs::default(), None, &objects, &mut model).unwrap();
        let operations: Vec<&str> = estimates.iter().map(|(r, _)| r.operation()).collect();
        assert_eq!(operations, ["CREATE", "UPDATE"]);
    }

    #[test]
    fn a_release_is_refused_at_the_requests_that_do_harm_and_the_rest_still_judged() {
        let set = policies_cel::pack::builtin().unwrap();
        let mut loader = SnapshotLoader::new();
        loader.add_str(
            "web",
            include_str!("../../../testdata/clusters/web/snapshot.yaml"),
        );
        let mut model = loader.finish().unwrap();
        let release = include_str!("../../../testdata/releases/shop-web-4.0.yaml");
        let objects = of_file(
            None,
            serde_yaml_ng::Deserializer::from_str(release)
                .map(|document| Json::deserialize(document).unwrap())
                .collect(),
        );
        let judged = judge(
            &set,
            &WhatIfArgs::default(),
            None,
            &objects,
            &mut model,
            &mut Ledger::default(),
            Utc::now(),
        )
        .unwrap();
        // ConfigMap, Secret (a key the pods read renamed), Deployment (Recreate), Service.
        let allowed: Vec<bool> = judged.iter().map(|j| j.decision.allowed).collect();
        assert_eq!(allowed, [true, false, false, true]);
        // The admitted ConfigMap was carried into the model (its new key is there); the
        // refused Secret was not (its old key still is).
        let keys = |kind: &str, name: &str| {
            let kind = crate::known_kinds::by_type_name(&model, kind).unwrap();
            crate::known_kinds::stored(&model, &kind, "shop", name).unwrap()["keys"]
                .as_array()
                .unwrap()
                .iter()
                .map(|key| key.as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        assert!(keys("configmap", "web-config").contains(&"robots.txt".to_owned()));
        assert!(keys("secret", "web-db").contains(&"password".to_owned()));
    }

    #[test]
    fn lists_are_expanded_and_each_object_says_where_it_is() {
        let list = json!({"apiVersion": "v1", "kind": "List", "items": [deployment("a", "Recreate"), deployment("b", "Recreate")]});
        let documents = of_file(Some("dir/x.yaml"), vec![deployment("c", "Recreate"), list]);
        let described: Vec<String> = documents.iter().map(Document::describe).collect();
        assert_eq!(
            described,
            [
                "dir/x.yaml document 1 (Deployment c)",
                "dir/x.yaml document 2 item 1 (Deployment a)",
                "dir/x.yaml document 2 item 2 (Deployment b)"
            ]
        );
    }

    #[test]
    fn a_document_that_is_not_a_manifest_is_named() {
        let objects = of_file(
            None,
            vec![deployment("api", "RollingUpdate"), json!({"kind": "ConfigMap"})],
        );
        let error = estimate_each(&WhatIfArgs::default(), None, &objects, &mut model(&[])).unwrap_err();
        assert_eq!(
            format!("{error:#}"),
            "document 2 (ConfigMap): a manifest needs apiVersion, kind and metadata.name"
        );
    }
}
