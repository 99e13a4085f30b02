//! A SafetyPolicy's `allowAnnotation` escape hatch, end to end: loaded from YAML, judged with the
//! impact estimate, and found on the target's controlling owner in the cluster model.

use crate::support;

use policies_cel::cluster::Spec;
use policies_cel::cluster::object::{Labels, Retention, Text};
use policies_cel::evaluate;
use policies_cel::policy::Loader;
use support::cluster::*;

const POLICY: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: SafetyPolicy
metadata:
  name: keep-members
spec:
  allowAnnotation: suture.dev/allow-disruption
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["DELETE"]
      resources: ["pods"]
  validations:
  - expression: "impact.summary.podsDisrupted == 0"
    messageExpression: "'stops ' + impact.pods.map(p, p.name).join(', ')"
"#;

fn cluster(annotated: bool) -> policies_cel::cluster::ClusterModel {
    let mut sts = statefulset("db", "pg", 3, "pg", &[], Retention::default());
    if annotated {
        let annotations: Labels = [(
            Text::from("suture.dev/allow-disruption"),
            Text::from("node drain OPS-7"),
        )]
        .into();
        sts.annotations = annotations;
    }
    let pod = owned_by(
        with_labels(pod("db", "pg-2", "node-a", true), &[("app", "pg")]),
        &sts,
    );
    model(vec![object("Namespace", "", "db", Spec::Namespace), sts, pod])
}

#[test]
fn an_annotated_owner_admits_the_request_with_a_warning() {
    let set = Loader::new()
        .add_str("policy.yaml", POLICY)
        .unwrap()
        .finish()
        .unwrap();
    assert_eq!(
        set.policies[0].allow_annotation.as_deref(),
        Some("suture.dev/allow-disruption")
    );
    let request = delete(("", "v1", "pods"), "Pod", "db", "pg-2", None);

    let denied = evaluate(&set, &request, &cluster(false));
    assert!(!denied.allowed);
    assert_eq!(denied.denials[0].message, "stops pg-2");

    let allowed = evaluate(&set, &request, &cluster(true));
    assert!(allowed.allowed, "{allowed:?}");
    assert_eq!(
        allowed.warnings,
        [
            "SafetyPolicy 'keep-members' would deny this request, but its owner StatefulSet db/pg is annotated suture.dev/allow-disruption=\"node drain OPS-7\": stops pg-2"
        ]
    );
}

#[test]
fn a_malformed_annotation_key_is_a_load_error() {
    let bad = POLICY.replace("suture.dev/allow-disruption", "not a key!");
    let error = Loader::new()
        .add_str("policy.yaml", &bad)
        .and_then(Loader::finish)
        .unwrap_err()
        .to_string();
    assert!(error.contains("spec.allowAnnotation"), "{error}");
}
