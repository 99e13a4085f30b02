//! A what-if `deletecollection`: `check delete TYPE -l SELECTOR` (or `--field-selector`,
//! `--all`), judged as kube-apiserver judges one — a DELETE per selected object, each without a
//! name and with the object as `oldObject`, in name order. Each deletion sees the ones before it
//! gone (or kept, when denied), and the disruption each admitted one causes is recorded for the
//! policies that read `history`, as the gateway's ledger would record it: an operator's
//! `DeleteAllOf` of a StatefulSet's pods passes for the first pod and is refused once the budget
//! is spent.

use anyhow::{anyhow, bail};
use chrono::{DateTime, Utc};
use policies_cel::cluster::ClusterModel;
use policies_cel::cluster::json::to_json;
use policies_cel::history::Ledger;
use policies_cel::impact::Impact;
use policies_cel::{ClusterView, Decision, PolicySet, Request};

use crate::known_kinds::{self, KindRef};
use crate::replay::apply::apply;
use crate::replay::judge_and_carry;
use crate::review::{Operation, RequestSpec, build_review};
use crate::selector::{Selectors, select};
use crate::whatif::WhatIfArgs;
use crate::whatif::build::base;

/// The collection a what-if deletes.
#[derive(Debug, Clone)]
pub struct Collection {
    pub kind: KindRef,
    /// `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
    pub selectors: Selectors,
    /// The selection as kubectl would be told it: `persistentvolumeclaims in databases -l app=pg`.
    pub description: String,
}

/// One request of a what-if sequence (a collection's deletion, a manifest of many), judged.
#[derive(Debug)]
pub struct Judged {
    pub request: Request,
    pub decision: Decision,
}

/// The collection `args` select (`delete TYPE` with `-l`, `--field-selector` or `--all`), its type
/// resolved against `cluster`; a namespaced type is taken in `-n`'s namespace, else
/// `default_namespace`, else `default`. An error says what is wrong with the action.
pub fn collection(
    args: &WhatIfArgs,
    default_namespace: Option<&str>,
    cluster: &dyn ClusterView,
) -> anyhow::Result<Collection> {
    let [verb, type_name] = args.action.as_slice() else {
        bail!("-l, --field-selector and --all select a collection to delete: `delete TYPE -l SELECTOR`");
    };
    if verb != "delete" {
        bail!("only `delete` takes a collection (-l, --field-selector, --all): `delete TYPE -l SELECTOR`");
    }
    if type_name.contains('/') {
        bail!(
            "{type_name:?}: -l, --field-selector and --all select a collection; give the type alone (`delete pvc -l app=pg`)"
        );
    }
    if args.all && args.selector.is_some() {
        bail!("--all and -l/--selector cannot be given together");
    }
    let kind = known_kinds::by_type_name(cluster, type_name).ok_or_else(|| {
        anyhow!("unknown resource type {type_name:?} (not built in, and no CRD for it in the cluster)")
    })?;
    let selectors = Selectors::of_flags(args.selector.as_deref(), args.field_selector.as_deref())?;
    let namespace = kind
        .namespaced
        .then(|| args.namespace_for(None, default_namespace));
    let mut description = kind.resource.clone();
    if let Some(namespace) = &namespace {
        description.push_str(&format!(" in {namespace}"));
    }
    if let Some(selector) = &args.selector {
        description.push_str(&format!(" -l {selector}"));
    }
    if let Some(selector) = &args.field_selector {
        description.push_str(&format!(" --field-selector {selector}"));
    }
    if args.all {
        description.push_str(" --all");
    }
    Ok(Collection {
        kind,
        namespace,
        selectors,
        description,
    })
}

/// The DELETE kube-apiserver sends a webhook for each object of `collection` in `cluster`, in
/// name order: unnamed, the object as `oldObject`, by `--as`.
pub fn requests(collection: &Collection, args: &WhatIfArgs, cluster: &dyn ClusterView) -> Vec<RequestSpec> {
    let Collection { kind, namespace, .. } = collection;
    select(
        cluster,
        (&kind.group, &kind.kind),
        namespace.as_deref(),
        &collection.selectors,
    )
    .into_iter()
    .enumerate()
    .map(|(index, object)| {
        let mut spec = base(args, kind, namespace.clone(), "");
        spec.seed = format!(
            "what-if/deletecollection/{}/{}/{index}",
            kind.kind,
            namespace.as_deref().unwrap_or_default()
        );
        spec.operation = Some(Operation::Delete);
        spec.old_object = Some(to_json(object));
        spec.options = args.delete_options();
        spec
    })
    .collect()
}

/// The request of `spec`, as kube-apiserver would send it; an error names what cannot be built.
fn request_of(spec: &RequestSpec) -> anyhow::Result<Request> {
    build_review(spec)
        .map_err(|e| anyhow!("{e}"))
        .and_then(|review| Request::from_review(review).map_err(|e| anyhow!("{e}")))
}

/// The estimate of each of `specs` in turn against `model`, each deletion carried into it (no
/// policy judges them: every one happens).
pub fn estimate_each(
    specs: &[RequestSpec],
    model: &mut ClusterModel,
) -> anyhow::Result<Vec<(Request, Impact)>> {
    specs.iter().map(|spec| estimate_and_carry(spec, model)).collect()
}

/// The estimate of `spec`'s request against `model`, its change then carried into it.
pub(crate) fn estimate_and_carry(
    spec: &RequestSpec,
    model: &mut ClusterModel,
) -> anyhow::Result<(Request, Impact)> {
    let request = request_of(spec)?;
    let impact = policies_cel::impact::estimate(&request, &*model);
    apply(model, &request);
    Ok((request, impact))
}

/// Judges `specs` one after the other against `model`, carrying each admitted deletion into it
/// and recording its disruption into `ledger` at `now` (when a policy reads `history`). A
/// request that cannot be built is an error naming it.
pub fn judge(
    set: &PolicySet,
    specs: &[RequestSpec],
    model: &mut ClusterModel,
    ledger: &mut Ledger,
    now: DateTime<Utc>,
) -> anyhow::Result<Vec<Judged>> {
    let records = set.uses_history();
    specs
        .iter()
        .map(|spec| judge_one(set, spec, model, ledger, now, records))
        .collect()
}

/// Judges `spec`'s request against `model` and `ledger`, carrying it into them when admitted
/// ([`judge_and_carry`]); the decision always has the estimate (made before the change).
pub(crate) fn judge_one(
    set: &PolicySet,
    spec: &RequestSpec,
    model: &mut ClusterModel,
    ledger: &mut Ledger,
    now: DateTime<Utc>,
    records: bool,
) -> anyhow::Result<Judged> {
    let request = request_of(spec)?;
    // The estimate before the change is carried out, for the report when no policy read it.
    let before = policies_cel::impact::estimate(&request, &*model);
    let mut decision = judge_and_carry(set, &request, model, ledger, Some(now), records);
    decision.impact.get_or_insert(before);
    Ok(Judged { request, decision })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use policies_cel::EmptyCluster;
    use policies_cel::cluster::project;
    use serde_json::json;

    use super::*;

    fn args(action: &[&str], selector: Option<&str>, all: bool) -> WhatIfArgs {
        WhatIfArgs {
            action: action.iter().map(|s| (*s).to_owned()).collect(),
            selector: selector.map(str::to_owned),
            all,
            namespace: Some("shop".into()),
            ..WhatIfArgs::default()
        }
    }

    fn model() -> ClusterModel {
        let mut model = ClusterModel::new();
        for (name, namespace, app) in [
            ("web-2", "shop", "web"),
            ("web-1", "shop", "web"),
            ("db-0", "shop", "db"),
            ("web-9", "other", "web"),
        ] {
            let pod = json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": namespace, "uid": format!("uid-{name}"),
                    "labels": {"app": app}}});
            let object = project(&pod, &mut model).unwrap();
            model.insert(object);
        }
        model
    }

    #[test]
    fn a_collection_selects_in_its_namespace_in_name_order_as_unnamed_deletes() {
        let model = model();
        let args = args(&["delete", "pods"], Some("app=web"), false);
        let selected = collection(&args, None, &model).unwrap();
        assert_eq!(selected.description, "pods in shop -l app=web");
        let specs = requests(&selected, &args, &model);
        let names: Vec<_> = specs
            .iter()
            .map(|s| {
                s.old_object.as_ref().unwrap()["metadata"]["name"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(names, ["web-1", "web-2"], "only shop's web pods, by name");
        let review = build_review(&specs[0]).unwrap();
        assert_eq!(review["request"]["operation"], "DELETE");
        assert!(
            review["request"].get("name").is_none(),
            "kube-apiserver names no object on a deletecollection's DELETEs"
        );
        assert_eq!(review["request"]["oldObject"]["metadata"]["uid"], "uid-web-1");
        let every = self::args(&["delete", "pods"], None, true);
        assert_eq!(
            requests(&collection(&every, None, &model).unwrap(), &every, &model).len(),
            3
        );
    }

    #[test]
    fn what_is_not_a_collection_is_refused_with_the_reason() {
        let message = |action: &[&str], selector: Option<&str>, all: bool| {
            collection(&args(action, selector, all), None, &EmptyCluster)
                .unwrap_err()
                .to_string()
        };
        assert!(message(&["scale", "sts"], Some("a=b"), false).contains("only `delete`"));
        assert!(message(&["delete", "pod/web-1"], Some("a=b"), false).contains("give the type alone"));
        assert!(message(&["delete", "pods"], Some("a=b"), true).contains("--all and -l"));
        assert!(message(&["delete", "widgets"], None, true).contains("unknown resource type"));
        assert!(message(&["delete", "pods"], Some("a>1"), false).contains("label selector"));
    }
}
