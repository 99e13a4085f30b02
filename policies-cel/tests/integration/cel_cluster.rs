//! The `cluster` CEL library: read-only look-ups into the cluster model, bounded, and an error
//! (not a wrong answer) when there is no model.

use crate::support;

use policies_cel::cel::value::to_json;
use policies_cel::cel::{Bindings, Budget, Env, EvalError, Value};
use policies_cel::cluster::object::Retention;
use policies_cel::cluster::{ClusterModel, Spec};
use serde_json::json;
use support::cluster::*;

fn cluster() -> ClusterModel {
    let sts = statefulset("databases", "pg", 3, "pg", &["data"], Retention::default());
    let mut objects = vec![object("Namespace", "", "databases", Spec::Namespace), sts.clone()];
    for i in 0..3 {
        objects.push(owned_by(
            with_labels(
                pod("databases", &format!("pg-{i}"), "node-a", i != 2),
                &[("app", "pg")],
            ),
            &sts,
        ));
    }
    objects.push(with_labels(
        pod("web", "web-0", "node-b", true),
        &[("app", "web")],
    ));
    model(objects)
}

fn eval(model: &ClusterModel, source: &str) -> Result<Value, EvalError> {
    let program = Env::admission()
        .compile(source)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    program.eval(&Bindings::new().with_cluster(model), &Budget::default())
}

#[test]
fn get_returns_an_optional_object() {
    let model = cluster();
    assert_eq!(
        to_json(
            &eval(
                &model,
                "cluster.get('StatefulSet', 'databases', 'pg').value().spec.replicas"
            )
            .unwrap()
        ),
        json!(3)
    );
    assert_eq!(
        eval(
            &model,
            "cluster.get('StatefulSet', 'databases', 'nope').hasValue()"
        )
        .unwrap(),
        Value::Bool(false)
    );
    assert_eq!(
        to_json(
            &eval(
                &model,
                "cluster.get('Pod', 'databases', 'pg-0').value().metadata.ownerReferences[0].kind"
            )
            .unwrap()
        ),
        json!("StatefulSet")
    );
}

#[test]
fn list_and_count_filter_by_namespace_and_labels() {
    let model = cluster();
    assert_eq!(eval(&model, "cluster.count('Pod', '')").unwrap(), Value::Int(4));
    assert_eq!(
        eval(&model, "cluster.count('Pod', 'databases', {'app': 'pg'})").unwrap(),
        Value::Int(3)
    );
    assert_eq!(
        to_json(&eval(&model, "cluster.list('Pod', 'databases').filter(p, p.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')).map(p, p.metadata.name)").unwrap()),
        json!(["pg-0", "pg-1"])
    );
    assert_eq!(
        eval(&model, "cluster.count('Pod', 'web', {'app': 'pg'})").unwrap(),
        Value::Int(0)
    );
}

#[test]
fn without_a_model_look_ups_are_an_error() {
    let program = Env::admission().compile("cluster.count('Pod', '') > 0").unwrap();
    let error = program.eval(&Bindings::new(), &Budget::default()).unwrap_err();
    assert!(matches!(error, EvalError::Unavailable(_)), "{error}");
}

#[test]
fn wrong_arity_is_a_compile_error() {
    let error = Env::admission().compile("cluster.get('Pod')").unwrap_err();
    assert!(
        error
            .render()
            .contains("found no matching overload for 'cluster.get' with 1 arguments"),
        "{}",
        error.render()
    );
}

#[test]
fn a_program_using_cluster_says_so() {
    assert!(
        Env::admission()
            .compile("cluster.count('Pod', '') > 1")
            .unwrap()
            .uses(policies_cel::cel::Root::Cluster)
    );
}
