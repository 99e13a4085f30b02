//! Live cluster mode (`check`, `impact`, `test --live`, `snapshot`) against a mock kube API
//! server on loopback (`mock_api`) serving testdata/clusters/platform: kubeconfig resolution,
//! the context's namespace, reading only what the request reaches, paging, metadata-only
//! custom resources, errors. No real cluster is involved.

use std::path::{Path, PathBuf};

use crate::common::{json, root, stderr, stdout, suture};
use crate::mock_api::MockApi;

const ZK_OPERATOR: &str = "system:serviceaccount:coordination:zk-operator";

fn platform() -> PathBuf {
    root().join("testdata/clusters/platform/snapshot.yaml")
}

fn extras() -> PathBuf {
    root().join("cmd/tests/fixtures/live/extras.yaml")
}

/// A mock API over the platform scene and a kubeconfig for it (context namespace `ns`).
fn cluster(ns: &str) -> (MockApi, tempfile::TempDir, PathBuf) {
    let api = MockApi::serve(&[platform().as_path(), extras().as_path()]);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.kubeconfig(dir.path(), ns);
    (api, dir, kubeconfig)
}

fn run(args: &[&str]) -> std::process::Output {
    suture().args(args).output().unwrap()
}

fn arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `kubectl suture test SUITE --live --kubeconfig KUBECONFIG -o json`.
fn live_test_json(suite: &Path, kubeconfig: &Path) -> std::process::Output {
    run(&[
        "test",
        arg(suite),
        "--live",
        "--kubeconfig",
        arg(kubeconfig),
        "-o",
        "json",
    ])
}

#[test]
fn a_live_check_judges_as_the_snapshot_does_reading_only_the_request_namespace() {
    let (api, _dir, kubeconfig) = cluster("default");
    let what_if = [
        "check",
        "scale",
        "sts/zk",
        "--replicas",
        "2",
        "-n",
        "coordination",
        "--as",
        ZK_OPERATOR,
        "-o",
        "json",
    ];
    let live = run(&[&what_if[..], &["--kubeconfig", arg(&kubeconfig)]].concat());
    assert_eq!(live.status.code(), Some(1), "{}", stderr(&live));
    let offline = run(&[&what_if[..], &["--cluster", arg(&platform())]].concat());
    assert_eq!(json(&live), json(&offline));
    assert!(stdout(&live).contains("suture-statefulset-quorum"));

    let requests = api.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    for cluster_scoped in ["/api/v1/namespaces", "/api/v1/nodes", "/api/v1/persistentvolumes"] {
        assert!(
            paths.contains(&cluster_scoped),
            "{cluster_scoped} not read: {paths:?}"
        );
    }
    assert!(
        paths.contains(&"/api/v1/namespaces/coordination/pods"),
        "{paths:?}"
    );
    assert!(
        paths.contains(&"/apis/apps/v1/namespaces/coordination/statefulsets"),
        "{paths:?}"
    );
    assert!(
        paths
            .iter()
            .all(|p| !p.contains("/namespaces/payments/") && *p != "/api/v1/pods"),
        "read beyond the request's namespace: {paths:?}"
    );
    assert!(
        requests.iter().any(|r| r.query.contains("continue=")),
        "lists were not paged: {requests:?}"
    );
}

#[test]
fn a_live_collection_judges_as_the_snapshot_does_reading_only_its_namespace() {
    let (api, _dir, kubeconfig) = cluster("coordination");
    let what_if = [
        "check",
        "delete",
        "pods",
        "-l",
        "app.kubernetes.io/name=zookeeper",
        "--as",
        ZK_OPERATOR,
        "-o",
        "json",
    ];
    let live = run(&[&what_if[..], &["--kubeconfig", arg(&kubeconfig)]].concat());
    assert_eq!(live.status.code(), Some(1), "{}", stderr(&live));
    let offline = run(&[
        &what_if[..],
        &["-n", "coordination", "--cluster", arg(&platform())],
    ]
    .concat());
    assert_eq!(json(&live), json(&offline));
    assert_eq!(json(&live)["objects"], 5, "the context's namespace, zk-0 to zk-4");
    let requests = api.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert!(
        paths.contains(&"/api/v1/namespaces/coordination/pods"),
        "{paths:?}"
    );
    assert!(
        paths
            .iter()
            .all(|p| !p.contains("/namespaces/payments/") && *p != "/api/v1/pods"),
        "read beyond the collection's namespace: {paths:?}"
    );
}

#[test]
fn several_live_names_judge_as_the_snapshot_does_reading_only_their_namespaces() {
    let (api, _dir, kubeconfig) = cluster("coordination");
    let what_if = [
        "check",
        "delete",
        "pod",
        "zk-0",
        "zk-1",
        "zk-2",
        "--as",
        ZK_OPERATOR,
        "-o",
        "json",
    ];
    let live = run(&[&what_if[..], &["--kubeconfig", arg(&kubeconfig)]].concat());
    assert_eq!(live.status.code(), Some(1), "{}", stderr(&live));
    let offline = run(&[
        &what_if[..],
        &["-n", "coordination", "--cluster", arg(&platform())],
    ]
    .concat());
    assert_eq!(json(&live), json(&offline));
    let names: Vec<String> = json(&live)["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["zk-0", "zk-1", "zk-2"], "one request per name, in order");
    let requests = api.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    assert!(
        paths.contains(&"/api/v1/namespaces/coordination/pods"),
        "{paths:?}"
    );
    assert!(
        paths
            .iter()
            .all(|p| !p.contains("/namespaces/payments/") && *p != "/api/v1/pods"),
        "read beyond the objects' namespace: {paths:?}"
    );
}

#[test]
fn live_manifests_judge_as_the_snapshot_does_reading_only_their_namespaces() {
    let (api, dir, kubeconfig) = cluster("coordination");
    let release = dir.path().join("release.yaml");
    std::fs::write(
        &release,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: payments}\ndata: {k: v}\n---\n\
         apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: zk, namespace: coordination}\n\
         spec: {replicas: 1, selector: {matchLabels: {app.kubernetes.io/name: zookeeper}}}\n",
    )
    .unwrap();
    let what_if = ["check", "-f", arg(&release), "--as", ZK_OPERATOR, "-o", "json"];
    let live = run(&[&what_if[..], &["--kubeconfig", arg(&kubeconfig)]].concat());
    assert_eq!(live.status.code(), Some(1), "{}", stderr(&live));
    let offline = run(&[&what_if[..], &["--cluster", arg(&platform())]].concat());
    let (mut live, mut offline) = (json(&live), json(&offline));
    // The file is named the same; the verdicts and figures are the same.
    live["file"] = serde_json::Value::Null;
    offline["file"] = serde_json::Value::Null;
    assert_eq!(live, offline);
    assert_eq!(
        (live["objects"].as_u64(), live["denied"].as_u64()),
        (Some(2), Some(1))
    );
    let requests = api.requests();
    let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
    for namespace in ["payments", "coordination"] {
        let pods = format!("/api/v1/namespaces/{namespace}/pods");
        assert!(paths.contains(&pods.as_str()), "{namespace} not read: {paths:?}");
    }
    assert!(
        paths
            .iter()
            .all(|p| !p.contains("/namespaces/storage/") && *p != "/api/v1/pods"),
        "read beyond the manifests' namespaces: {paths:?}"
    );
}

#[test]
fn without_n_the_context_namespace_is_used() {
    let (_api, _dir, kubeconfig) = cluster("coordination");
    let out = run(&[
        "check",
        "scale",
        "sts/zk",
        "--replicas",
        "2",
        "--as",
        ZK_OPERATOR,
        "--kubeconfig",
        arg(&kubeconfig),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("coordination/zk"), "{}", stdout(&out));
    let other = run(&[
        "check",
        "scale",
        "sts/zk",
        "--replicas",
        "2",
        "--kubeconfig",
        arg(&kubeconfig),
        "--context",
        "other",
    ]);
    assert_eq!(other.status.code(), Some(2));
    assert!(stderr(&other).contains("other/zk"), "{}", stderr(&other));
}

#[test]
fn a_manifest_is_judged_in_its_own_namespace_not_the_contexts() {
    let (_api, _dir, kubeconfig) = cluster("default");
    let manifest = root().join("cmd/tests/fixtures/live/zk-two-replicas.yaml");
    let what_if = ["check", "-f", arg(&manifest), "--as", ZK_OPERATOR, "-o", "json"];
    let live = run(&[&what_if[..], &["--kubeconfig", arg(&kubeconfig)]].concat());
    assert_eq!(live.status.code(), Some(1), "{}{}", stdout(&live), stderr(&live));
    let offline = run(&[&what_if[..], &["--cluster", arg(&platform())]].concat());
    assert_eq!(json(&live), json(&offline));
    assert!(stdout(&live).contains("coordination/zk"), "{}", stdout(&live));
}

#[test]
fn a_namespace_delete_reads_that_namespace_and_its_custom_resources() {
    let (api, _dir, kubeconfig) = cluster("default");
    let what_if = ["impact", "delete", "namespace/payments", "-o", "json"];
    let live = run(&[&what_if[..], &["--kubeconfig", arg(&kubeconfig)]].concat());
    assert_eq!(live.status.code(), Some(0), "{}", stderr(&live));
    let offline = run(&[&what_if[..], &["--cluster", arg(&platform())]].concat());
    // The same estimate; lists arrive in another order than the snapshot file's.
    let (live, offline) = (json(&live), json(&offline));
    assert_eq!(live["summary"], offline["summary"]);
    assert_eq!(sorted(&live["deleted"]), sorted(&offline["deleted"]));
    assert_eq!(sorted(&live["pods"]), sorted(&offline["pods"]));
    let requests = api.requests();
    let instances: Vec<_> = requests.iter().filter(|r| r.metadata_only).collect();
    assert!(
        instances
            .iter()
            .any(|r| r.path == "/apis/cert-manager.io/v1/namespaces/payments/certificates"),
        "{requests:?}"
    );
    assert!(
        requests
            .iter()
            .all(|r| !r.path.contains("/namespaces/coordination/"))
    );
}

fn sorted(list: &serde_json::Value) -> Vec<String> {
    let mut items: Vec<String> = list.as_array().unwrap().iter().map(|v| v.to_string()).collect();
    items.sort();
    items
}

#[test]
fn all_namespaces_reads_everything() {
    let (api, _dir, kubeconfig) = cluster("default");
    let out = run(&[
        "impact",
        "delete",
        "pod/nothing",
        "-A",
        "--kubeconfig",
        arg(&kubeconfig),
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let paths: Vec<String> = api.requests().into_iter().map(|r| r.path).collect();
    assert!(paths.contains(&"/api/v1/pods".to_owned()), "{paths:?}");
    assert!(
        paths.contains(&"/apis/apps/v1/statefulsets".to_owned()),
        "{paths:?}"
    );
}

#[test]
fn a_forbidden_list_names_the_resource_and_exits_2() {
    let (api, _dir, kubeconfig) = cluster("default");
    api.forbid("secrets");
    let out = run(&[
        "check",
        "delete",
        "sts/zk",
        "-n",
        "coordination",
        "--kubeconfig",
        arg(&kubeconfig),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("cannot list secrets in namespace coordination"),
        "{err}"
    );
    assert!(err.contains("forbidden"), "{err}");
}

#[test]
fn an_unreachable_cluster_or_a_bad_kubeconfig_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let api = MockApi::serve(&[]);
        let path = api.kubeconfig(dir.path(), "default");
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace(&api_address(&path), &listener.local_addr().unwrap().to_string());
        drop(listener);
        std::fs::write(&path, text).unwrap();
        path
    };
    let out = run(&[
        "impact",
        "delete",
        "pod/x",
        "--kubeconfig",
        arg(&kubeconfig),
        "--request-timeout",
        "2s",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot list namespaces"),
        "{}",
        stderr(&out)
    );

    let missing = dir.path().join("missing");
    let out = run(&["impact", "delete", "pod/x", "--kubeconfig", arg(&missing)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot read the kubeconfig"),
        "{}",
        stderr(&out)
    );
    let out = run(&["impact", "delete", "pod/x", "--request-timeout", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run(&[
        "check",
        "delete",
        "pod/x",
        "--cluster",
        "testdata/clusters/platform",
        "--context",
        "prod",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("give one or the other"), "{}", stderr(&out));
}

/// The `host:port` a kubeconfig written by the mock names.
fn api_address(kubeconfig: &Path) -> String {
    let text = std::fs::read_to_string(kubeconfig).unwrap();
    let start = text.find("http://").unwrap() + "http://".len();
    let end = start + text[start..].find('"').unwrap();
    text[start..end].to_owned()
}

#[test]
fn without_a_kubeconfig_the_cluster_is_empty() {
    let out = run(&["impact", "delete", "namespace/payments", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let impact = json(&out);
    assert_eq!(
        impact["summary"]["deleted"], 0,
        "an empty cluster has no payments namespace"
    );
}

#[test]
fn test_live_judges_suites_without_a_cluster_against_the_live_one() {
    let (_api, _dir, kubeconfig) = cluster("default");
    let suite = root().join("cmd/tests/fixtures/live/quorum.test.yaml");
    let live = run(&["test", arg(&suite), "--live", "--kubeconfig", arg(&kubeconfig)]);
    assert_eq!(live.status.code(), Some(0), "{}{}", stdout(&live), stderr(&live));
    let hermetic = run(&["test", arg(&suite)]);
    assert_eq!(hermetic.status.code(), Some(1), "{}", stdout(&hermetic));
}

#[test]
fn test_with_only_a_kubeconfig_runs_live() {
    let (api, _dir, kubeconfig) = cluster("default");
    let suite = root().join("cmd/tests/fixtures/live/quorum.test.yaml");
    let implied = run(&[
        "test",
        arg(&suite),
        "--kubeconfig",
        arg(&kubeconfig),
        "-o",
        "json",
    ]);
    assert_eq!(
        implied.status.code(),
        Some(0),
        "{}{}",
        stdout(&implied),
        stderr(&implied)
    );
    let paths: Vec<String> = api.requests().into_iter().map(|r| r.path).collect();
    assert!(
        paths.contains(&"/api/v1/pods".to_owned()),
        "the whole cluster is read: {paths:?}"
    );
    let live = live_test_json(&suite, &kubeconfig);
    assert_eq!(json(&implied), json(&live));
}

#[test]
fn a_suite_naming_its_own_cluster_is_unaffected_by_live() {
    let (api, _dir, kubeconfig) = cluster("default");
    // The live suite, judged against an empty cluster of its own: it fails there, where the live
    // cluster would make it pass.
    let text = std::fs::read_to_string(root().join("cmd/tests/fixtures/live/quorum.test.yaml")).unwrap();
    let own = text.replace(
        "policies: [builtin]\n",
        "policies: [builtin]\ncluster: [empty.yaml]\n",
    );
    assert_ne!(own, text);
    let dir = crate::common::temp_files(&[
        ("own.test.yaml", own.as_str()),
        ("empty.yaml", "apiVersion: v1\nkind: List\nitems: []\n"),
    ]);
    let suite = dir.path().join("own.test.yaml");
    let hermetic = run(&["test", arg(&suite), "-o", "json"]);
    assert_eq!(
        hermetic.status.code(),
        Some(1),
        "{}{}",
        stdout(&hermetic),
        stderr(&hermetic)
    );
    let live = live_test_json(&suite, &kubeconfig);
    assert_eq!(live.status.code(), Some(1), "{}{}", stdout(&live), stderr(&live));
    assert_eq!(json(&live), json(&hermetic));
    assert!(
        api.requests().is_empty(),
        "no selected case needs the live cluster, yet it was read: {:?}",
        api.requests()
    );
}

#[test]
fn a_snapshot_is_slim_complete_and_judges_as_the_cluster_does() {
    let (_api, dir, kubeconfig) = cluster("default");
    let out = run(&["snapshot", "--kubeconfig", arg(&kubeconfig)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let list: serde_json::Value = serde_yaml_ng::from_str(&text).unwrap();
    assert_eq!(list["kind"], "List");
    let items = list["items"].as_array().unwrap();
    let secret = items
        .iter()
        .find(|i| i["kind"] == "Secret" && i["metadata"]["name"] == "zk-client-tls")
        .unwrap();
    assert_eq!(secret["data"], serde_json::json!({"tls.crt": "", "tls.key": ""}));
    assert!(
        !text.contains("managedFields") && !text.contains("c2VjcmV0LWtleQ"),
        "values kept"
    );
    let summary = stderr(&out);
    assert!(
        summary.starts_with(&format!("snapshot: {} objects from ", items.len())),
        "{summary}"
    );
    assert!(summary.contains("Pod "), "{summary}");

    let file = dir.path().join("snapshot.yaml");
    std::fs::write(&file, &text).unwrap();
    let what_if = [
        "check",
        "delete",
        "node/pool-3",
        "--as",
        "system:serviceaccount:infra:node-recycler",
        "-o",
        "json",
    ];
    let from_snapshot = run(&[&what_if[..], &["--cluster", arg(&file)]].concat());
    let from_platform = run(&[&what_if[..], &["--cluster", arg(&platform())]].concat());
    assert_eq!(from_snapshot.status.code(), Some(1), "{}", stderr(&from_snapshot));
    assert_eq!(json(&from_snapshot), json(&from_platform));
}

#[test]
fn a_namespaced_snapshot_keeps_those_namespaces_and_the_cluster_scoped_kinds() {
    let (_api, _dir, kubeconfig) = cluster("default");
    let out = run(&[
        "snapshot",
        "-n",
        "coordination",
        "-o",
        "json",
        "--kubeconfig",
        arg(&kubeconfig),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list = json(&out);
    let items = list["items"].as_array().unwrap();
    assert!(items.iter().any(|i| i["kind"] == "Node"));
    assert!(items.iter().any(|i| i["kind"] == "Pod"));
    assert!(
        items
            .iter()
            .filter_map(|i| i["metadata"]["namespace"].as_str())
            .all(|ns| ns == "coordination"),
        "other namespaces written"
    );
    assert!(stderr(&out).contains("from 1 namespace "), "{}", stderr(&out));

    let full = run(&[
        "snapshot",
        "-n",
        "coordination",
        "--full",
        "--kubeconfig",
        arg(&kubeconfig),
    ]);
    assert!(stdout(&full).contains("c2VjcmV0LWtleQ"), "--full keeps values");
    let both = run(&["snapshot", "-n", "a", "-A", "--kubeconfig", arg(&kubeconfig)]);
    assert_eq!(both.status.code(), Some(2));
}
