//! The live cluster model against kube's mock API service (`tower_test` + `kube::Client::new`):
//! kube's real client and watchers, scripted list and watch answers — not a live cluster.
//! Each test runs the whole `suture_gateway::live::run` with every watched kind served (empty
//! lists by default) and scripts the kinds it is about.

use crate::live_support;

use std::time::Duration;

use kube::core::{ApiResource, DynamicObject};
use live_support::{Live, MockApi, WatchReply, event, eventually, gone, pod, stateful_set};
use policies_cel::cluster::{ClusterView, ObjectKey, Spec};
use serde_json::json;
use suture_gateway::live::watch::{self, Change, Sink, Watch};
use suture_gateway::model::LiveModel;

const PODS: &str = "/api/v1/pods";
const STATEFULSETS: &str = "/apis/apps/v1/statefulsets";
const CRONJOBS: &str = "/apis/batch/v1/cronjobs";
const SECRETS: &str = "/api/v1/secrets";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/example.com/v1/widgets";

fn replicas(live: &Live, name: &str) -> Option<i64> {
    let model = live.model.read();
    match &model
        .get(&ObjectKey::new("apps", "StatefulSet", "shop", name))?
        .spec
    {
        Spec::StatefulSet { replicas, .. } => Some(*replicas),
        _ => None,
    }
}

#[tokio::test]
async fn the_initial_lists_fill_the_model_and_readiness_waits_for_every_kind() {
    let (client, api) = MockApi::start();
    api.set_list(PODS, "10", vec![pod("a", "9"), pod("b", "10")]);
    api.set_list(STATEFULSETS, "11", vec![stateful_set("db", 3, "11")]);
    api.hold(CRONJOBS);
    let live = Live::start(client, false);

    eventually("the pods are listed", || live.names("", "Pod") == ["a", "b"]).await;
    eventually("the StatefulSet is listed", || replicas(&live, "db") == Some(3)).await;
    eventually("only the CronJobs are not synced", || {
        let states = live.model.watch_states();
        let unsynced: Vec<&String> = states.iter().filter(|(_, s)| !s.synced).map(|(n, _)| n).collect();
        unsynced == ["cronjobs.batch"]
    })
    .await;
    assert!(!live.model.is_ready(), "ready before the CronJobs' list is in");
    assert_eq!(live.model.age(), None, "never current before every list is in");

    api.release(CRONJOBS);
    eventually("ready", || live.model.is_ready()).await;
    assert!(live.model.age().unwrap() < Duration::from_secs(2));

    // The pods' list, then a watch from the list's resourceVersion, with bookmarks.
    eventually("the pods are watched", || api.counts_on(PODS) == (1, 1)).await;
    let requests = api.requests_on(PODS);
    assert!(
        requests[0].contains("limit=500") && !requests[0].contains("watch"),
        "{requests:?}"
    );
    let watch = &requests[1];
    for part in [
        "watch=true",
        "allowWatchBookmarks=true",
        "resourceVersion=10",
        "timeoutSeconds=45",
    ] {
        assert!(watch.contains(part), "{part} missing from {watch}");
    }
    // Cluster policies were not asked for.
    assert!(
        !api.requests()
            .iter()
            .any(|uri| uri.contains("suture.dev") || uri.contains("admissionregistration"))
    );
}

#[tokio::test]
async fn watch_events_update_the_model_and_an_ended_stream_resumes_without_a_relist() {
    let (client, api) = MockApi::start();
    api.set_list(PODS, "10", vec![pod("a", "9"), pod("b", "10")]);
    api.set_list(STATEFULSETS, "10", vec![stateful_set("db", 3, "10")]);
    let live = Live::start(client, false);
    eventually("ready", || live.model.is_ready()).await;

    api.reply_watch(
        PODS,
        WatchReply::Events(vec![
            event("DELETED", pod("a", "12")),
            event("ADDED", pod("c", "13")),
            live_support::bookmark("v1", "Pod", "15"),
        ]),
    );
    api.reply_watch(
        STATEFULSETS,
        WatchReply::Events(vec![event("MODIFIED", stateful_set("db", 5, "14"))]),
    );
    eventually("a deleted, c added", || live.names("", "Pod") == ["b", "c"]).await;
    eventually("db scaled to 5", || replicas(&live, "db") == Some(5)).await;

    // Both streams ended: each watch resumes from its last resourceVersion (the bookmark's for
    // the pods), without a new list and without counting an error.
    eventually("the pods' watch resumed", || api.counts_on(PODS) == (1, 2)).await;
    assert!(
        api.requests_on(PODS)[2].contains("resourceVersion=15"),
        "{:?}",
        api.requests_on(PODS)
    );
    eventually("the StatefulSets' watch resumed", || {
        api.counts_on(STATEFULSETS) == (1, 2)
    })
    .await;
    assert!(api.requests_on(STATEFULSETS)[2].contains("resourceVersion=14"));
    assert_eq!((live.model.watch_errors(), live.model.watch_restarts()), (0, 0));
    assert!(live.model.touch_if_current());
}

#[tokio::test]
async fn a_410_gone_relists_and_objects_deleted_meanwhile_disappear() {
    let (client, api) = MockApi::start();
    api.set_list(PODS, "10", vec![pod("a", "9"), pod("b", "10")]);
    let live = Live::start(client, false);
    eventually("ready", || live.model.is_ready()).await;
    eventually("the pods are watched", || api.counts_on(PODS) == (1, 1)).await;

    // While the watch was behind, a was deleted and c created; the API server says 410 Gone.
    api.set_list(PODS, "20", vec![pod("b", "10"), pod("c", "18")]);
    api.reply_watch(PODS, WatchReply::Events(vec![gone()]));
    eventually("the re-list converged", || live.names("", "Pod") == ["b", "c"]).await;
    eventually("watching from the new list", || api.counts_on(PODS) == (2, 2)).await;
    assert!(api.requests_on(PODS)[3].contains("resourceVersion=20"));

    let pods = &live.model.watch_states()["pods"];
    assert_eq!((pods.errors, pods.restarts()), (1, 1));
    assert!(pods.synced && !pods.failing && pods.last_error.is_none());
    assert!(live.model.touch_if_current());
}

#[tokio::test]
async fn a_failing_watch_makes_the_model_stale_until_the_relist_is_in() {
    let (client, api) = MockApi::start();
    api.set_list(PODS, "10", vec![pod("a", "9")]);
    let live = Live::start(client, false);
    eventually("ready", || live.model.is_ready()).await;
    eventually("the pods are watched", || api.counts_on(PODS) == (1, 1)).await;

    // The watch connection fails (HTTP 500) and the re-list is slow to come back.
    api.set_list(PODS, "30", vec![pod("z", "29")]);
    api.hold(PODS);
    api.reply_watch(PODS, WatchReply::Error(500));
    eventually("the pods' watch is failing", || {
        live.model.failing_watches() == ["pods"]
    })
    .await;
    let error = live.model.watch_states()["pods"].last_error.clone().unwrap();
    assert!(error.contains("500") || error.contains("Internal"), "{error}");
    eventually("the re-list was sent after the backoff", || {
        api.counts_on(PODS).0 == 2
    })
    .await;
    let before = live.model.age().unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let after = live.model.age().unwrap();
    assert!(
        after >= before + Duration::from_secs(1),
        "the age grows while failing: {before:?} → {after:?}"
    );
    assert!(live.model.is_ready(), "readiness is about the initial lists only");
    assert_eq!(
        live.names("", "Pod"),
        ["a"],
        "the last known objects keep serving meanwhile"
    );

    api.release(PODS);
    eventually("recovered", || {
        live.names("", "Pod") == ["z"] && live.model.failing_watches().is_empty()
    })
    .await;
    eventually("current again", || {
        live.model.age().unwrap() < Duration::from_secs(1)
    })
    .await;
}

#[tokio::test]
async fn secret_values_never_reach_the_model() {
    let (client, api) = MockApi::start();
    let secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db", "namespace": "shop", "uid": "uid-db", "resourceVersion": "5",
            "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:data": {"f:password": {}}}}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration":
                "{\"data\":{\"password\":\"czNjcjN0LXZhbHVl\"}}"}},
        "type": "Opaque",
        "data": {"password": "czNjcjN0LXZhbHVl", "username": "YWRtaW4="}});
    api.set_list(SECRETS, "5", vec![secret.clone()]);
    let live = Live::start(client, false);
    eventually("ready", || live.model.is_ready()).await;

    let mut updated = secret;
    updated["metadata"]["resourceVersion"] = json!("6");
    updated["stringData"] = json!({"token": "plain-s3cr3t"});
    api.reply_watch(SECRETS, WatchReply::Events(vec![event("MODIFIED", updated)]));
    eventually("the update arrived", || {
        let model = live.model.read();
        let object = model.get(&ObjectKey::new("", "Secret", "shop", "db")).unwrap();
        matches!(&object.spec, Spec::Secret { keys } if keys.len() == 3)
    })
    .await;
    let model = live.model.read();
    let object = model.get(&ObjectKey::new("", "Secret", "shop", "db")).unwrap();
    let Spec::Secret { keys } = &object.spec else {
        panic!("{:?}", object.spec)
    };
    let mut keys: Vec<&str> = keys.iter().map(|k| &**k).collect();
    keys.sort();
    assert_eq!(keys, ["password", "token", "username"]);
    let everything = format!("{object:?} {}", policies_cel::cluster::json::to_json(object));
    for secret in [
        "czNjcjN0LXZhbHVl",
        "s3cr3t-value",
        "YWRtaW4=",
        "plain-s3cr3t",
        "last-applied",
        "managedFields",
        "kubectl",
    ] {
        assert!(
            !everything.contains(secret),
            "{secret} reached the model: {everything}"
        );
    }
}

/// Records what a watch hands its sink.
struct Recorder(std::sync::Arc<std::sync::Mutex<Vec<Change>>>);

impl Sink for Recorder {
    fn change(&mut self, change: Change) {
        self.0.lock().unwrap().push(change);
    }
}

#[tokio::test]
async fn secrets_are_stripped_before_anything_reads_them() {
    let (client, api) = MockApi::start();
    api.set_list(SECRETS, "5", vec![json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db", "namespace": "shop", "resourceVersion": "5",
            "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{\"data\":{\"password\":\"czNjcjN0\"}}",
                "team": "db"}},
        "data": {"password": "czNjcjN0"}, "stringData": {"token": "plain"}})]);
    let model = std::sync::Arc::new(LiveModel::new());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let resource = ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&());
    let watch = Watch::<DynamicObject>::all(client, "secrets".into(), resource, 45);
    let task = tokio::spawn(watch::run(watch, model.clone(), Recorder(seen.clone())));
    eventually("the list was handed over", || {
        seen.lock().unwrap().contains(&Change::ListDone)
    })
    .await;
    task.abort();
    let seen = seen.lock().unwrap();
    let Change::Listed(secret) = &seen[1] else {
        panic!("{seen:?}")
    };
    assert_eq!(secret["data"], json!({"password": ""}));
    assert_eq!(secret["stringData"], json!({"token": ""}));
    assert_eq!(secret["metadata"]["annotations"], json!({"team": "db"}));
    assert!(secret["metadata"].get("managedFields").is_none());
    assert_eq!(
        (secret["apiVersion"].as_str(), secret["kind"].as_str()),
        (Some("v1"), Some("Secret"))
    );
}

#[tokio::test]
async fn custom_resources_are_watched_per_crd_and_leave_with_it() {
    let (client, api) = MockApi::start();
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com", "uid": "uid-crd", "resourceVersion": "5"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1beta1", "served": true, "storage": false},
                         {"name": "v1", "served": true, "storage": true}]}});
    let widget = |name: &str| {
        json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
        "metadata": {"name": name, "namespace": "shop", "uid": format!("uid-{name}"), "resourceVersion": "7"}})
    };
    api.set_list(CRDS, "5", vec![crd.clone()]);
    api.set_list(WIDGETS, "7", vec![widget("w1"), widget("w2")]);
    api.hold(WIDGETS);
    let live = Live::start(client, false);

    eventually("the instances' list was asked for", || {
        api.counts_on(WIDGETS).0 == 1
    })
    .await;
    eventually("every built-in kind synced", || {
        live.model
            .watch_states()
            .iter()
            .filter(|(_, s)| !s.synced)
            .count()
            == 1
    })
    .await;
    assert!(
        !live.model.is_ready(),
        "readiness waits for the instances of the CRDs present at start"
    );
    api.release(WIDGETS);
    eventually("ready", || live.model.is_ready()).await;
    assert_eq!(live.names("example.com", "Widget"), ["w1", "w2"]);
    // Instances are watched through metadata-only requests, at the storage version.
    assert!(
        api.accepts_on(WIDGETS)[0].contains("as=PartialObjectMetadataList"),
        "{:?}",
        api.accepts_on(WIDGETS)
    );
    // A CRD delete would delete them: the estimate sees them as the CRD's instances.
    assert_eq!(live.model.read().of_kind("example.com", "Widget").len(), 2);

    let mut deleted = crd;
    deleted["metadata"]["resourceVersion"] = json!("9");
    api.reply_watch(CRDS, WatchReply::Events(vec![event("DELETED", deleted)]));
    eventually("the instances left with their CRD", || {
        live.names("example.com", "Widget").is_empty()
    })
    .await;
    eventually("the instance watch is gone", || {
        !live
            .model
            .watch_states()
            .contains_key("widgets.example.com (instances)")
    })
    .await;
    assert!(
        live.names("apiextensions.k8s.io", "CustomResourceDefinition")
            .is_empty()
    );
}

#[tokio::test]
async fn large_lists_are_read_in_pages_and_applied_at_once() {
    let (client, api) = MockApi::start();
    let pods: Vec<_> = (0..1200).map(|i| pod(&format!("p{i:04}"), "10")).collect();
    api.set_list(PODS, "10", pods);
    let live = Live::start(client, false);
    eventually("ready", || live.model.is_ready()).await;
    assert_eq!(live.names("", "Pod").len(), 1200);
    let lists: Vec<String> = api
        .requests_on(PODS)
        .into_iter()
        .filter(|u| !live_support::is_watch(u))
        .collect();
    assert_eq!(lists.len(), 3, "{lists:?}");
    assert!(
        lists[1].contains("continue=500") && lists[2].contains("continue=1000"),
        "{lists:?}"
    );
}

/// Not a test: how long the initial sync of `SUTURE_LIVE_PODS` pods (default 20,000) takes
/// through kube's client, watcher, stripping and projection, served by the in-process mock
/// (`cargo test --release -p suture-gateway --test integration live_model -- --ignored --nocapture`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement"]
async fn measure_initial_sync() {
    let count: usize = std::env::var("SUTURE_LIVE_PODS").map_or(20_000, |v| v.parse().unwrap());
    let (client, api) = MockApi::start();
    let pods: Vec<_> = (0..count).map(|i| pod(&format!("p{i:06}"), "10")).collect();
    api.set_list(PODS, "10", pods);
    let started = std::time::Instant::now();
    let live = Live::start(client, false);
    // A reader standing for the admission path: the longest wait for a read view.
    let reader = std::thread::spawn({
        let model = live.model.clone();
        move || {
            let mut longest = Duration::ZERO;
            while !model.is_ready() {
                let asked = std::time::Instant::now();
                drop(model.read());
                longest = longest.max(asked.elapsed());
                std::thread::sleep(Duration::from_micros(200));
            }
            longest
        }
    });
    while !live.model.is_ready() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let elapsed = started.elapsed();
    let longest_wait = reader.join().unwrap();
    println!("longest wait for a read view during the sync: {longest_wait:?}");
    assert_eq!(live.model.read().of_kind("", "Pod").len(), count);
    println!(
        "initial sync of {count} pods: {elapsed:?} ({:.0} pods/s)",
        count as f64 / elapsed.as_secs_f64()
    );

    // A re-list after 410 Gone in which 1% of the pods changed.
    let pods: Vec<_> = (0..count)
        .map(|i| pod(&format!("p{i:06}"), if i % 100 == 0 { "20" } else { "10" }))
        .map(|mut pod| {
            if pod["metadata"]["resourceVersion"] == "20" {
                pod["spec"]["nodeName"] = json!("node-2");
            }
            pod
        })
        .collect();
    api.set_list(PODS, "20", pods);
    let relisted = || live.model.read().pods_on_node("node-2").len() == count.div_ceil(100);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = std::thread::spawn({
        let (model, done) = (live.model.clone(), done.clone());
        move || {
            let mut longest = Duration::ZERO;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let asked = std::time::Instant::now();
                drop(model.read());
                longest = longest.max(asked.elapsed());
                std::thread::sleep(Duration::from_micros(200));
            }
            longest
        }
    });
    let started = std::time::Instant::now();
    api.reply_watch(PODS, WatchReply::Events(vec![gone()]));
    while !relisted() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let elapsed = started.elapsed();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let longest_wait = reader.join().unwrap();
    println!(
        "re-list of {count} pods (1% changed) after 410, backoff included: {elapsed:?}; longest wait for a read view: {longest_wait:?}"
    );

    // Watch events: 1,000 pods moved to another node (each replaced in the model), then the
    // same 1,000 with status-only changes (nothing the projection keeps: left in place).
    for label in ["replacing", "status-only"] {
        let events: Vec<_> = (0..1000)
            .map(|i| {
                let mut pod = pod(&format!("p{:06}", i * 7 + 1), "30");
                pod["spec"]["nodeName"] = json!("node-3");
                if label == "status-only" {
                    pod["status"]["containerStatuses"] = json!([{"name": "app", "restartCount": 1}]);
                }
                event("MODIFIED", pod)
            })
            .collect();
        let watches = api.counts_on(PODS).1;
        let started = std::time::Instant::now();
        api.reply_watch(PODS, WatchReply::Events(events));
        // Applied once the watch is re-opened after the stream's end.
        while api.counts_on(PODS).1 == watches {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(live.model.read().pods_on_node("node-3").len(), 1000);
        println!(
            "1,000 {label} pod events at {count} pods: {:?}",
            started.elapsed()
        );
    }
}
