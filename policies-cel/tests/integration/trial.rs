//! Trial evaluations (`EvalContext::trial`): under an allowance the pack's evaluation fits in,
//! the decision is the full evaluation's; a policy that needs more than the allowance leaves the
//! trial exhausted (its decision not to be used), while the same policy's own budget is its
//! verdict, as without a trial.

use policies_cel::cluster::ClusterModel;
use policies_cel::policy::Loader;
use policies_cel::{Decision, EvalContext, Request, Trial, evaluate, evaluate_in, pack};

use crate::support::repository::{database, review};

fn on_trial(
    set: &policies_cel::policy::PolicySet,
    request: &Request,
    cluster: &ClusterModel,
    allowance: u64,
) -> (Decision, Trial) {
    let trial = Trial::new(allowance);
    let context = EvalContext {
        trial: Some(&trial),
        ..EvalContext::default()
    };
    let decision = evaluate_in(set, request, cluster, &context);
    (decision, trial)
}

#[test]
fn within_the_allowance_a_trial_decides_as_the_full_evaluation() {
    let set = pack::builtin().unwrap();
    let cluster = database();
    let mut denied = 0;
    for name in [
        "pod-delete-pg-main-0.json",
        "statefulset-update-scale-down.json",
        "namespace-delete-operator.json",
        "pvc-delete-operator.json",
    ] {
        let request = review(name);
        let full = evaluate(&set, &request, &cluster);
        let (decision, trial) = on_trial(&set, &request, &cluster, 100_000);
        assert!(!trial.exhausted(), "{name}: the pack fits in 100k units");
        assert!(trial.spent() > 0, "{name}: the policies' cost is counted");
        assert_eq!(decision.allowed, full.allowed, "{name}");
        assert_eq!(decision.denials, full.denials, "{name}");
        denied += usize::from(!full.allowed);

        let (_, starved) = on_trial(&set, &request, &cluster, trial.spent() - 1);
        assert!(starved.exhausted(), "{name}: one unit short of what it spent");
    }
    assert!(denied >= 2, "denials compared too: {denied}");
}

const COSTLY: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata: {name: costly}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["*"], operations: [DELETE], resources: [pods]}]
  validations:
  - expression: "lists.range(5000).all(i, i >= 0)"
"#;

#[test]
fn a_policy_beyond_the_allowance_exhausts_the_trial_not_its_verdict() {
    let set = Loader::new()
        .add_str("costly.yaml", COSTLY)
        .unwrap()
        .finish()
        .unwrap();
    let cluster = database();
    let request = review("pod-delete-pg-main-0.json");
    let full = evaluate(&set, &request, &cluster);
    assert!(full.allowed, "{:?}", full.denials);

    let (_, small) = on_trial(&set, &request, &cluster, 1_000);
    assert!(small.exhausted(), "5000 iterations do not fit in 1000 units");
    assert_eq!(small.spent(), 1_000, "what it was allowed, not more");

    let (decision, ample) = on_trial(&set, &request, &cluster, 1_000_000);
    assert!(!ample.exhausted());
    assert!(decision.allowed);
}

#[test]
fn a_policy_out_of_its_own_budget_is_judged_by_it_on_trial_too() {
    let set = Loader::new()
        .add_str("costly.yaml", COSTLY)
        .unwrap()
        .finish()
        .unwrap();
    let mut set = set;
    set.options.cost_limit = 500;
    let cluster = database();
    let request = review("pod-delete-pg-main-0.json");
    let full = evaluate(&set, &request, &cluster);
    let (decision, trial) = on_trial(&set, &request, &cluster, 100_000);
    assert!(
        !trial.exhausted(),
        "the policy's own budget stopped it, not the trial"
    );
    assert_eq!(decision.allowed, full.allowed);
    assert_eq!(decision.denials, full.denials);
    assert!(!full.allowed, "failurePolicy Fail: a budget overrun denies");
}
