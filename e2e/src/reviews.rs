//! AdmissionReviews as kube-apiserver sends them, for tests that post to a gateway replica
//! directly (kube-apiserver calls one URL).

use serde_json::{Value, json};

/// A DELETE of pod `pod` (label `app: db`) in `namespace` by `user`, a service account
/// (`system:serviceaccount:NS:NAME`, its groups derived from it), with background propagation.
pub fn pod_delete(uid: &str, namespace: &str, pod: &str, user: &str, dry_run: bool) -> Value {
    let account_namespace = user
        .strip_prefix("system:serviceaccount:")
        .and_then(|rest| rest.split_once(':'))
        .map_or("", |(namespace, _)| namespace);
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
            "requestResource": {"group": "", "version": "v1", "resource": "pods"},
            "name": pod,
            "namespace": namespace,
            "operation": "DELETE",
            "userInfo": {
                "username": user,
                "groups": [
                    "system:serviceaccounts",
                    format!("system:serviceaccounts:{account_namespace}"),
                    "system:authenticated"
                ]
            },
            "object": null,
            "oldObject": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod, "namespace": namespace, "labels": {"app": "db"}}},
            "dryRun": dry_run,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_accounts_groups_name_its_namespace() {
        let review = pod_delete("u", "db", "db-0", "system:serviceaccount:ops:op", true);
        let request = &review["request"];
        assert_eq!(request["userInfo"]["groups"][1], "system:serviceaccounts:ops");
        assert_eq!(request["oldObject"]["metadata"]["name"], "db-0");
        assert_eq!(request["dryRun"], true);
    }
}
