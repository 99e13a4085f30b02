//! Clients that try to wear the gateway down: slow ones (headers that never end, bodies
//! trickled, handshakes never started), more connections than it keeps, bodies that fill its
//! buffer budget, and policies whose expressions exhaust the evaluation budget. Each time the
//! gateway keeps answering the others, and what the attackers held is given back.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Gateway, client, pod_review, post_with};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// A TLS connection to the gateway, handshake done, nothing sent.
async fn connect(gateway: &Gateway) -> TlsStream<TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(gateway.ca_pem.as_bytes()).unwrap())
        .unwrap();
    let config =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    let tcp = TcpStream::connect(gateway.running.webhook_addr).await.unwrap();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .unwrap()
}

/// Headers for a POST of `length` bytes, sent whole.
fn headers(length: usize) -> String {
    format!(
        "POST /validate HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n"
    )
}

/// Everything the server sends until it closes the connection (or `within` passes).
async fn read_answer(stream: &mut TlsStream<TcpStream>, within: Duration) -> String {
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(within, stream.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// Reads what the server answers on `stream` from a task: the answer and when it came.
fn await_answer(mut stream: TlsStream<TcpStream>) -> tokio::task::JoinHandle<(String, Instant)> {
    tokio::spawn(async move {
        let answer = read_answer(&mut stream, Duration::from_secs(30)).await;
        (answer, Instant::now())
    })
}

async fn metric(gateway: &Gateway, line_start: &str) -> Option<String> {
    let (_, metrics) = gateway.ops("/metrics").await;
    metrics
        .lines()
        .find(|line| line.starts_with(line_start))
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_hold_nothing_the_others_need() {
    let gateway = Gateway::start(&["--body-timeout", "3s"]).await;
    // Connections that never start their handshake, that never finish their headers, and that
    // trickle a body and stop.
    let slow_began = Instant::now();
    let mut silent = Vec::new();
    let mut unfinished = Vec::new();
    let mut trickling = Vec::new();
    for _ in 0..20 {
        silent.push(TcpStream::connect(gateway.running.webhook_addr).await.unwrap());
        let mut stream = connect(&gateway).await;
        stream
            .write_all(b"POST /validate HTTP/1.1\r\nhost: 127.0.0.1\r\n")
            .await
            .unwrap();
        unfinished.push(stream);
        let mut stream = connect(&gateway).await;
        stream.write_all(headers(4096).as_bytes()).await.unwrap();
        stream.write_all(b"{\"apiVersion\": \"admis").await.unwrap();
        stream.flush().await.unwrap();
        trickling.push(await_answer(stream));
    }

    // Meanwhile a review is judged as usual: it does not wait for the slow clients' deadline.
    let sent = Instant::now();
    let (status, answer) = gateway
        .post(pod_review("during", "DELETE", "db", "pg-main-0"))
        .await;
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "answered after {:?}",
        sent.elapsed()
    );
    assert_eq!(status, 200);
    assert_eq!(answer["response"]["uid"], "during");

    // A trickled body is cut off at --body-timeout with a well-formed 408.
    for reader in trickling {
        let (answer, cut_off) = reader.await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(
            answer.contains("the request body did not arrive within 3s (--body-timeout)"),
            "{answer}"
        );
        assert!(
            cut_off - slow_began >= Duration::from_secs(3),
            "cut off before its deadline"
        );
    }
    let invalid = metric(
        &gateway,
        "suture_gateway_request_duration_seconds_count{verdict=\"invalid\"}",
    )
    .await;
    assert_eq!(
        invalid.as_deref(),
        Some("suture_gateway_request_duration_seconds_count{verdict=\"invalid\"} 20")
    );
    drop((silent, unfinished));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_limit_wait_while_open_ones_are_served() {
    let gateway = Gateway::start(&["--max-connections", "4"]).await;
    // The API server's kept-alive connection, opened first.
    let (status, _) = gateway.post(pod_review("first", "CREATE", "db", "p")).await;
    assert_eq!(status, 200);
    // Three more fill the limit without ever starting their handshakes.
    let mut silent = Vec::new();
    for _ in 0..3 {
        silent.push(TcpStream::connect(gateway.running.webhook_addr).await.unwrap());
    }

    // A new client is not accepted while the limit is reached...
    let newcomer = client(&[&gateway.ca_pem]);
    let url = gateway.url("/validate");
    let waiting =
        tokio::spawn(
            async move { post_with(&newcomer, &url, pod_review("newcomer", "CREATE", "db", "p")).await },
        );
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(!waiting.is_finished(), "a fifth connection was served");
    // ...while the kept-alive connection is served as before.
    let (status, answer) = gateway.post(pod_review("kept", "CREATE", "db", "p")).await;
    assert_eq!((status, &answer["response"]["uid"]), (200, &json!("kept")));

    // A connection that goes makes room for the newcomer.
    drop(silent.pop());
    let (status, answer) = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("the newcomer was served once a connection closed")
        .unwrap();
    assert_eq!((status, &answer["response"]["uid"]), (200, &json!("newcomer")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_that_fill_the_buffer_budget_delay_others_no_longer_than_their_deadline() {
    let gateway = Gateway::start(&[
        "--max-body-bytes",
        "262144",
        "--max-buffered-bytes",
        "524288",
        "--body-timeout",
        "2s",
    ])
    .await;
    // Two clients each send all but the last byte of a maximum-size body: the budget is full
    // until their deadline, two seconds after they began.
    let began = Instant::now();
    let mut holders = Vec::new();
    for _ in 0..2 {
        let mut stream = connect(&gateway).await;
        stream.write_all(headers(262_144).as_bytes()).await.unwrap();
        stream.write_all(&vec![b' '; 262_143]).await.unwrap();
        stream.flush().await.unwrap();
        holders.push(await_answer(stream));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    // A review waits for room (the buffer does not grow past its budget)...
    let (client, url) = (gateway.client.clone(), gateway.url("/validate"));
    let waiting = tokio::spawn(async move {
        let answer = post_with(&client, &url, pod_review("squeezed", "CREATE", "db", "p")).await;
        (answer, Instant::now())
    });
    // ...until the holders are cut off at their deadline, which gives their room back.
    for reader in holders {
        let (answer, _) = reader.await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    }
    let ((status, answer), answered) = waiting.await.unwrap();
    assert_eq!((status, &answer["response"]["uid"]), (200, &json!("squeezed")));
    assert!(
        answered - began >= Duration::from_secs(2),
        "answered {:?} after the holders began: it did not wait for their room",
        answered - began
    );
}

/// Posts `review` from a task, waiting as long as the gateway's 30 s budget (requests queued on
/// the heavy lane of a debug build, beside other tests, take seconds each); the answer and when
/// it came.
fn spawn_post(
    gateway: &Gateway,
    review: &[u8],
) -> tokio::task::JoinHandle<((u16, serde_json::Value), Instant)> {
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(gateway.ca_pem.as_bytes()).unwrap())
        .timeout(Duration::from_secs(40))
        .build()
        .unwrap();
    let (url, review) = (gateway.url("/validate"), review.to_vec());
    tokio::spawn(async move { (post_with(&client, &url, review).await, Instant::now()) })
}

/// The exhausting policies' answer: denied by the cost budget, not by the request's deadline.
fn assert_stopped_by_the_cost_budget((status, answer): &(u16, serde_json::Value)) {
    assert_eq!(*status, 200);
    let response = &answer["response"];
    assert_eq!(response["allowed"], false, "{answer}");
    let message = response["status"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("SafetyPolicy 'exhausting-"), "{message}");
    assert!(
        message
            .ends_with("resulted in error: operation cancelled: actual cost limit exceeded (limit 10000000)"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expressions_that_exhaust_the_budget_are_stopped_and_kept_off_the_others_threads() {
    // Expressions built to exhaust the evaluation budget: nested comprehensions (time), and
    // lists of strings built from lists (memory).
    let file = common::repo("testdata/attack/exhausting-policies.yaml");
    let exhausting = std::fs::read(common::repo("testdata/attack/configmap-create-review.json")).unwrap();
    let quorum = std::fs::read(common::repo(
        "testdata/reviews/statefulset-update-scale-down.json",
    ))
    .unwrap();
    let gateway = Gateway::start(&["-f", file.to_str().unwrap(), "--eval-timeout", "30s"]).await;

    // The first such request runs to the budget, and marks its shape heavy.
    assert_stopped_by_the_cost_budget(&spawn_post(&gateway, &exhausting).await.unwrap().0);

    // A burst of them now waits on the heavy lane, while a StatefulSet scale-down that breaks a
    // quorum is judged by the pack on the main threads, before any of the burst is answered.
    let burst: Vec<_> = (0..2).map(|_| spawn_post(&gateway, &exhausting)).collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let ((status, answer), judged) = spawn_post(&gateway, &quorum).await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    assert_eq!(
        answer["response"]["status"]["code"], 403,
        "the pack's verdict, not a failure: {answer}"
    );
    for request in burst {
        let (answer, answered) = request.await.unwrap();
        assert_stopped_by_the_cost_budget(&answer);
        assert!(
            answered > judged,
            "an exhausting request was answered before the pack's"
        );
    }
    let (_, metrics) = gateway.ops("/metrics").await;
    assert!(
        metrics.contains("suture_gateway_evaluation_errors_total{kind=\"timeout\"} 0"),
        "the budget stopped the expressions before the request's deadline: {metrics}"
    );
}
