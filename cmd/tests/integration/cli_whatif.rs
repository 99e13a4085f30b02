//! What-if requests for `check` and `impact`: an action on a named object (`delete`, `scale`,
//! `evict`), a collection (`delete TYPE -l SELECTOR`), or a plain manifest, built as
//! kube-apiserver would send it, with the object before the change from the cluster snapshot and
//! the user from `--as`.

use crate::common;

use common::{json, stderr, stdout, suture, temp_files};

const PLATFORM: &str = "testdata/clusters/platform";
const DATABASE: &str = "testdata/clusters/database";
const WEB: &str = "testdata/clusters/web";
const OPERATOR: &str = "system:serviceaccount:coordination:zk-operator";
const PG_OPERATOR: &str = "system:serviceaccount:databases:pg-operator";

fn run(args: &[&str]) -> std::process::Output {
    suture().args(args).output().unwrap()
}

#[test]
fn deleting_a_named_statefulset_is_judged_as_its_operator() {
    let out = run(&[
        "check",
        "delete",
        "sts/zk",
        "-n",
        "coordination",
        "--cluster",
        PLATFORM,
        "--as",
        OPERATOR,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["impact"]["activity"], "deleting StatefulSet coordination/zk");
    assert_eq!(doc["impact"]["summary"]["podsDisrupted"], 5);
    let policies: Vec<&str> = doc["denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["policy"].as_str().unwrap())
        .collect();
    assert!(policies.contains(&"suture-statefulset-quorum"), "{policies:?}");
}

#[test]
fn the_user_and_namespace_follow_kubectl_flags() {
    let out = run(&[
        "check",
        "delete",
        "statefulset/zk",
        "--namespace",
        "coordination",
        "--cluster",
        PLATFORM,
        "--as",
        "alice@example.com",
        "--as-group",
        "platform-admins",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "people are not judged by the pack: {}",
        stdout(&out)
    );
    assert!(
        stdout(&out).starts_with("ALLOWED  DELETE statefulsets.apps coordination/zk by alice@example.com\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn scale_reads_the_current_replicas_from_the_snapshot() {
    let out = run(&[
        "impact",
        "scale",
        "deployment/api",
        "--replicas",
        "0",
        "-n",
        "payments",
        "--cluster",
        PLATFORM,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let impact = json(&out);
    assert_eq!(impact["action"], "update scale of Deployment payments/api");
    assert_eq!(impact["summary"]["podsDisrupted"], 4);
    assert_eq!(impact["summary"]["workloadsDown"], 1);

    let out = run(&[
        "check",
        "scale",
        "deployment/api",
        "-n",
        "payments",
        "--cluster",
        PLATFORM,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("scale needs --replicas N"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn evicting_a_pod_within_its_budget_is_allowed() {
    let out = run(&[
        "check",
        "evict",
        "pod/api-6b7d9f4c8d-ax4k2p",
        "-n",
        "payments",
        "--cluster",
        PLATFORM,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).starts_with("ALLOWED  CREATE pods/eviction payments/api-6b7d9f4c8d-ax4k2p"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_manifest_of_an_existing_object_is_an_update_and_a_new_one_a_create() {
    let dir = temp_files(&[(
        "ledger.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ledger, namespace: payments}\nspec:\n  replicas: 2\n  strategy: {type: Recreate}\n  selector: {matchLabels: {app.kubernetes.io/name: ledger, app.kubernetes.io/part-of: payments}}\n  template:\n    metadata: {labels: {app.kubernetes.io/name: ledger, app.kubernetes.io/part-of: payments}}\n    spec: {containers: [{name: main, image: registry.example.com/payments/ledger:1.10.0}]}\n",
    )]);
    let manifest = dir.path().join("ledger.yaml");
    let out = run(&[
        "check",
        "-f",
        manifest.to_str().unwrap(),
        "--cluster",
        PLATFORM,
        "--as",
        "system:serviceaccount:payments:payments-operator",
        "-o",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a Recreate rollout of the ledger: {}",
        stdout(&out)
    );
    let doc = json(&out);
    assert_eq!(doc["impact"]["activity"], "updating Deployment payments/ledger");
    assert_eq!(doc["denials"][0]["policy"], "suture-availability");

    let out = run(&[
        "check",
        "-f",
        "testdata/objects/deployment.yaml",
        "--cluster",
        PLATFORM,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("ALLOWED  CREATE deployments.apps shop/checkout"),
        "{}",
        stdout(&out)
    );

    let out = run(&[
        "check",
        "-f",
        manifest.to_str().unwrap(),
        "--operation",
        "DELETE",
        "--cluster",
        PLATFORM,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        json(&out)["impact"]["activity"],
        "deleting Deployment payments/ledger"
    );
}

/// The names, verdicts and denying policies of a collection document's items.
/// `(allowed, objects, denied)` of a sequence's `-o json` document.
fn tally(doc: &serde_json::Value) -> (bool, u64, u64) {
    let count = |field: &str| {
        doc[field]
            .as_u64()
            .unwrap_or_else(|| panic!("no {field} in {doc}"))
    };
    (
        doc["allowed"].as_bool().unwrap(),
        count("objects"),
        count("denied"),
    )
}

fn verdicts(doc: &serde_json::Value) -> Vec<(String, bool, Vec<String>)> {
    doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            let policies = item["denials"].as_array().unwrap().iter();
            (
                item["name"].as_str().unwrap().to_owned(),
                item["allowed"].as_bool().unwrap(),
                policies
                    .map(|d| d["policy"].as_str().unwrap().to_owned())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn a_collection_is_judged_one_delete_per_object_each_seeing_the_ones_before_it() {
    let out = run(&[
        "check",
        "delete",
        "pods",
        "-l",
        "app.kubernetes.io/name=postgresql",
        "-n",
        "databases",
        "--cluster",
        DATABASE,
        "--as",
        PG_OPERATOR,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(tally(&doc), (false, 3, 2));
    let verdicts = verdicts(&doc);
    // The budget (minAvailable 2 of 3) lets one pod go; the next two would break it once the
    // first is gone.
    assert_eq!(verdicts[0], ("pg-main-0".into(), true, vec![]));
    for (name, allowed, policies) in &verdicts[1..] {
        assert!(!allowed, "{name}");
        assert!(
            policies.contains(&"suture-disruption-budget".to_owned()),
            "{name}: {policies:?}"
        );
        assert!(
            policies.contains(&"suture-disruption-rate".to_owned()),
            "{name}: {policies:?}"
        );
    }
    // Its Service's endpoints follow: the second deletion starts from the first one's result.
    let services = |index: usize| doc["items"][index]["impact"]["services"][0].clone();
    assert_eq!(
        (
            services(0)["readyBefore"].as_u64(),
            services(0)["readyAfter"].as_u64()
        ),
        (Some(3), Some(2))
    );
    assert_eq!(
        (
            services(1)["readyBefore"].as_u64(),
            services(1)["readyAfter"].as_u64()
        ),
        (Some(2), Some(1))
    );
}

#[test]
fn a_collection_of_live_claims_is_refused_claim_by_claim() {
    let out = run(&[
        "check",
        "delete",
        "pvc",
        "--all",
        "-n",
        "databases",
        "--cluster",
        DATABASE,
        "--as",
        PG_OPERATOR,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    insta::assert_snapshot!("check_collection_claims_text", stdout(&out));
}

#[test]
fn a_collection_that_selects_nothing_is_allowed_and_says_so() {
    let out = run(&[
        "check",
        "delete",
        "configmaps",
        "-l",
        "app in (nothing-here)",
        "--field-selector",
        "metadata.name!=x",
        "-n",
        "databases",
        "--cluster",
        DATABASE,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "ALLOWED  DELETECOLLECTION configmaps in databases -l app in (nothing-here) --field-selector metadata.name!=x by system:serviceaccount:default:suture-what-if: no object matches, nothing would be deleted\n"
    );
}

#[test]
fn impact_estimates_each_deletion_of_a_collection_after_the_ones_before_it() {
    let out = run(&[
        "impact",
        "delete",
        "pods",
        "-l",
        "app.kubernetes.io/name=postgresql",
        "-n",
        "databases",
        "--cluster",
        DATABASE,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["objects"], 3);
    let budgets: Vec<(u64, u64)> = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            let pdb = &item["impact"]["pdbs"][0];
            (
                pdb["currentHealthy"].as_u64().unwrap(),
                pdb["healthyAfter"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        budgets,
        [(3, 2), (2, 1), (1, 0)],
        "each deletion starts where the one before it left the budget (no policy judges them: all happen)"
    );
    assert_eq!(doc["items"][0]["name"], "pg-main-0");
}

#[test]
fn collection_mistakes_exit_2_with_a_clear_message() {
    let review = "testdata/reviews/pod-delete-pg-main-0.json";
    let cases: [(&[&str], &str); 6] = [
        (
            &["check", "scale", "sts", "-l", "a=b"],
            "only `delete` takes a collection",
        ),
        (&["check", "delete", "pod/x", "--all"], "give the type alone"),
        (
            &["check", "delete", "pods", "--all", "-l", "a=b"],
            "--all and -l/--selector",
        ),
        (
            &[
                "check",
                "delete",
                "pods",
                "-l",
                "replicas>2",
                "--cluster",
                DATABASE,
            ],
            "label selector \"replicas>2\"",
        ),
        (&["check", "-f", review, "-l", "a=b"], "not a file given with -f"),
        (
            &["impact", "scale", "sts", "--all"],
            "only `delete` takes a collection",
        ),
    ];
    for (args, expected) in cases {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn cascade_sets_the_propagation_of_a_what_if_deletion_as_kubectl_does() {
    let judge = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "delete",
            "deploy/web",
            "-n",
            "shop",
            "--cluster",
            WEB,
            "-o",
            "json",
        ];
        args.extend_from_slice(extra);
        let out = run(&args);
        let doc = json(&out);
        (
            out.status.code(),
            doc["impact"]["summary"]["podsDisrupted"].clone(),
        )
    };
    // kubectl's default (and `--cascade` alone, and foreground): the ReplicaSet and its 4 pods go.
    for extra in [
        &[][..],
        &["--cascade"],
        &["--cascade=background"],
        &["--cascade=foreground"],
    ] {
        let (code, pods) = judge(extra);
        assert_eq!(code, Some(1), "{extra:?}");
        assert_eq!(pods, 4, "{extra:?}");
    }
    // Orphan (and kubectl's deprecated `false`): the pods keep running, nothing is disrupted.
    for extra in [&["--cascade=orphan"][..], &["--cascade=false"]] {
        let (code, pods) = judge(extra);
        assert_eq!(code, Some(0), "{extra:?}");
        assert_eq!(pods, 0, "{extra:?}");
    }
    // A collection's deletions carry it too.
    let out = run(&[
        "check",
        "delete",
        "deploy",
        "--all",
        "-n",
        "shop",
        "--cluster",
        WEB,
        "--cascade=orphan",
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(json(&out)["denied"], 0);
}

const RELEASE: &str = "testdata/releases/shop-web-4.0.yaml";
const WEB_OPERATOR: &str = "system:serviceaccount:shop:web-operator";

/// `(operation, kind, name, allowed, denying policies)` of each item of a manifests document.
fn requests(doc: &serde_json::Value) -> Vec<(String, String, String, bool, Vec<String>)> {
    let text = |v: &serde_json::Value| v.as_str().unwrap().to_owned();
    doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            let policies = item["denials"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| text(&d["policy"]))
                .collect();
            (
                text(&item["operation"]),
                text(&item["kind"]),
                text(&item["name"]),
                item["allowed"].as_bool().unwrap(),
                policies,
            )
        })
        .collect()
}

#[test]
fn a_file_of_manifests_is_judged_one_request_per_object_in_order() {
    let out = run(&[
        "check",
        "-f",
        RELEASE,
        "--cluster",
        WEB,
        "--as",
        WEB_OPERATOR,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(tally(&doc), (false, 4, 2));
    let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        requests(&doc),
        [
            (
                "UPDATE".into(),
                "ConfigMap".into(),
                "web-config".into(),
                true,
                vec![]
            ),
            (
                "UPDATE".into(),
                "Secret".into(),
                "web-db".into(),
                false,
                owned(&["suture-broken-references"])
            ),
            (
                "UPDATE".into(),
                "Deployment".into(),
                "web".into(),
                false,
                owned(&[
                    "suture-disruption-budget",
                    "suture-availability",
                    "suture-availability"
                ])
            ),
            ("UPDATE".into(), "Service".into(), "web".into(), true, vec![]),
        ]
    );
    // The text report: the file's line, then each request's own report.
    let out = run(&["check", "-f", RELEASE, "--cluster", WEB, "--as", WEB_OPERATOR]);
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!(
            "DENIED  {RELEASE}, one request per object in order, by {WEB_OPERATOR}: 2 of 4 requests denied\n"
        )),
        "{text}"
    );
    assert!(
        text.contains("── 3/4\nDENIED  UPDATE deployments.apps shop/web by"),
        "{text}"
    );
}

#[test]
fn a_manifest_starts_a_rollout_only_when_its_template_differs_from_the_running_one_defaults_aside() {
    // The chart form of the running template (no defaults, `cpu: 0.1` for `100m`) with the
    // strategy switched to Recreate: no rollout, nothing stops.
    const SAME: &str = "testdata/releases/shop-web-recreate-only.yaml";
    let out = run(&["check", "-f", SAME, "--cluster", WEB, "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(json(&out)["impact"]["summary"]["podsDisrupted"], 0);
    // The same with a new image: the Recreate rollout stops all 4 pods at once.
    let text = std::fs::read_to_string(common::root().join(SAME)).unwrap();
    let out = suture()
        .args(["check", "-f", "-", "--cluster", WEB, "-o", "json"])
        .write_stdin(text.replace("web:3.8.1", "web:3.9.0"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_eq!(json(&out)["impact"]["summary"]["podsDisrupted"], 4);
}

#[test]
fn manifests_are_deleted_in_order_with_operation_delete_and_read_from_stdin() {
    let release = std::fs::read_to_string(common::root().join(RELEASE)).unwrap();
    let out = suture()
        .args([
            "check",
            "-f",
            "-",
            "--operation",
            "DELETE",
            "--cluster",
            WEB,
            "-o",
            "json",
        ])
        .write_stdin(release)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["file"], "<stdin>");
    let operations: Vec<(String, String)> = requests(&doc)
        .into_iter()
        .map(|(op, kind, ..)| (op, kind))
        .collect();
    assert_eq!(
        operations,
        [
            ("DELETE", "ConfigMap"),
            ("DELETE", "Secret"),
            ("DELETE", "Deployment"),
            ("DELETE", "Service")
        ]
        .map(|(op, kind)| (op.to_owned(), kind.to_owned()))
    );
    // Deleting the Deployment takes its pods: the Service's endpoints go with them.
    assert_eq!(doc["items"][2]["impact"]["summary"]["podsDisrupted"], 4);
}

#[test]
fn a_kind_list_is_expanded_and_each_object_built_against_the_ones_before_it() {
    // The scene's own snapshot (a `kind: List`) re-applied as it is: every object is an UPDATE
    // that changes nothing, and nothing is refused.
    let out = run(&[
        "check",
        "-f",
        "testdata/clusters/web/snapshot.yaml",
        "--cluster",
        WEB,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let doc = json(&out);
    assert_eq!(doc["objects"], 14);
    assert!(requests(&doc).iter().all(|(op, ..)| op == "UPDATE"));
    // Against an empty cluster, a document creating a namespace and one updating it: CREATE,
    // then UPDATE of what the first created.
    let files = temp_files(&[(
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, labels: {tier: gold}}\n",
    )]);
    let path = files.path().join("ns.yaml");
    let out = run(&["impact", "-f", path.to_str().unwrap(), "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    let operations: Vec<&str> = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["operation"].as_str().unwrap())
        .collect();
    assert_eq!(operations, ["CREATE", "UPDATE"]);
}

#[test]
fn a_directory_is_read_file_by_file_in_name_order_like_kubectl() {
    let files = temp_files(&[
        (
            "b-deployment.yaml",
            &std::fs::read_to_string(common::root().join("testdata/releases/shop-web-recreate-only.yaml"))
                .unwrap(),
        ),
        (
            "a-config.json",
            r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra", "namespace": "shop"}}"#,
        ),
        ("notes.txt", "not a manifest"),
        (
            "nested/c.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nested, namespace: shop}\n",
        ),
    ]);
    let out = run(&[
        "check",
        "-f",
        files.path().to_str().unwrap(),
        "--cluster",
        WEB,
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let doc = json(&out);
    let names: Vec<(String, String)> = requests(&doc)
        .into_iter()
        .map(|(op, kind, name, ..)| (op, format!("{kind}/{name}")))
        .collect();
    assert_eq!(
        names,
        [("CREATE", "ConfigMap/extra"), ("UPDATE", "Deployment/web")]
            .map(|(op, what)| (op.to_owned(), what.to_owned()))
    );
    // A bad file is named with its document.
    let files = temp_files(&[
        ("a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"),
        ("b.yaml", "kind: Secret\n"),
    ]);
    let out = run(&["check", "-f", files.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("b.yaml document 1 (Secret): a manifest needs"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_file_of_manifests_with_a_bad_document_or_a_review_exits_2_naming_it() {
    let files = temp_files(&[
        (
            "bad.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: Secret\nmetadata: {name: b}\n",
        ),
        (
            "mixed.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: admission.k8s.io/v1\nkind: AdmissionReview\n",
        ),
        (
            "elsewhere.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: other}\n",
        ),
    ]);
    let cases = [
        (
            "elsewhere.yaml",
            "document 2 (ConfigMap b): the namespace from the provided object \"other\" does not match the namespace \"shop\" given with -n",
        ),
        (
            "bad.yaml",
            "document 2 (Secret b): a manifest needs apiVersion, kind and metadata.name",
        ),
        ("mixed.yaml", "document 2 is an AdmissionReview"),
    ];
    for (file, expected) in cases {
        let path = files.path().join(file);
        let out = run(&["check", "-f", path.to_str().unwrap(), "-n", "shop"]);
        assert_eq!(out.status.code(), Some(2), "{file}: {}", stdout(&out));
        assert!(stderr(&out).contains(expected), "{file}: {}", stderr(&out));
        assert!(stderr(&out).contains(file), "{file}: {}", stderr(&out));
    }
}

#[test]
fn force_and_grace_period_are_sent_as_kubectl_sends_them() {
    const PARTITION: &str = "testdata/clusters/partition";
    let judge = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "delete",
            "pod/etcd-2",
            "-n",
            "ledger",
            "--cluster",
            PARTITION,
            "-o",
            "json",
        ];
        args.extend_from_slice(extra);
        let out = run(&args);
        let doc = json(&out);
        (out.status.code(), doc["impact"]["unconfirmedDeletions"].clone())
    };
    // --force (with or without --grace-period=0): removed at once while worker-3 is unreachable.
    for extra in [&["--force"][..], &["--force", "--grace-period=0"]] {
        let (code, unconfirmed) = judge(extra);
        assert_eq!(code, Some(1), "{extra:?}");
        assert_eq!(unconfirmed[0]["pod"], "etcd-2", "{extra:?}");
        assert_eq!(unconfirmed[0]["node"], "worker-3", "{extra:?}");
    }
    // kubectl turns --grace-period=0 without --force into 1: a graceful deletion.
    for extra in [&["--grace-period=0"][..], &["--grace-period=30"], &[]] {
        let (code, unconfirmed) = judge(extra);
        assert_eq!(code, Some(0), "{extra:?}");
        assert_eq!(unconfirmed, serde_json::json!([]), "{extra:?}");
    }
}

#[test]
fn what_if_mistakes_exit_2_with_a_clear_message() {
    let cases: [(&[&str], &str); 9] = [
        (&["check"], "nothing to judge"),
        (
            &["check", "delete", "gadget/w", "--cluster", PLATFORM],
            "unknown resource type \"gadget\"",
        ),
        (
            &["check", "drain", "node/pool-1"],
            "unknown what-if action \"drain\"",
        ),
        (&["check", "delete", "statefulset"], "expected TYPE/NAME"),
        (
            &[
                "check",
                "-f",
                "testdata/reviews/pod-delete-pg-main-0.json",
                "--operation",
                "DELETE",
            ],
            "an AdmissionReview already says",
        ),
        (
            &[
                "check",
                "scale",
                "sts/zk",
                "--replicas",
                "1",
                "-n",
                "coordination",
                "--cluster",
                PLATFORM,
                "--cascade=orphan",
            ],
            "--cascade applies to deletions, not to a scale",
        ),
        (
            &[
                "check",
                "evict",
                "pod/zk-0",
                "-n",
                "coordination",
                "--cluster",
                PLATFORM,
                "--cascade",
            ],
            "--cascade applies to deletions, not to an eviction",
        ),
        (
            &["check", "delete", "sts/zk", "--cascade=sideways"],
            "invalid value 'sideways' for '--cascade",
        ),
        (
            &[
                "check",
                "scale",
                "sts/zk",
                "--replicas",
                "1",
                "-n",
                "coordination",
                "--cluster",
                PLATFORM,
                "--force",
            ],
            "--force applies to deletions, not to a scale",
        ),
    ];
    for (args, expected) in cases {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn a_node_manifest_dropping_a_label_a_daemonset_places_by_deletes_its_pod_there() {
    // The manifest's oldObject is the Node as the cluster has it, labels included: compared with
    // itself, the label change went unseen.
    let dir = temp_files(&[
        (
            "cluster.yaml",
            "apiVersion: v1\nkind: List\nitems:\n\
             - {apiVersion: v1, kind: Node, metadata: {name: n1, uid: node-1, labels: {kubernetes.io/hostname: n1, disk: ssd}}}\n\
             - apiVersion: apps/v1\n  kind: DaemonSet\n  metadata: {name: agent, namespace: ops, uid: ds-1}\n  spec:\n    \
             selector: {matchLabels: {app: agent}}\n    template:\n      metadata: {labels: {app: agent}}\n      \
             spec: {nodeSelector: {disk: ssd}, containers: [{name: a, image: agent:1}]}\n\
             - apiVersion: v1\n  kind: Pod\n  metadata:\n    name: agent-x\n    namespace: ops\n    uid: pod-1\n    \
             labels: {app: agent}\n    ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: ds-1, controller: true}]\n  \
             spec: {nodeName: n1, containers: [{name: a, image: agent:1}]}\n  \
             status: {phase: Running, conditions: [{type: Ready, status: \"True\"}]}\n",
        ),
        (
            "node.yaml",
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {kubernetes.io/hostname: n1}}\n",
        ),
    ]);
    let out = run(&[
        "impact",
        "-f",
        dir.path().join("node.yaml").to_str().unwrap(),
        "--cluster",
        dir.path().join("cluster.yaml").to_str().unwrap(),
        "-o",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["summary"]["deleted"], 1, "{doc:#}");
    assert_eq!(doc["deleted"][0]["name"], "agent-x");
    assert_eq!(doc["summary"]["workloadsDown"], 1);
}

#[test]
fn a_service_manifest_pointing_its_port_at_an_undeclared_name_leaves_it_without_endpoints() {
    // The manifest's oldObject is the Service as the cluster has it, ports included: compared
    // with itself, the new targetPort went unseen.
    let manifest = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\n\
                    spec: {selector: {app.kubernetes.io/name: web}, ports: [{name: http, port: 80, targetPort: web}]}\n";
    let out = suture()
        .args(["impact", "-f", "-", "--cluster", WEB, "-o", "json"])
        .write_stdin(manifest)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["summary"]["servicesWithoutEndpoints"], 1, "{doc:#}");
    assert_eq!(doc["services"][0]["unservedPorts"], serde_json::json!(["http"]));
}
