//! Bodies that are not reviews the gateway can judge each get a clear, well-formed answer — a
//! review (with the uid echoed) when a uid can be read, a `v1 Status` JSON body otherwise — and
//! the server keeps serving on the same keep-alive connection.

use crate::common;

use common::{Gateway, pod_review};
use serde_json::json;

async fn gateway() -> Gateway {
    Gateway::start(&["--no-builtin-pack", "--max-body-bytes", "1048576"]).await
}

fn assert_status(status: u16, answer: &serde_json::Value, code: u16, reason: &str, message: &str) {
    assert_eq!(status, code, "{answer}");
    assert_eq!(answer["kind"], "Status", "{answer}");
    assert_eq!(answer["apiVersion"], "v1");
    assert_eq!(answer["status"], "Failure");
    assert_eq!(answer["code"], code);
    assert_eq!(answer["reason"], reason);
    let text = answer["message"].as_str().unwrap();
    assert!(text.contains(message), "{text:?} does not say {message:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_malformed_body_gets_a_well_formed_answer() {
    let gateway = gateway().await;

    let (status, answer) = gateway.post("this is not json").await;
    assert_status(status, &answer, 400, "BadRequest", "not JSON");

    let (status, answer) = gateway.post(vec![0xff_u8, 0xfe, 0x00]).await;
    assert_status(status, &answer, 400, "BadRequest", "not UTF-8");

    let (status, answer) = gateway.post("").await;
    assert_status(status, &answer, 400, "BadRequest", "empty");

    let (status, answer) = gateway
        .post(r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#)
        .await;
    assert_status(status, &answer, 400, "BadRequest", "no `request`");

    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (status, answer) = gateway.post(deep).await;
    assert_status(status, &answer, 400, "BadRequest", "nested too deeply");

    let deep_object = format!(
        r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}{}}}"#,
        r#"{"a":"#.repeat(5_000),
        "}".repeat(5_000)
    );
    let (status, answer) = gateway.post(deep_object).await;
    assert_status(status, &answer, 400, "BadRequest", "nested too deeply");

    let big = vec![b' '; 10 << 20];
    let (status, answer) = gateway.post(big).await;
    assert_status(
        status,
        &answer,
        413,
        "RequestEntityTooLarge",
        "larger than the gateway accepts",
    );

    // A review that is readable enough to have a uid is answered with a review.
    let (status, answer) = gateway
        .post(
            r#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"old-1"}}"#,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(answer["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(answer["response"]["uid"], "old-1");
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(answer["response"]["status"]["code"], 400);
    let message = answer["response"]["status"]["message"].as_str().unwrap();
    assert!(message.contains("admission.k8s.io/v1beta1"), "{message}");

    let (status, answer) = gateway
        .post(r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"bad-2","operation":"EXPLODE"}}"#)
        .await;
    assert_eq!(status, 200);
    assert_eq!(answer["response"]["uid"], "bad-2");
    assert_eq!(answer["response"]["allowed"], false);
    assert!(
        answer["response"]["status"]["message"]
            .as_str()
            .unwrap()
            .contains("malformed"),
        "{answer}"
    );

    // Still serving, on the same client.
    let (status, answer) = gateway.post(pod_review("after-1", "DELETE", "ns", "p")).await;
    assert_eq!(status, 200);
    assert_eq!(answer["response"], json!({"uid": "after-1", "allowed": true}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_paths_and_methods_get_status_answers() {
    let gateway = gateway().await;
    let response = gateway.client.get(gateway.url("/validate")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 405);
    let answer: serde_json::Value = response.json().await.unwrap();
    assert_eq!(answer["reason"], "MethodNotAllowed");

    let (status, answer) = common::post_with(&gateway.client, &gateway.url("/mutate"), "{}").await;
    assert_status(status, &answer, 404, "NotFound", "POST /validate");

    let (status, answer) = gateway.post(pod_review("after-2", "CREATE", "ns", "p")).await;
    assert_eq!(status, 200);
    assert_eq!(answer["response"]["uid"], "after-2");
}
