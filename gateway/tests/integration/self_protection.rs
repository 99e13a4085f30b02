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
