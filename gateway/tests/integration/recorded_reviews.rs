//! Recorded AdmissionReviews (this repository's `testdata/reviews` and the shared kube-apiserver
//! captures) posted over real HTTPS to a gateway serving the built-in pack (plus a Warn+Audit
//! eviction policy) on the `database` snapshot. The full answers are compared with
//! `tests/fixtures/expected-responses.json`, whose verdicts agree with `kubectl suture check` on
//! the same inputs: CREATE, UPDATE, DELETE, the eviction subresource, the scale subresource and
//! dry runs.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{Gateway, repo, shared};
use serde_json::{Value, json};

const IMPACT_PODS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/impact-pods.yaml");
const EXPECTED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/expected-responses.json"
);
const EVICTION_AUDIT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/eviction-audit.yaml");
/// Each review is judged alone, as `check` judges it: no rate budget across them.
const NO_DISRUPTION_RATE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/no-disruption-rate.yaml"
);

fn expected() -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(EXPECTED).unwrap();
    serde_json::from_str(&text).unwrap()
}

async fn gateway(extra: &[&str]) -> Gateway {
    let cluster = repo("testdata/clusters/database");
    let mut args = vec![
        "--cluster",
        cluster.to_str().unwrap(),
        "-f",
        EVICTION_AUDIT,
        "--params",
        NO_DISRUPTION_RATE,
    ];
    args.extend_from_slice(extra);
    Gateway::start(&args).await
}

/// Posts every file and compares the answers with the expected ones. With
/// `SUTURE_UPDATE_EXPECTED=1` the expectations are rewritten instead (review the diff: the
/// verdicts must agree with `kubectl suture check --cluster testdata/clusters/database`).
async fn check_all(gateway: &Gateway, files: Vec<PathBuf>) {
    let mut expected = expected();
    let update = std::env::var_os("SUTURE_UPDATE_EXPECTED").is_some();
    assert!(!files.is_empty());
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let (status, answer) = gateway.post_file(&file).await;
        assert_eq!(status, 200, "{name}: {answer}");
        assert_eq!(answer["apiVersion"], "admission.k8s.io/v1", "{name}");
        assert_eq!(answer["kind"], "AdmissionReview", "{name}");
        if update {
            expected.insert(name, answer["response"].clone());
            continue;
        }
        let want = expected
            .get(&name)
            .unwrap_or_else(|| panic!("no expected answer for {name}"));
        assert_eq!(&answer["response"], want, "{name}");
    }
    if update {
        let text = serde_json::to_string_pretty(&expected).unwrap();
        std::fs::write(EXPECTED, text + "\n").unwrap();
    }
}

fn json_files(dir: PathBuf) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with("malformed"))
        .collect();
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repository_reviews_get_the_packs_verdicts() {
    let gateway = gateway(&[]).await;
    check_all(&gateway, json_files(repo("testdata/reviews"))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn captured_kube_apiserver_reviews_are_answered_in_full() {
    let Some(dir) = shared("fixtures/admission-reviews") else {
        return;
    };
    let gateway = gateway(&[]).await;
    check_all(&gateway, json_files(dir)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_eviction_subresource_gets_warnings_and_audit_annotations() {
    let gateway = gateway(&[]).await;
    let (status, answer) = gateway
        .post_file(&repo("testdata/reviews/pod-eviction-create.json"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        answer["response"],
        json!({
            "uid": "9f3c7a1e-5d2b-4b8f-a6e9-4c1d0b7e3f52",
            "allowed": true,
            "warnings": ["Validation failed for SafetyPolicy 'eviction-audit': evictions are audited"],
            "auditAnnotations": {
                "eviction-audit/evicted-by": "system:serviceaccount:kube-system:cluster-autoscaler",
                "validation.policy.admission.k8s.io/validation_failure":
                    "[{\"binding\":\"\",\"expressionIndex\":0,\"message\":\"evictions are audited\",\"policy\":\"eviction-audit\",\"validationActions\":[\"Warn\",\"Audit\"]}]"
            }
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_runs_are_judged_normally_and_marked_in_the_decision_log() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("decisions.log");
    let gateway = gateway(&["-f", IMPACT_PODS, "--decision-log", log.to_str().unwrap()]).await;
    let mut review: Value =
        serde_json::from_slice(&std::fs::read(repo("testdata/reviews/pod-delete-pg-main-0.json")).unwrap())
            .unwrap();
    review["request"]["dryRun"] = json!(true);
    review["request"]["uid"] = json!("dry-1");
    let (status, answer) = gateway.post(review.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(
        answer["response"],
        json!({
            "uid": "dry-1",
            "allowed": false,
            "status": {
                "status": "Failure",
                "code": 403,
                "reason": "Forbidden",
                "message": "SafetyPolicy 'no-pod-disruption' denied request: would stop 1 pod(s)"
            }
        })
    );

    let (_, wet) = gateway
        .post_file(&repo("testdata/reviews/pod-eviction-create.json"))
        .await;
    assert_eq!(wet["response"]["allowed"], true);

    // Lines are written in batches (at the latest every FLUSH_EVERY).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let text = loop {
        let text = std::fs::read_to_string(&log).unwrap();
        if text.lines().count() >= 2 || std::time::Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(suture_gateway::decision_log::FLUSH_EVERY / 4).await;
    };
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{text}");
    let dry = &lines[0];
    assert_eq!(dry["uid"], "dry-1");
    assert_eq!(dry["dryRun"], true);
    assert_eq!(dry["verdict"], "denied");
    assert_eq!(dry["deniedBy"], json!(["no-pod-disruption"]));
    assert_eq!(dry["operation"], "DELETE");
    assert_eq!(
        dry["resource"],
        json!({"group": "", "version": "v1", "resource": "pods"})
    );
    assert_eq!(dry["namespace"], "databases");
    assert_eq!(dry["name"], "pg-main-0");
    assert_eq!(dry["user"], "system:serviceaccount:databases:pg-operator");
    assert_eq!(dry["impact"]["podsDisrupted"], 1, "{dry}");
    assert!(dry["latencyUs"].as_u64().is_some());
    assert!(dry.get("stages").is_none(), "stages only with --stage-timings");
    let wet = &lines[1];
    assert_eq!(wet["dryRun"], false);
    assert_eq!(wet["verdict"], "allowed");
    assert_eq!(wet["warnedBy"], json!(["eviction-audit"]));
    assert_eq!(wet["resource"]["subresource"], "eviction");
    // The cluster-autoscaler runs in kube-system but is not the control plane: judged.
    assert_eq!(
        wet["user"],
        "system:serviceaccount:kube-system:cluster-autoscaler"
    );
    assert_eq!(wet["impact"]["podsDisrupted"], 1, "{wet}");
    // Never object bodies.
    assert!(!text.contains("\"spec\"") && !text.contains("oldObject") && !text.contains("metadata"));
}

/// The decision lines of `log` once `count` are written (they are written in batches).
async fn decision_lines(log: &std::path::Path, count: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if text.lines().count() >= count || std::time::Instant::now() > deadline {
            return text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        }
        tokio::time::sleep(suture_gateway::decision_log::FLUSH_EVERY / 4).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stage_timings_time_each_step_of_a_request_in_its_decision_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("decisions.log");
    let gateway = gateway(&["--decision-log", log.to_str().unwrap(), "--stage-timings"]).await;
    let mut review: Value =
        serde_json::from_slice(&std::fs::read(repo("testdata/reviews/pod-delete-pg-main-0.json")).unwrap())
            .unwrap();
    review["request"]["dryRun"] = json!(true);
    let (status, _) = gateway.post(review.to_string()).await;
    assert_eq!(status, 200);
    // kubernetes-admin: no policy of the pack judges a person.
    let (status, _) = gateway
        .post_file(&repo("testdata/reviews/statefulset-scale-subresource.json"))
        .await;
    assert_eq!(status, 200);

    let lines = decision_lines(&log, 2).await;
    assert_eq!(lines.len(), 2);
    let names = |line: &Value| -> Vec<String> {
        line["stages"]
            .as_array()
            .unwrap_or_else(|| panic!("no stages in {line}"))
            .iter()
            .map(|stage| stage["stage"].as_str().unwrap().to_owned())
            .collect()
    };
    let reading = ["read: text checked", "read: request fields", "read: objects"];

    let judged = &lines[0];
    assert_eq!(judged["lane"], "inline", "{judged}");
    let stages = names(judged);
    let before: Vec<&str> = reading
        .iter()
        .copied()
        .chain(["self-protection", "plan", "finish the request"])
        .collect();
    assert_eq!(stages[..before.len()], before, "{stages:?}");
    assert_eq!(
        stages[stages.len() - 3..],
        ["evaluation end", "answer", "metrics"]
    );
    // Between them, each candidate policy; the first to read `impact` has the estimate inside it.
    let policies = &stages[before.len()..stages.len() - 3];
    let estimate = policies
        .iter()
        .position(|s| s == "policy, before impact")
        .unwrap_or_else(|| panic!("no estimate in {stages:?}"));
    // The pack selects fields of `impact`, each converted as it is read (within its policy's
    // step): no policy reads it whole, which would add "impact as CEL".
    assert_eq!(policies[estimate + 1], "impact estimate");
    assert!(
        policies
            .iter()
            .enumerate()
            .all(|(i, s)| (estimate..estimate + 2).contains(&i) || s == "policy"),
        "{stages:?}"
    );
    // The times are the request's own: they add up to what it took, the bookkeeping after the
    // answer aside.
    let micros: Vec<f64> = judged["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|stage| stage["us"].as_f64().unwrap())
        .collect();
    assert!(micros.iter().all(|us| *us >= 0.0));
    let answered: f64 = micros[..micros.len() - 1].iter().sum();
    let latency = judged["latencyUs"].as_f64().unwrap();
    assert!(
        answered > 0.0 && answered <= latency + 1.0,
        "{answered} µs of {latency}"
    );

    // Answered from its own fields, without evaluation.
    let unjudged = &lines[1];
    let expected: Vec<&str> = reading
        .iter()
        .copied()
        .chain(["self-protection", "plan", "answer", "metrics"])
        .collect();
    assert_eq!(names(unjudged), expected, "{unjudged}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_and_http1_clients_are_both_served() {
    let gateway = gateway(&[]).await;
    let body = std::fs::read(repo("testdata/reviews/namespace-delete-operator.json")).unwrap();
    let response = gateway
        .client
        .post(gateway.url("/validate"))
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    let http1 = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(gateway.ca_pem.as_bytes()).unwrap())
        .http1_only()
        .build()
        .unwrap();
    let response = http1
        .post(gateway.url("/validate"))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_11);
    let answer: Value = response.json().await.unwrap();
    assert_eq!(answer["response"]["allowed"], false);
}
