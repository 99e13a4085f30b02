//! A what-if action on several named objects — `delete pod a b c` (kubectl's `TYPE NAME...`) or
//! `delete pod/a statefulset/b` — judged as kubectl sends it: one request per object, in the
//! order given. Each request is built against the cluster as the ones before it left it and
//! judged with the disruption the admitted ones recorded, as a collection's deletions are
//! ([`super::collection`]), so deleting two members of a three-member quorum one after the other
//! is refused at the second.

use chrono::{DateTime, Utc};
use policies_cel::cluster::ClusterModel;
use policies_cel::history::Ledger;
use policies_cel::impact::Impact;
use policies_cel::{PolicySet, Request};

use crate::whatif::WhatIfArgs;
use crate::whatif::build::{action_for, action_targets};
use crate::whatif::collection::{Judged, estimate_and_carry, judge_one};

/// The action as kubectl would be told it: `delete pod a b`.
pub fn description(args: &WhatIfArgs) -> String {
    args.action.join(" ")
}

/// Judges the request on each object `args` names in turn against `model` (namespaced objects in
/// `-n`'s namespace, else `default_namespace`'s), each admitted one carried into the model and its
/// disruption recorded into `ledger` at `now`. An object whose request cannot be built is an
/// error naming it.
pub fn judge(
    set: &PolicySet,
    args: &WhatIfArgs,
    default_namespace: Option<&str>,
    model: &mut ClusterModel,
    ledger: &mut Ledger,
    now: DateTime<Utc>,
) -> anyhow::Result<Vec<Judged>> {
    let records = set.uses_history();
    let targets = action_targets(args, default_namespace, &*model)?;
    let mut judged = Vec::with_capacity(targets.len());
    for target in &targets {
        let spec = action_for(target, args, &*model)?;
        judged.push(judge_one(set, &spec, model, ledger, now, records)?);
    }
    Ok(judged)
}

/// The estimate of the request on each object `args` names in turn, every one carried into
/// `model` (no policy judges them: all happen).
pub fn estimate_each(
    args: &WhatIfArgs,
    default_namespace: Option<&str>,
    model: &mut ClusterModel,
) -> anyhow::Result<Vec<(Request, Impact)>> {
    let targets = action_targets(args, default_namespace, &*model)?;
    let mut estimates = Vec::with_capacity(targets.len());
    for target in &targets {
        let spec = action_for(target, args, &*model)?;
        estimates.push(estimate_and_carry(&spec, model)?);
    }
    Ok(estimates)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use policies_cel::cluster::snapshot::SnapshotLoader;

    use super::*;

    fn database() -> ClusterModel {
        let mut loader = SnapshotLoader::new();
        loader.add_str(
            "database",
            include_str!("../../../testdata/clusters/database/snapshot.yaml"),
        );
        loader.finish().unwrap()
    }

    fn args(action: &[&str]) -> WhatIfArgs {
        WhatIfArgs {
            action: action.iter().map(|s| (*s).to_owned()).collect(),
            namespace: Some("databases".into()),
            as_user: Some("system:serviceaccount:databases:pg-operator".into()),
            ..WhatIfArgs::default()
        }
    }

    #[test]
    fn each_name_is_one_request_in_order_each_seeing_the_ones_before_it() {
        let mut model = database();
        let args = args(&["delete", "pod", "pg-main-1", "pg-main-0"]);
        let estimates = estimate_each(&args, None, &mut model).unwrap();
        let names: Vec<_> = estimates
            .iter()
            .map(|(r, _)| r.target_name().into_owned())
            .collect();
        assert_eq!(names, ["pg-main-1", "pg-main-0"], "in the order given");
        let ready_after: Vec<_> = estimates
            .iter()
            .map(|(_, impact)| impact.services.first().map(|s| s.ready_after))
            .collect();
        assert_eq!(
            ready_after,
            [Some(2), Some(1)],
            "the second starts from the first's result"
        );
        assert_eq!(description(&args), "delete pod pg-main-1 pg-main-0");
    }

    #[test]
    fn the_second_member_is_refused_once_the_first_is_gone() {
        let set = policies_cel::pack::builtin().unwrap();
        let judged = judge(
            &set,
            &args(&["delete", "pod/pg-main-0", "pod/pg-main-1"]),
            None,
            &mut database(),
            &mut Ledger::default(),
            Utc::now(),
        )
        .unwrap();
        let allowed: Vec<bool> = judged.iter().map(|j| j.decision.allowed).collect();
        assert_eq!(allowed, [true, false]);
    }

    #[test]
    fn an_unknown_type_is_an_error_naming_it() {
        let error = estimate_each(&args(&["delete", "gadget", "a", "b"]), None, &mut database()).unwrap_err();
        assert!(
            error.to_string().contains("unknown resource type \"gadget\""),
            "{error}"
        );
    }
}
