//! Self-protection through the webhook: a request that would delete or change the gateway's
//! own Deployment is refused (with the guard's message) before any policy runs, while the
//! allowed installer identity and unrelated objects pass.

use crate::common;

use common::Gateway;
use serde_json::json;

fn deployment_review(uid: &str, operation: &str, user: &str, subresource: Option<&str>) -> String {
    let mut request = json!({
        "uid": uid,
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "name": "suture-gateway",
        "namespace": "suture-system",
        "operation": operation,
        "userInfo": {"username": user},
        "object": null,
        "oldObject": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "suture-gateway", "namespace": "suture-system"}},
    });
    if let Some(sub) = subresource {
        request["subResource"] = json!(sub);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_refuses_changes_to_its_own_deployment() {
    let gateway = Gateway::start(&[
        "--protect-namespace",
        "suture-system",
        "--protect-deployment",
        "suture-gateway",
        "--protect-webhook",
        "suture-gateway",
        "--protect-allow-user",
        "installer",
    ])
    .await;
    let (status, answer) = gateway
        .post(deployment_review("d-1", "DELETE", "mallory", None))
        .await;
    assert_eq!(status, 200);
    let response = &answer["response"];
    assert_eq!(response["uid"], "d-1");
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 403);
    let message = response["status"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "suture-gateway protects its own objects: deleting Deployment suture-system/suture-gateway"
        ),
        "{message}"
    );

    let (_, answer) = gateway
        .post(deployment_review("d-2", "DELETE", "installer", None))
        .await;
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
    let (_, answer) = gateway
        .post(deployment_review("d-3", "UPDATE", "mallory", Some("status")))
        .await;
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
    let (_, answer) = gateway
        .post(deployment_review("d-4", "UPDATE", "mallory", Some("scale")))
        .await;
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletecollection_does_not_take_the_deployment_unnamed() {
    // A deletecollection reaches the webhook as one DELETE per object, each with an empty name
    // and the object as oldObject (kube-apiserver's static admission attributes carry no name).
    let gateway = Gateway::start(&[
        "--protect-namespace",
        "suture-system",
        "--protect-deployment",
        "suture-gateway",
    ])
    .await;
    let unnamed = |uid: &str, object: &str| {
        let mut review: serde_json::Value =
            serde_json::from_str(&deployment_review(uid, "DELETE", "mallory", None)).unwrap();
        // kube-apiserver leaves the empty name out.
        review["request"].as_object_mut().unwrap().remove("name");
        review["request"]["oldObject"]["metadata"]["name"] = json!(object);
        review.to_string()
    };
    let (_, answer) = gateway.post(unnamed("c-1", "suture-gateway")).await;
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    let message = answer["response"]["status"]["message"].as_str().unwrap();
    assert!(
        message.contains("deleting Deployment suture-system/suture-gateway"),
        "{message}"
    );
    let (_, answer) = gateway.post(unnamed("c-2", "another-deployment")).await;
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
}
