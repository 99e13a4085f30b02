//! A what-if of many manifests — `check -f release.yaml` with several documents or a `kind:
//! List` (a `helm template` render, a GitOps sync, a directory concatenated) — judged as
//! `kubectl apply -f` (or, with `--operation DELETE`, `kubectl delete -f`) sends it: one request
//! per object, in the file's order. Each request is built against the cluster as the ones
//! before it left it (an UPDATE's `oldObject` is what an earlier document of the same file
//! created or changed) and judged with the disruption the admitted ones recorded, so a release
//! that restarts two workloads sharing a budget is refused at the second.

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use policies_cel::cluster::ClusterModel;
use policies_cel::history::Ledger;
use policies_cel::impact::Impact;
use policies_cel::{PolicySet, Request};
use serde_json::Value as Json;

use crate::whatif::WhatIfArgs;
use crate::whatif::build;
use crate::whatif::collection::{Judged, estimate_and_carry, judge_one};

/// Judges each of `objects` in turn against `model` (namespaced objects without a namespace in
/// `-n`'s, else `default_namespace`'s), each admitted one carried into the model and its
/// disruption recorded into `ledger` at `now`. A document that is not a manifest is an error
/// naming it.
pub fn judge(
    set: &PolicySet,
    args: &WhatIfArgs,
    default_namespace: Option<&str>,
    objects: &[Json],
    model: &mut ClusterModel,
    ledger: &mut Ledger,
    now: DateTime<Utc>,
) -> anyhow::Result<Vec<Judged>> {
    let records = set.uses_history();
    let mut judged = Vec::with_capacity(objects.len());
    for (index, object) in objects.iter().enumerate() {
        let spec = build::manifest(args, default_namespace, object.clone(), &*model)
            .with_context(|| document_name(index, object))?;
        judged.push(judge_one(set, &spec, model, ledger, now, records)?);
    }
    Ok(judged)
}

/// The estimate of each of `objects`' requests in turn, every one carried into `model` (no
/// policy judges them: all happen).
pub fn estimate_each(
    args: &WhatIfArgs,
    default_namespace: Option<&str>,
    objects: &[Json],
    model: &mut ClusterModel,
) -> anyhow::Result<Vec<(Request, Impact)>> {
    let mut estimates = Vec::with_capacity(objects.len());
    for (index, object) in objects.iter().enumerate() {
        let spec = build::manifest(args, default_namespace, object.clone(), &*model)
            .with_context(|| document_name(index, object))?;
        estimates.push(estimate_and_carry(&spec, model)?);
    }
    Ok(estimates)
}

/// `document 3 (Deployment web)`: where a bad document is in the file.
pub fn document_name(index: usize, object: &Json) -> String {
    let text = |value: &Json| value.as_str().unwrap_or_default().to_owned();
    let (kind, name) = (text(&object["kind"]), text(&object["metadata"]["name"]));
    match (kind.is_empty(), name.is_empty()) {
        (false, false) => format!("document {} ({kind} {name})", index + 1),
        (false, true) => format!("document {} ({kind})", index + 1),
        _ => format!("document {}", index + 1),
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
        let objects = [deployment("api", "RollingUpdate"), deployment("api", "Recreate")];
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
        let objects = serde_yaml_ng::Deserializer::from_str(release)
            .map(|document| Json::deserialize(document).unwrap())
            .collect::<Vec<_>>();
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
    fn a_document_that_is_not_a_manifest_is_named() {
        let objects = [deployment("api", "RollingUpdate"), json!({"kind": "ConfigMap"})];
        let error = estimate_each(&WhatIfArgs::default(), None, &objects, &mut model(&[])).unwrap_err();
        assert_eq!(
            format!("{error:#}"),
            "document 2 (ConfigMap): a manifest needs apiVersion, kind and metadata.name"
        );
    }
}
