//! The `history` CEL library and the ledger behind it, end to end: type-checked at load, each
//! scope answered from the ledger as the request sees it (its user, its namespace, the workload
//! of its target), recording a decision, and `evaluate_in` judging a budget.

use crate::support;

use chrono::{DateTime, Duration, Utc};
use policies_cel::cel::value::to_json;
use policies_cel::cel::{Bindings, Budget, Env, EvalError, Root, Value};
use policies_cel::cluster::ClusterModel;
use policies_cel::cluster::object::Retention;
use policies_cel::history::{Figures, Ledger, Record, RequestHistory, WorkloadRef, record_decision};
use policies_cel::policy::Loader;
use policies_cel::{EvalContext, Request, evaluate, evaluate_in};
use serde_json::json;
use support::cluster::*;

const OPERATOR: &str = "system:serviceaccount:ops:operator";

fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000, 0).unwrap()
}

fn cluster() -> ClusterModel {
    let sts = statefulset("db", "pg", 3, "pg", &[], Retention::default());
    let mut objects = vec![sts.clone()];
    for i in 0..3 {
        objects.push(owned_by(
            with_labels(pod("db", &format!("pg-{i}"), "node-a", true), &[("app", "pg")]),
            &sts,
        ));
    }
    objects.push(pod("db", "loose", "node-a", true));
    model(objects)
}

fn pg() -> WorkloadRef {
    WorkloadRef {
        kind: "StatefulSet".into(),
        namespace: "db".into(),
        name: "pg".into(),
    }
}

fn record(ago_seconds: i64, user: &str, namespace: &str, workload: Option<WorkloadRef>, pods: u64) -> Record {
    let mut record = Record::new(
        now() - Duration::seconds(ago_seconds),
        user,
        namespace,
        Figures {
            deleted: pods,
            pods_disrupted: pods,
            ..Figures::default()
        },
    );
    record.workload = workload;
    record
}

fn ledger() -> Ledger {
    let mut ledger = Ledger::default();
    ledger.record(record(60, OPERATOR, "db", Some(pg()), 1));
    ledger.record(record(120, OPERATOR, "web", None, 2));
    ledger.record(record(30, "alice", "db", Some(pg()), 1));
    // Outside a 10m window.
    ledger.record(record(900, OPERATOR, "db", Some(pg()), 5));
    ledger
}

fn delete_pod(name: &str) -> Request {
    delete(("", "v1", "pods"), "Pod", "db", name, None)
}

fn eval(
    source: &str,
    request: &Request,
    ledger: Option<&Ledger>,
    cluster: &ClusterModel,
) -> Result<Value, EvalError> {
    let program = Env::admission()
        .compile(source)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let history = RequestHistory::new(ledger, Some(now()), request, cluster);
    program.eval(&Bindings::new().with_history(&history), &Budget::default())
}

#[test]
fn history_calls_are_typed_as_maps_of_ints_and_detected() {
    let env = Env::admission();
    let program = env.compile("history.byRequester('10m')").unwrap();
    assert_eq!(program.result_type().to_string(), "map(string, int)");
    assert!(program.uses(Root::History));
    assert!(!program.uses(Root::Impact));
    // The figures are ints: arithmetic with them type-checks, a string comparison does not.
    env.compile("history.onWorkload(duration('5m')).podsDisrupted + 1 <= 2")
        .unwrap();
    let error = env
        .compile("history.inNamespace('1m').deleted == 'x'")
        .unwrap_err();
    assert!(
        error.render().contains("no matching overload"),
        "{}",
        error.render()
    );
    for (source, says) in [
        ("history.byRequester(10)", "applied to '(int)'"),
        ("history.byUser('10m')", "history.byUser"),
        ("history.byRequester('10m', '5m')", "with 2 arguments"),
    ] {
        let error = env.compile(source).unwrap_err().render();
        assert!(error.contains(says), "{source}: {error}");
    }
}

#[test]
fn each_scope_totals_its_own_records_in_the_window() {
    let (ledger, cluster) = (ledger(), cluster());
    let request = delete_pod("pg-1");
    let totals = |scope: &str| {
        to_json(
            &eval(
                &format!("history.{scope}('10m')"),
                &request,
                Some(&ledger),
                &cluster,
            )
            .unwrap(),
        )
    };
    assert_eq!(
        totals("byRequester"),
        json!({"requests": 2, "deleted": 3, "podsDisrupted": 3, "dataLoss": 0, "workloadsDown": 0})
    );
    assert_eq!(totals("inNamespace")["podsDisrupted"], 2);
    // The pod's controlling StatefulSet: the operator's and alice's deletions of its members.
    assert_eq!(totals("onWorkload")["requests"], 2);
    assert_eq!(totals("inCluster")["podsDisrupted"], 4);
    // The window is the policy's: 90s holds the two most recent records of the cluster.
    let recent = eval(
        "history.inCluster(duration('90s')).requests",
        &request,
        Some(&ledger),
        &cluster,
    );
    assert_eq!(recent.unwrap(), Value::Int(2));
    // The record 15 minutes ago counts in a 20m window.
    let long = eval(
        "history.byRequester('20m').podsDisrupted",
        &request,
        Some(&ledger),
        &cluster,
    );
    assert_eq!(long.unwrap(), Value::Int(8));
}

#[test]
fn a_target_outside_any_workload_has_an_empty_workload_history() {
    let (ledger, cluster) = (ledger(), cluster());
    let loose = eval(
        "history.onWorkload('10m').requests",
        &delete_pod("loose"),
        Some(&ledger),
        &cluster,
    );
    assert_eq!(loose.unwrap(), Value::Int(0));
    // Without a model there is no workload either, and no error.
    let empty = ClusterModel::new();
    let unknown = eval(
        "history.onWorkload('10m').requests",
        &delete_pod("pg-1"),
        Some(&ledger),
        &empty,
    );
    assert_eq!(unknown.unwrap(), Value::Int(0));
}

#[test]
fn no_ledger_is_an_empty_history_and_bad_windows_are_errors() {
    let cluster = cluster();
    let request = delete_pod("pg-1");
    let none = eval("history.byRequester('10m').requests", &request, None, &cluster);
    assert_eq!(none.unwrap(), Value::Int(0));
    let ledger = ledger();
    for (window, says) in [
        ("'2h'", "longer than the history keeps (1h)"),
        ("'soon'", "is not a duration"),
        ("'0s'", "longer than zero"),
    ] {
        let error = eval(
            &format!("history.byRequester({window})"),
            &request,
            Some(&ledger),
            &cluster,
        )
        .unwrap_err()
        .to_string();
        assert!(error.starts_with("history.byRequester: "), "{error}");
        assert!(error.contains(says), "{window}: {error}");
    }
    // `history` is not a value of its own.
    let bare = eval("history == null", &request, Some(&ledger), &cluster).unwrap_err();
    assert!(bare.to_string().contains("call one of its functions"), "{bare}");
}

const BUDGET: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata:
  name: pod-budget
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["DELETE"]
      resources: ["pods"]
  validations:
  - expression: "history.byRequester('10m').podsDisrupted + impact.summary.podsDisrupted <= 3"
    messageExpression: "'already ' + string(history.byRequester('10m').podsDisrupted) + ' pods in 10m'"
"#;

#[test]
fn evaluate_in_judges_with_the_ledger_and_recording_feeds_it() {
    let set = Loader::new()
        .add_str("budget.yaml", BUDGET)
        .unwrap()
        .finish()
        .unwrap();
    assert!(set.uses_history());
    let cluster = cluster();
    let mut ledger = Ledger::default();
    // The plain entry point sees no history: never a budget denial.
    assert!(evaluate(&set, &delete_pod("pg-0"), &cluster).allowed);
    let mut verdicts = Vec::new();
    for (i, name) in ["pg-0", "pg-1", "pg-2", "loose"].into_iter().enumerate() {
        let at = now() + Duration::seconds(10 * i as i64);
        let request = delete_pod(name);
        let decision = evaluate_in(&set, &request, &cluster, &EvalContext::with_history(&ledger, at));
        record_decision(&mut ledger, &request, &decision, &cluster, at);
        verdicts.push(decision.allowed);
        if !decision.allowed {
            assert_eq!(decision.denials[0].message, "already 3 pods in 10m");
        }
    }
    assert_eq!(verdicts, [true, true, true, false]);
    // Three admitted deletions recorded (the denied one is not), each naming its workload.
    assert_eq!(ledger.len(), 3);
    let first = ledger.records().next().unwrap();
    assert_eq!(first.workload.as_ref(), Some(&pg()));
    assert_eq!(
        (first.user.as_str(), first.action.as_str()),
        (OPERATOR, "delete Pod db/pg-0")
    );
}

#[test]
fn dry_runs_and_harmless_requests_are_not_recorded() {
    let set = Loader::new()
        .add_str("budget.yaml", BUDGET)
        .unwrap()
        .finish()
        .unwrap();
    let cluster = cluster();
    let mut ledger = Ledger::default();
    let dry = review(
        "DELETE",
        ("", "v1", "pods"),
        "Pod",
        "db",
        "pg-0",
        json!({"dryRun": true, "object": null}),
    );
    let decision = evaluate_in(&set, &dry, &cluster, &EvalContext::with_history(&ledger, now()));
    assert!(decision.allowed);
    assert!(!record_decision(&mut ledger, &dry, &decision, &cluster, now()));
    // A pod the model does not hold disrupts nothing.
    let gone = delete_pod("never-was");
    let decision = evaluate_in(&set, &gone, &cluster, &EvalContext::with_history(&ledger, now()));
    assert!(!record_decision(&mut ledger, &gone, &decision, &cluster, now()));
    assert!(ledger.is_empty());
}
