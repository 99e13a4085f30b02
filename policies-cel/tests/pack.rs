//! The built-in pack: it loads, every expression compiles, names are unique and each policy is a
//! SafetyPolicy for operators (service accounts) that leaves kube-system's controllers alone.

#![allow(clippy::panic)] // Helpers outside #[test] functions panic with context.

use std::collections::HashSet;

use policies_cel::pack;
use policies_cel::policy::{Action, PolicyKind};

#[test]
fn pack_loads_and_compiles() {
    let set = pack::builtin().unwrap_or_else(|e| panic!("the built-in pack does not load:\n{e}"));
    assert_eq!(set.len(), pack::files().len(), "one policy per file");
    assert!((5..=7).contains(&set.len()));
    for policy in &set.policies {
        assert!(
            !policy.validations.is_empty(),
            "{} has no validation",
            policy.name
        );
        assert!(
            !policy.uses_impact,
            "{}: the first pack reads only object, oldObject and request",
            policy.name
        );
    }
}

#[test]
fn pack_names_are_unique_and_prefixed() {
    let set = pack::builtin().unwrap_or_else(|e| panic!("{e}"));
    let mut names = HashSet::new();
    for policy in &set.policies {
        assert!(
            names.insert(policy.name.clone()),
            "duplicate policy name {}",
            policy.name
        );
        assert!(
            policy.name.starts_with("suture-"),
            "{} lacks the suture- prefix",
            policy.name
        );
    }
}

#[test]
fn pack_judges_operators_but_not_kube_system() {
    let set = pack::builtin().unwrap_or_else(|e| panic!("{e}"));
    for policy in &set.policies {
        assert_eq!(policy.kind, PolicyKind::SafetyPolicy, "{}", policy.name);
        let subjects = policy
            .subjects
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no subjects", policy.name));
        assert_eq!(subjects.service_accounts, ["*/*"], "{}", policy.name);
        assert_eq!(
            subjects.exclude_service_accounts,
            ["kube-system/*"],
            "{}",
            policy.name
        );
        assert!(
            policy.match_constraints.is_some(),
            "{} matches every request",
            policy.name
        );
        assert_eq!(
            policy.audit_annotations.len(),
            1,
            "{} records the escape hatch",
            policy.name
        );
        let expected = if policy.name == "suture-volume-delete" {
            Action::Warn
        } else {
            Action::Deny
        };
        assert_eq!(policy.actions, [expected], "{}", policy.name);
        // Every validation names the object in a messageExpression, with a static fallback.
        for validation in &policy.validations {
            assert!(validation.message_expression.is_some(), "{}", policy.name);
            assert!(validation.message.is_some(), "{}", policy.name);
        }
    }
}

#[test]
fn pack_files_are_listed_with_their_text() {
    let files = pack::files();
    let names: HashSet<_> = files.iter().map(|(name, _)| *name).collect();
    assert_eq!(names.len(), files.len());
    for (name, text) in files {
        assert!(name.starts_with("pack/") && name.ends_with(".yaml"), "{name}");
        assert!(text.contains("kind: SafetyPolicy"), "{name}");
        assert!(
            text.contains("suture.dev/allow-disruption"),
            "{name} has no escape hatch"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// What the pack decides, on requests in the exact AdmissionReview wire form.

use policies_cel::{Decision, EmptyCluster, Request, evaluate};
use serde_json::{Value as Json, json};

const OPERATOR: &str = "system:serviceaccount:databases:pg-operator";
const CONTROLLER: &str = "system:serviceaccount:kube-system:statefulset-controller";

struct Review {
    operation: &'static str,
    kind: (&'static str, &'static str, &'static str),
    resource: (&'static str, &'static str),
    sub_resource: Option<&'static str>,
    namespace: Option<&'static str>,
    name: &'static str,
    user: &'static str,
    object: Json,
    old_object: Json,
}

impl Review {
    fn decide(&self) -> Decision {
        let set = pack::builtin().unwrap_or_else(|e| panic!("{e}"));
        let (group, version, kind) = self.kind;
        let (resource_group, resource) = self.resource;
        let mut request = json!({
            "uid": "3b0c8f1e-2d7a-4c35-9a57-6b4f3e2d1c0a",
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": resource_group, "version": "v1", "resource": resource},
            "name": self.name,
            "operation": self.operation,
            "userInfo": {"username": self.user, "groups": ["system:serviceaccounts", "system:authenticated"]},
            "object": self.object,
            "oldObject": self.old_object,
            "dryRun": false,
        });
        if let Some(namespace) = self.namespace {
            request["namespace"] = json!(namespace);
        }
        if let Some(sub_resource) = self.sub_resource {
            request["subResource"] = json!(sub_resource);
        }
        let review =
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request});
        let request = Request::from_review(review).unwrap_or_else(|e| panic!("{e}"));
        evaluate(&set, &request, &EmptyCluster)
    }
}

fn statefulset(replicas: i64, annotations: Json) -> Json {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "pg", "namespace": "databases", "annotations": annotations},
           "spec": {"replicas": replicas, "serviceName": "pg",
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}]}})
}

fn scale_statefulset(old: i64, new: i64, user: &'static str, annotations: Json) -> Review {
    Review {
        operation: "UPDATE",
        kind: ("apps", "v1", "StatefulSet"),
        resource: ("apps", "statefulsets"),
        sub_resource: None,
        namespace: Some("databases"),
        name: "pg",
        user,
        object: statefulset(new, annotations.clone()),
        old_object: statefulset(old, annotations),
    }
}

fn denied_by(decision: &Decision) -> Vec<&str> {
    decision.denials.iter().map(|d| d.policy.as_str()).collect()
}

fn assert_allowed(decision: &Decision) {
    assert!(decision.allowed, "denied: {:#?}", decision.denials);
    assert!(decision.warnings.is_empty(), "warnings: {:#?}", decision.warnings);
    for result in &decision.policies {
        let errored = matches!(result.outcome, policies_cel::eval::Outcome::Error { .. });
        assert!(!errored, "{} failed to evaluate: {result:?}", result.policy);
    }
}

#[test]
fn statefulset_scale_down_by_one_is_allowed() {
    assert_allowed(&scale_statefulset(5, 4, OPERATOR, json!({})).decide());
    assert_allowed(&scale_statefulset(3, 2, OPERATOR, json!({})).decide());
    // Small StatefulSets have no quorum to lose.
    assert_allowed(&scale_statefulset(2, 1, OPERATOR, json!({})).decide());
    // Scale-ups.
    assert_allowed(&scale_statefulset(3, 7, OPERATOR, json!({})).decide());
}

#[test]
fn statefulset_scale_down_below_quorum_is_denied_with_numbers() {
    let decision = scale_statefulset(5, 2, OPERATOR, json!({})).decide();
    assert_eq!(
        denied_by(&decision),
        ["suture-statefulset-quorum", "suture-statefulset-quorum"]
    );
    assert_eq!(
        decision.denials[0].message,
        "StatefulSet databases/pg: scaling down from 5 to 2 replicas removes 3 members at once; scale down one \
         replica at a time so each member leaves the quorum cleanly, or annotate the StatefulSet with \
         suture.dev/allow-disruption: \"<reason>\""
    );
    assert!(
        decision.denials[1]
            .message
            .contains("leaves fewer than a majority (3) of today's 5 members"),
        "{}",
        decision.denials[1].message
    );
    assert_eq!(decision.denials[0].reason, "Forbidden");
}

#[test]
fn statefulset_controllers_in_kube_system_are_not_judged() {
    assert_allowed(&scale_statefulset(5, 2, CONTROLLER, json!({})).decide());
    assert_allowed(&scale_statefulset(5, 0, CONTROLLER, json!({})).decide());
}

#[test]
fn the_escape_hatch_allows_and_is_audited() {
    let annotations = json!({"suture.dev/allow-disruption": "INC-4211 shrink after migration"});
    let decision = scale_statefulset(5, 2, OPERATOR, annotations).decide();
    assert_allowed(&decision);
    let recorded = decision
        .audit_annotations
        .get("suture-statefulset-quorum/allow-disruption");
    assert_eq!(
        recorded.map(String::as_str),
        Some(
            "StatefulSet databases/pg scaled from 5 to 2 replicas, allowed by suture.dev/allow-disruption: INC-4211 shrink after migration"
        )
    );
}

#[test]
fn scale_to_zero_through_the_scale_subresource_is_denied() {
    let scale = |replicas: Option<i64>| {
        let mut spec = json!({});
        if let Some(replicas) = replicas {
            spec["replicas"] = json!(replicas);
        }
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
               "metadata": {"name": "web", "namespace": "shop"}, "spec": spec, "status": {"replicas": 3}})
    };
    let review = |old: Option<i64>, new: Option<i64>| Review {
        operation: "UPDATE",
        kind: ("autoscaling", "v1", "Scale"),
        resource: ("apps", "deployments"),
        sub_resource: Some("scale"),
        namespace: Some("shop"),
        name: "web",
        user: OPERATOR,
        // A Scale omits spec.replicas when it is 0.
        object: scale(new),
        old_object: scale(old),
    };
    let decision = review(Some(3), None).decide();
    assert_eq!(denied_by(&decision), ["suture-scale-to-zero"]);
    assert!(
        decision.denials[0]
            .message
            .starts_with("Deployment shop/web: scaling from 3 replicas to 0 stops every pod"),
        "{}",
        decision.denials[0].message
    );
    assert_allowed(&review(Some(3), Some(1)).decide());
    assert_allowed(&review(None, Some(2)).decide());
}

#[test]
fn statefulset_scale_to_zero_is_left_to_the_scale_to_zero_policy() {
    let decision = scale_statefulset(5, 0, OPERATOR, json!({})).decide();
    assert_eq!(denied_by(&decision), ["suture-scale-to-zero"]);
    assert!(
        decision.denials[0]
            .message
            .starts_with("StatefulSet databases/pg: scaling from 5 replicas to 0")
    );
}

fn delete(
    kind: (&'static str, &'static str, &'static str),
    resource: (&'static str, &'static str),
    namespace: Option<&'static str>,
    name: &'static str,
    old: Json,
) -> Review {
    Review {
        operation: "DELETE",
        kind,
        resource,
        sub_resource: None,
        namespace,
        name,
        user: OPERATOR,
        object: Json::Null,
        old_object: old,
    }
}

#[test]
fn namespace_deletion_is_denied_unless_annotated() {
    let namespace = |annotations: Json| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "annotations": annotations}});
    let decision = delete(
        ("", "v1", "Namespace"),
        ("", "namespaces"),
        None,
        "shop",
        namespace(json!({})),
    )
    .decide();
    assert_eq!(denied_by(&decision), ["suture-namespace-delete"]);
    assert!(
        decision.denials[0]
            .message
            .starts_with("deleting Namespace shop deletes every object in it")
    );
    let annotated = namespace(json!({"suture.dev/allow-disruption": "decommissioned"}));
    let decision = delete(
        ("", "v1", "Namespace"),
        ("", "namespaces"),
        None,
        "shop",
        annotated,
    )
    .decide();
    assert_allowed(&decision);
    assert!(
        decision
            .audit_annotations
            .contains_key("suture-namespace-delete/allow-disruption")
    );
}

#[test]
fn crd_deletion_is_denied_naming_the_kind() {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                     "metadata": {"name": "clusters.postgres.example.com"},
                     "spec": {"group": "postgres.example.com", "names": {"kind": "Cluster", "plural": "clusters"}, "scope": "Namespaced"}});
    let decision = delete(
        ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        None,
        "clusters.postgres.example.com",
        crd,
    )
    .decide();
    assert_eq!(denied_by(&decision), ["suture-crd-delete"]);
    assert!(
        decision.denials[0].message.starts_with(
            "deleting CustomResourceDefinition clusters.postgres.example.com deletes every Cluster object"
        ),
        "{}",
        decision.denials[0].message
    );
}

#[test]
fn volume_deletion_warns() {
    let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data-pg-0", "namespace": "databases"},
                     "spec": {"volumeName": "pvc-0a1b", "resources": {"requests": {"storage": "20Gi"}}}});
    let decision = delete(
        ("", "v1", "PersistentVolumeClaim"),
        ("", "persistentvolumeclaims"),
        Some("databases"),
        "data-pg-0",
        pvc,
    )
    .decide();
    assert!(decision.allowed);
    assert_eq!(decision.warnings.len(), 1, "{:?}", decision.warnings);
    assert!(
        decision.warnings[0].contains(
            "deleting PersistentVolumeClaim databases/data-pg-0 (20Gi, volume pvc-0a1b) destroys its data"
        ),
        "{}",
        decision.warnings[0]
    );

    let pv = |policy: &str| {
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pvc-0a1b"},
                      "spec": {"persistentVolumeReclaimPolicy": policy, "capacity": {"storage": "20Gi"},
                               "claimRef": {"namespace": "databases", "name": "data-pg-0"}}})
    };
    let decision = delete(
        ("", "v1", "PersistentVolume"),
        ("", "persistentvolumes"),
        None,
        "pvc-0a1b",
        pv("Delete"),
    )
    .decide();
    assert_eq!(decision.warnings.len(), 1, "{:?}", decision.warnings);
    assert!(decision.warnings[0].contains("deleting PersistentVolume pvc-0a1b (20Gi, claimed by databases/data-pg-0) with reclaimPolicy Delete"), "{}", decision.warnings[0]);
    assert_allowed(
        &delete(
            ("", "v1", "PersistentVolume"),
            ("", "persistentvolumes"),
            None,
            "pvc-0a1b",
            pv("Retain"),
        )
        .decide(),
    );
}

#[test]
fn statefulset_retention_turned_to_delete_is_denied() {
    let with_policy = |policy: Json| {
        let mut sts = statefulset(3, json!({}));
        sts["spec"]["persistentVolumeClaimRetentionPolicy"] = policy;
        sts
    };
    let review = |old: Json, new: Json| Review {
        operation: "UPDATE",
        kind: ("apps", "v1", "StatefulSet"),
        resource: ("apps", "statefulsets"),
        sub_resource: None,
        namespace: Some("databases"),
        name: "pg",
        user: OPERATOR,
        object: new,
        old_object: old,
    };
    let decision = review(
        statefulset(3, json!({})),
        with_policy(json!({"whenScaled": "Delete", "whenDeleted": "Retain"})),
    )
    .decide();
    assert_eq!(denied_by(&decision), ["suture-statefulset-pvc-retention"]);
    assert_eq!(
        decision.denials[0].message,
        "StatefulSet databases/pg: setting persistentVolumeClaimRetentionPolicy.whenScaled to Delete makes Kubernetes \
         delete the claims of its volumeClaimTemplates (data) when the StatefulSet is scaled down, and with them their \
         data; annotate it with suture.dev/allow-disruption: \"<reason>\" if this is intended"
    );
    let both = with_policy(json!({"whenScaled": "Delete", "whenDeleted": "Delete"}));
    let decision = review(statefulset(3, json!({})), both.clone()).decide();
    assert!(
        decision.denials[0]
            .message
            .contains("whenDeleted and whenScaled to Delete"),
        "{}",
        decision.denials[0].message
    );
    // Already Delete: nothing changes.
    assert_allowed(&review(both.clone(), both).decide());
}
