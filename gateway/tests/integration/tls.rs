//! TLS: certificates rotated on disk serve new connections while established keep-alive
//! connections keep working; client-certificate verification turns away clients without a
//! certificate from the configured CA; the `--noop` floor runs on the same `--self-signed` stack.

use crate::common;

use std::time::Duration;

use common::{Gateway, client, eventually, pod_review, post_with, write_atomically};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use suture_gateway::tls::SelfSigned;

fn leaf_der(pem: &str) -> Vec<u8> {
    CertificateDer::from_pem_slice(pem.as_bytes()).unwrap().to_vec()
}

async fn peer_leaf(client: &reqwest::Client, url: &str, uid: &str) -> Vec<u8> {
    let response = client
        .post(url)
        .body(pod_review(uid, "CREATE", "ns", "p"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let leaf = response
        .extensions()
        .get::<reqwest::tls::TlsInfo>()
        .and_then(|info| info.peer_certificate())
        .unwrap()
        .to_vec();
    let answer: serde_json::Value = response.json().await.unwrap();
    assert_eq!(answer["response"]["uid"], uid);
    leaf
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotated_certificates_serve_new_connections_without_dropping_old_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    let first = SelfSigned::generate(&["127.0.0.1".into()]).unwrap();
    std::fs::write(&cert, &first.cert_pem).unwrap();
    std::fs::write(&key, &first.key_pem).unwrap();
    let gateway = Gateway::start(&[
        "--no-builtin-pack",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ])
    .await;
    let url = gateway.url("/validate");
    // Trusts only the first CA: it can only keep working over its existing connection.
    let old_client = client(&[&first.ca_pem]);
    assert_eq!(
        peer_leaf(&old_client, &url, "old-1").await,
        leaf_der(&first.cert_pem)
    );

    let second = SelfSigned::generate(&["127.0.0.1".into()]).unwrap();
    // A key that does not match: refused, the first pair keeps serving.
    write_atomically(&cert, &second.cert_pem);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let fresh = client(&[&first.ca_pem]);
    assert_eq!(peer_leaf(&fresh, &url, "mid-1").await, leaf_der(&first.cert_pem));

    write_atomically(&key, &second.key_pem);
    let rotated = eventually(Duration::from_secs(5), || async {
        let fresh = client(&[&first.ca_pem, &second.ca_pem]);
        peer_leaf(&fresh, &url, "new-1").await == leaf_der(&second.cert_pem)
    })
    .await;
    assert!(rotated, "new connections never saw the new certificate");

    // The established connection was not dropped and still carries the first certificate.
    assert_eq!(
        peer_leaf(&old_client, &url, "old-2").await,
        leaf_der(&first.cert_pem)
    );
}

/// A CA and a client certificate it signs, as PEM (CA, identity = cert + key).
fn client_identity() -> (String, String) {
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "apiserver client CA");
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
    let mut leaf = CertificateParams::new(Vec::<String>::new()).unwrap();
    leaf.distinguished_name.push(DnType::CommonName, "kube-apiserver");
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let key = KeyPair::generate().unwrap();
    let cert = leaf.signed_by(&key, &ca).unwrap();
    (ca.pem(), format!("{}{}", cert.pem(), key.serialize_pem()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_certificates_are_required_when_a_client_ca_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, identity) = client_identity();
    let ca_file = dir.path().join("client-ca.pem");
    std::fs::write(&ca_file, &ca).unwrap();
    let gateway = Gateway::start(&["--no-builtin-pack", "--client-ca", ca_file.to_str().unwrap()]).await;

    let anonymous = gateway
        .client
        .post(gateway.url("/validate"))
        .body(pod_review("anon", "CREATE", "ns", "p"))
        .send()
        .await;
    assert!(anonymous.is_err(), "a client without a certificate was served");

    let (_, stranger) = client_identity();
    let stranger_client = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(gateway.ca_pem.as_bytes()).unwrap())
        .identity(reqwest::Identity::from_pem(stranger.as_bytes()).unwrap())
        .build()
        .unwrap();
    let stranger_answer = stranger_client
        .post(gateway.url("/validate"))
        .body(pod_review("stranger", "CREATE", "ns", "p"))
        .send()
        .await;
    assert!(
        stranger_answer.is_err(),
        "a certificate from another CA was accepted"
    );

    let apiserver = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(gateway.ca_pem.as_bytes()).unwrap())
        .identity(reqwest::Identity::from_pem(identity.as_bytes()).unwrap())
        .build()
        .unwrap();
    let (status, answer) = post_with(
        &apiserver,
        &gateway.url("/validate"),
        pod_review("api", "CREATE", "ns", "p"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(answer["response"]["uid"], "api");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_noop_floor_answers_every_review_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let ca_out = dir.path().join("ca.pem");
    let gateway = Gateway::start(&["--noop", "--ca-bundle-out", ca_out.to_str().unwrap()]).await;
    assert_eq!(std::fs::read_to_string(&ca_out).unwrap(), gateway.ca_pem);
    let review = std::fs::read(common::repo("testdata/reviews/namespace-delete-operator.json")).unwrap();
    let (status, answer) = gateway.post(review).await;
    assert_eq!(status, 200);
    assert_eq!(
        answer,
        serde_json::json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {"uid": "e1f8b3c6-7a2d-4e9b-8c5f-2d0a6b4e9c71", "allowed": true}
        })
    );
    let (status, _) = gateway.post("garbage").await;
    assert_eq!(status, 400);
    assert_eq!(gateway.readiness().await["ready"], true);
}
