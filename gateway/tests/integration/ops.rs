//! The plain-HTTP operations listener: `/healthz`, `/readyz` with its detail, and a `/metrics`
//! scrape carrying every named series after some traffic.

use crate::common;

use common::{Gateway, repo};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_readiness_and_metrics_are_served() {
    let gateway = Gateway::start(&[]).await;
    assert_eq!(gateway.ops("/healthz").await, (200, "ok\n".to_owned()));

    let (status, body) = gateway.ops("/readyz").await;
    assert_eq!(status, 200, "{body}");
    let readiness: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(readiness["ready"], true);
    assert_eq!(readiness["modelReady"], true);
    assert_eq!(readiness["policyGeneration"], 1);
    assert_eq!(readiness["policies"], policies_cel::pack::files().len());
    assert!(readiness["modelAgeSeconds"].as_f64().unwrap() < 60.0);

    for file in [
        "namespace-delete-operator.json",
        "pvc-delete-operator.json",
        "pod-delete-pg-main-0.json",
    ] {
        let (status, _) = gateway
            .post_file(&repo(&format!("testdata/reviews/{file}")))
            .await;
        assert_eq!(status, 200);
    }
    let (_, _) = gateway.post("not json").await;

    let (status, metrics) = gateway.ops("/metrics").await;
    assert_eq!(status, 200);
    for series in [
        "suture_gateway_request_duration_seconds_bucket{",
        "suture_gateway_request_duration_seconds_count{verdict=\"denied\"} 1",
        "suture_gateway_request_duration_seconds_count{verdict=\"allowed\"} 2",
        "suture_gateway_request_duration_seconds_count{verdict=\"invalid\"} 1",
        "suture_gateway_decisions_total{policy=\"suture-data-loss\",verdict=\"deny\"} 1",
        "suture_gateway_decisions_total{policy=\"suture-data-loss\",verdict=\"pass\"}",
        "suture_gateway_model_objects{kind=\"Pod\"}",
        "suture_gateway_model_objects{kind=\"StatefulSet.apps\"}",
        "suture_gateway_model_age_seconds ",
        "suture_gateway_model_ready 1",
        &format!("suture_gateway_policies {}", policies_cel::pack::files().len()),
        "suture_gateway_policy_reload_generation 1",
        "suture_gateway_policy_reload_failures_total 0",
        "suture_gateway_snapshot_reload_failures_total 0",
        "suture_gateway_evaluation_errors_total{kind=\"timeout\"} 0",
        "suture_gateway_evaluation_errors_total{kind=\"panic\"} 0",
    ] {
        let series: &str = series;
        assert!(metrics.contains(series), "{series} missing from\n{metrics}");
    }
    assert_eq!(gateway.ops("/nope").await.0, 404);
}
