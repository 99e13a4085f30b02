//! The pre-filter's answer per kind of request, kept with the enforced set. A request's
//! candidates depend only on its operation, resource, scope, user and groups (and its name when
//! a rule names resources: [`prefilter::request_key`]), and an operator sends many requests of
//! each kind: the first of a kind runs the pre-filter, the others find its answer — with the
//! lane [`Shape`] and the history flag it implies — in one table lookup, instead of matching
//! every policy's subjects and rules again. The table lives as long as its set (a reload starts
//! a new one) and is emptied when it reaches [`MAX_PLANS`] kinds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use foldhash::fast::RandomState;

use kube_core::DynamicObject;
use kube_core::admission::AdmissionRequest;
use policies_cel::eval::prefilter;
use policies_cel::policy::{Policy, PolicySet};

use crate::admission::lanes::Shape;

/// The most kinds of request one table keeps.
pub const MAX_PLANS: usize = 4096;

/// How requests of one kind are judged.
#[derive(Debug)]
pub struct Plan {
    /// The policies that could judge them, in the set's order (empty: allowed at once).
    pub candidates: Vec<Arc<Policy>>,
    /// Their lane shape.
    pub shape: Shape,
    /// Some candidate reads `history`.
    pub reads_history: bool,
}

impl Plan {
    /// The plan of requests whose candidates are `candidates`.
    pub fn of(candidates: Vec<Arc<Policy>>) -> Self {
        Self {
            shape: Shape::of(&candidates),
            reads_history: candidates.iter().any(|p| p.uses_history()),
            candidates,
        }
    }
}

/// Plans by request key.
type Table = HashMap<Vec<u8>, Arc<Plan>, RandomState>;

/// The plans of one policy set, by request key.
#[derive(Debug)]
pub struct Plans {
    /// Whether the set's rules name resources (then the key holds the object's name).
    by_name: bool,
    known: Mutex<Table>,
}

impl Plans {
    /// An empty table for `set`.
    pub fn new(set: &PolicySet) -> Self {
        Self {
            by_name: prefilter::reads_names(set),
            known: Mutex::default(),
        }
    }

    /// The plan of `request` under `set` (the set this table was made for).
    pub fn plan(&self, set: &PolicySet, request: &AdmissionRequest<DynamicObject>) -> Arc<Plan> {
        let key = prefilter::request_key(request, self.by_name);
        if let Some(plan) = self.lock().get(&key) {
            return Arc::clone(plan);
        }
        let plan = Arc::new(Plan::of(prefilter::candidates(set, request)));
        let mut known = self.lock();
        if known.len() >= MAX_PLANS {
            known.clear();
        }
        known.insert(key, Arc::clone(&plan));
        plan
    }

    /// How many kinds of request the table holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when no request was planned yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // A panic while holding the lock left a table of complete entries: keep using it.
        self.known
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policies_cel::Request;
    use policies_cel::policy::Loader;

    fn review(resource: &str, operation: &str, name: &str, user: &str, groups: &[&str]) -> Request {
        crate::admission::prefilter::metadata_review(resource, "", operation, name, user, groups)
    }

    fn set(policies: &str) -> PolicySet {
        Loader::new()
            .implicit_bindings(false)
            .add_str("p.yaml", policies)
            .unwrap()
            .finish()
            .unwrap()
    }

    const POLICIES: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: operators-delete-pods}
spec:
  subjects: {users: ["operator"], groups: ["admins"]}
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["*"], operations: [DELETE], resources: [pods]}]
  validations: [{expression: "false"}]
---
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: primary-configmap}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["*"], operations: ["*"], resources: [configmaps], resourceNames: [primary]}
  validations: [{expression: "history.byRequester('1m').requests < 3"}]
"#;

    fn names(plan: &Plan) -> Vec<&str> {
        plan.candidates.iter().map(|p| p.name.as_str()).collect()
    }

    #[test]
    fn each_kind_of_request_is_planned_once_with_the_prefilters_answer() {
        let set = set(POLICIES);
        let plans = Plans::new(&set);
        let requests = [
            review("pods", "DELETE", "a", "operator", &[]),
            review("pods", "DELETE", "b", "operator", &[]),
            review("pods", "DELETE", "a", "someone", &[]),
            review("pods", "DELETE", "a", "someone", &["admins"]),
            review("pods", "CREATE", "a", "operator", &[]),
            review("configmaps", "UPDATE", "primary", "someone", &[]),
            review("configmaps", "UPDATE", "secondary", "someone", &[]),
        ];
        for round in 0..2 {
            for request in &requests {
                let plan = plans.plan(&set, &request.admission);
                let expected: Vec<String> = prefilter::candidates(&set, &request.admission)
                    .iter()
                    .map(|p| p.name.clone())
                    .collect();
                assert_eq!(
                    names(&plan),
                    expected,
                    "round {round}: {:?}",
                    request.admission.name
                );
                assert_eq!(plan.shape, Shape::of(&plan.candidates));
            }
        }
        // A rule names resources, so the name is part of the key: seven kinds, each planned once.
        assert_eq!(plans.len(), 7);
        let primary = plans.plan(&set, &requests[5].admission);
        assert_eq!(names(&primary), ["primary-configmap"]);
        assert!(primary.reads_history);
        assert!(!plans.plan(&set, &requests[0].admission).reads_history);
    }

    #[test]
    fn without_resource_names_the_object_name_is_not_part_of_the_key() {
        let set = set(POLICIES.split("---").next().unwrap());
        let plans = Plans::new(&set);
        for name in ["a", "b", "c"] {
            let plan = plans.plan(&set, &review("pods", "DELETE", name, "operator", &[]).admission);
            assert_eq!(names(&plan), ["operators-delete-pods"]);
        }
        assert_eq!(plans.len(), 1);
    }

    #[test]
    fn a_full_table_starts_again() {
        let set = set(POLICIES);
        let plans = Plans::new(&set);
        for n in 0..MAX_PLANS + 10 {
            let request = review("pods", "DELETE", "a", &format!("user-{n}"), &[]);
            assert!(plans.plan(&set, &request.admission).candidates.is_empty());
        }
        assert_eq!(plans.len(), 10);
    }
}
