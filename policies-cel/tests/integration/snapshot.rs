//! Snapshot loading: the scenes in `testdata/clusters/` as `kubectl get -o yaml|json` prints them,
//! loaded into a `ClusterModel` — object counts, every index, Kubernetes' defaults, Secret values
//! dropped, unknown kinds kept with their owners — and bad input reported with file, line and
//! field. Also: memory per pod, and (ignored, run in release) the time to load 100k objects.

use std::path::{Path, PathBuf};
use std::time::Instant;

use policies_cel::cluster::object::{
    ConfigUse, DeploymentStrategy, Endpoint, IntOrPercent, Operator, PortTarget, Requirement, Retention,
    Selector, ServicePort, StatefulSetStrategy, Taint, Text, Toleration,
};
use policies_cel::cluster::{
    ClusterModel, ClusterView, Object, ObjectKey, Progress, SnapshotError, SnapshotLoader, Spec,
    load_snapshots, project,
};
use serde_json::{Value, json};

fn clusters(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/clusters")
        .join(name)
}

fn load(names: &[&str]) -> ClusterModel {
    let paths: Vec<PathBuf> = names.iter().map(|n| clusters(n)).collect();
    let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    load_snapshots(&paths, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"))
}

fn load_err(name: &str) -> SnapshotError {
    let path = clusters(name);
    load_snapshots(&[&path], &mut |_| {}).expect_err("the snapshot is broken")
}

fn counts(model: &ClusterModel) -> Vec<(String, usize)> {
    model.counts()
}

fn owned(items: &[(&str, usize)]) -> Vec<(String, usize)> {
    items.iter().map(|(k, n)| ((*k).to_owned(), *n)).collect()
}

/// `Kind name` of each object, sorted.
fn names(objects: Vec<&Object>) -> Vec<String> {
    let mut names: Vec<String> = objects
        .iter()
        .map(|o| format!("{} {}", o.key.kind, o.key.name))
        .collect();
    names.sort();
    names
}

fn get<'m>(model: &'m ClusterModel, group: &str, kind: &str, namespace: &str, name: &str) -> &'m Object {
    model
        .get(&ObjectKey::new(group, kind, namespace, name))
        .unwrap_or_else(|| panic!("{kind} {namespace}/{name} is not in the model"))
}

fn texts(items: &[&str]) -> Box<[Text]> {
    items.iter().map(|s| Text::from(*s)).collect()
}

fn labels(pairs: &[(&str, &str)]) -> std::sync::Arc<[(Text, Text)]> {
    pairs
        .iter()
        .map(|(k, v)| (Text::from(*k), Text::from(*v)))
        .collect()
}

fn default_tolerations() -> Box<[Toleration]> {
    ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"]
        .into_iter()
        .map(|key| Toleration {
            key: Some(key.into()),
            exists: true,
            value: None,
            effect: Some("NoExecute".into()),
        })
        .collect()
}

const PG_MAIN_UID: &str = "9d2e4b7a-61c3-4f0e-8a5d-2c7b9e1f4a36";

#[test]
fn database_scene() {
    let model = load(&["database"]);
    assert_eq!(
        counts(&model),
        owned(&[
            ("EndpointSlice.discovery.k8s.io", 2),
            ("Namespace", 1),
            ("PersistentVolume", 3),
            ("PersistentVolumeClaim", 3),
            ("Pod", 3),
            ("PodDisruptionBudget.policy", 1),
            ("Service", 2),
            ("StatefulSet.apps", 1),
        ])
    );
    let sts = get(&model, "apps", "StatefulSet", "databases", "pg-main");
    assert_eq!(sts.uid.as_deref(), Some(PG_MAIN_UID));
    let selector = Selector {
        match_labels: labels(&[("app.kubernetes.io/instance", "pg-main")]),
        expressions: vec![].into_boxed_slice(),
    };
    let expected = Spec::StatefulSet {
        replicas: 3,
        selector: selector.clone(),
        strategy: StatefulSetStrategy::RollingUpdate {
            partition: 0,
            max_unavailable: IntOrPercent::Int(1),
        },
        parallel: false,
        claim_templates: texts(&["data"]),
        retention: Retention {
            delete_when_deleted: false,
            delete_when_scaled: false,
        },
    };
    assert_eq!(sts.spec, expected);
    assert_eq!(
        names(model.dependents(PG_MAIN_UID)),
        ["Pod pg-main-0", "Pod pg-main-1", "Pod pg-main-2"]
    );
    assert_eq!(
        names(model.pods_matching("databases", &selector)),
        ["Pod pg-main-0", "Pod pg-main-1", "Pod pg-main-2"]
    );
    assert!(model.pods_matching("web", &selector).is_empty());

    let pod = get(&model, "", "Pod", "databases", "pg-main-1");
    assert!(
        pod.controller()
            .is_some_and(|o| &*o.uid == PG_MAIN_UID && &*o.kind == "StatefulSet")
    );
    let spec = pod.pod().unwrap();
    assert_eq!(
        (spec.node.as_deref(), spec.phase.as_str(), spec.ready),
        (Some("worker-a-2"), "Running", true)
    );
    assert_eq!(spec.claims, texts(&["data-pg-main-1"]));
    let root_ca = ConfigUse {
        name: "kube-root-ca.crt".into(),
        keys: Some(texts(&["ca.crt"])),
        required: true,
    };
    assert_eq!(&*spec.config_maps, [root_ca]);
    assert!(spec.secrets.is_empty());
    assert_eq!(spec.tolerations, default_tolerations());
    assert_eq!(names(model.pods_on_node("worker-b-1")), ["Pod pg-main-2"]);

    assert_eq!(
        names(model.pods_using_claim("databases", "data-pg-main-1")),
        ["Pod pg-main-1"]
    );
    let claim = get(&model, "", "PersistentVolumeClaim", "databases", "data-pg-main-1");
    let Spec::PersistentVolumeClaim {
        volume: Some(volume_name),
    } = &claim.spec
    else {
        panic!("{claim:?}")
    };
    let volume = model.volume_of_claim("databases", "data-pg-main-1").unwrap();
    assert_eq!(&volume.key.name, volume_name);
    assert_eq!(
        volume.spec,
        Spec::PersistentVolume {
            reclaim_delete: true,
            claim: Some(("databases".into(), "data-pg-main-1".into())),
            node: None,
        }
    );

    assert_eq!(
        names(model.selecting_pod("PodDisruptionBudget", pod)),
        ["PodDisruptionBudget pg-main"]
    );
    assert_eq!(
        names(model.selecting_pod("Service", pod)),
        ["Service pg-main", "Service pg-main-headless"]
    );
    let pdb = get(&model, "policy", "PodDisruptionBudget", "databases", "pg-main");
    assert_eq!(
        pdb.spec,
        Spec::PodDisruptionBudget {
            selector,
            min_available: Some(IntOrPercent::Int(2)),
            max_unavailable: None,
            always_allow_unhealthy: false,
        }
    );
    let slices = model.endpoint_slices("databases", "pg-main");
    assert_eq!(names(slices.clone()), ["EndpointSlice pg-main-m4v9z"]);
    let endpoints: Vec<Endpoint> = ["pg-main-0", "pg-main-1", "pg-main-2"]
        .iter()
        .map(|p| Endpoint {
            pod: Some((*p).into()),
            ready: true,
        })
        .collect();
    assert_eq!(
        slices[0].spec,
        Spec::EndpointSlice {
            service: Some("pg-main".into()),
            endpoints: endpoints.into()
        }
    );
    assert_eq!(
        names(model.endpoint_slices("databases", "pg-main-headless")),
        ["EndpointSlice pg-main-headless-7xk2q"]
    );
    let namespace = model.namespace("databases").unwrap();
    assert_eq!(
        namespace["metadata"]["labels"],
        json!({"kubernetes.io/metadata.name": "databases", "team": "data-platform"})
    );
}

#[test]
fn web_scene() {
    let model = load(&["web"]);
    assert_eq!(
        counts(&model),
        owned(&[
            ("ConfigMap", 1),
            ("Deployment.apps", 1),
            ("EndpointSlice.discovery.k8s.io", 1),
            ("Namespace", 1),
            ("Node", 2),
            ("Pod", 4),
            ("PodDisruptionBudget.policy", 1),
            ("ReplicaSet.apps", 1),
            ("Secret", 1),
            ("Service", 1),
        ])
    );
    let web = get(&model, "apps", "Deployment", "shop", "web");
    let selector = Selector {
        match_labels: labels(&[("app.kubernetes.io/name", "web")]),
        expressions: vec![].into_boxed_slice(),
    };
    let expected = Spec::Deployment {
        replicas: 4,
        selector: selector.clone(),
        strategy: DeploymentStrategy::RollingUpdate {
            max_unavailable: IntOrPercent::Percent(25),
            max_surge: IntOrPercent::Percent(25),
        },
        paused: false,
    };
    assert_eq!(web.spec, expected);
    let replica_sets = model.dependents(web.uid.as_deref().unwrap());
    assert_eq!(names(replica_sets.clone()), ["ReplicaSet web-7f9c6d5b8d"]);
    let rs = replica_sets[0];
    assert!(
        matches!(&rs.spec, Spec::ReplicaSet { replicas: 4, selector } if selector.match_labels.len() == 2)
    );
    let pods = names(model.dependents(rs.uid.as_deref().unwrap()));
    let all_pods = [
        "Pod web-7f9c6d5b8d-2xq8m",
        "Pod web-7f9c6d5b8d-8kz4t",
        "Pod web-7f9c6d5b8d-c7wvn",
        "Pod web-7f9c6d5b8d-hp5rd",
    ];
    assert_eq!(pods, all_pods);
    assert_eq!(names(model.pods_matching("shop", &selector)), all_pods);
    assert_eq!(names(model.pods_on_node("node-a")), all_pods[..2]);
    assert_eq!(names(model.pods_on_node("node-b")), all_pods[2..]);
    let ready: Vec<bool> = all_pods
        .iter()
        .map(|p| get(&model, "", "Pod", "shop", &p[4..]).pod().unwrap().ready)
        .collect();
    assert_eq!(ready, [true, true, true, false]);

    // The ConfigMap through a volume (one key), the Secret through an env key reference.
    assert_eq!(
        names(model.pods_reading("ConfigMap", "shop", "web-config")),
        all_pods
    );
    assert_eq!(names(model.pods_reading("Secret", "shop", "web-db")), all_pods);
    let pod = get(&model, "", "Pod", "shop", "web-7f9c6d5b8d-c7wvn")
        .pod()
        .unwrap();
    let web_config = ConfigUse {
        name: "web-config".into(),
        keys: Some(texts(&["default.conf"])),
        required: true,
    };
    let root_ca = ConfigUse {
        name: "kube-root-ca.crt".into(),
        keys: Some(texts(&["ca.crt"])),
        required: true,
    };
    assert_eq!(&*pod.config_maps, [root_ca, web_config]);
    assert_eq!(
        &*pod.secrets,
        [ConfigUse {
            name: "web-db".into(),
            keys: Some(texts(&["password"])),
            required: true
        }]
    );
    let dedicated = Toleration {
        key: Some("dedicated".into()),
        exists: false,
        value: Some("web".into()),
        effect: Some("NoSchedule".into()),
    };
    let taint = Taint {
        key: "dedicated".into(),
        value: Some("web".into()),
        effect: "NoSchedule".into(),
    };
    assert_eq!(pod.tolerations[0], dedicated);
    assert!(pod.tolerations[0].tolerates(&taint));
    assert_eq!(
        get(&model, "", "Node", "", "node-b").spec,
        Spec::Node {
            unschedulable: false,
            taints: vec![taint].into_boxed_slice()
        }
    );
    assert_eq!(
        get(&model, "", "Node", "", "node-a").spec,
        Spec::Node {
            unschedulable: false,
            taints: vec![].into_boxed_slice()
        }
    );

    assert_eq!(
        get(&model, "", "ConfigMap", "shop", "web-config").spec,
        Spec::ConfigMap {
            keys: texts(&["default.conf", "feature-flags.json"])
        }
    );
    let secret = get(&model, "", "Secret", "shop", "web-db");
    assert_eq!(
        secret.spec,
        Spec::Secret {
            keys: texts(&["password", "username"])
        }
    );
    let debug = format!("{model:?}");
    for value in ["czNjcjN0LXBhc3N3MHJk", "s3cr3t-passw0rd", "d2Vi"] {
        assert!(!debug.contains(value), "the Secret's value {value} is kept");
    }

    let pod_object = get(&model, "", "Pod", "shop", "web-7f9c6d5b8d-hp5rd");
    assert_eq!(names(model.selecting_pod("Service", pod_object)), ["Service web"]);
    assert_eq!(
        names(model.selecting_pod("PodDisruptionBudget", pod_object)),
        ["PodDisruptionBudget web"]
    );
    let pdb = get(&model, "policy", "PodDisruptionBudget", "shop", "web");
    assert_eq!(
        pdb.spec,
        Spec::PodDisruptionBudget {
            selector,
            min_available: None,
            max_unavailable: Some(IntOrPercent::Percent(25)),
            always_allow_unhealthy: false,
        }
    );
    let slice = model.endpoint_slices("shop", "web");
    let Spec::EndpointSlice { endpoints, .. } = &slice[0].spec else {
        panic!()
    };
    let ready: Vec<(Option<&str>, bool)> = endpoints.iter().map(|e| (e.pod.as_deref(), e.ready)).collect();
    assert_eq!(
        ready,
        [
            (Some("web-7f9c6d5b8d-2xq8m"), true),
            (Some("web-7f9c6d5b8d-8kz4t"), true),
            (Some("web-7f9c6d5b8d-c7wvn"), true),
            (Some("web-7f9c6d5b8d-hp5rd"), false),
        ]
    );
}

#[test]
fn operator_scene() {
    let model = load(&["operator"]);
    assert_eq!(
        counts(&model),
        owned(&[
            ("ConfigMap", 1),
            ("ControllerRevision.apps", 1),
            ("CustomResourceDefinition.apiextensions.k8s.io", 1),
            ("Namespace", 1),
            ("PersistentVolumeClaim", 3),
            ("Pod", 3),
            ("RabbitmqCluster.rabbitmq.com", 1),
            ("Secret", 1),
            ("Service", 2),
            ("StatefulSet.apps", 1),
        ])
    );
    let crd = get(
        &model,
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "",
        "rabbitmqclusters.rabbitmq.com",
    );
    let expected = Spec::CustomResourceDefinition {
        group: "rabbitmq.com".into(),
        kind: "RabbitmqCluster".into(),
        plural: "rabbitmqclusters".into(),
        namespaced: true,
    };
    assert_eq!(crd.spec, expected);
    let instances = model.of_kind("rabbitmq.com", "RabbitmqCluster");
    assert_eq!(names(instances.clone()), ["RabbitmqCluster rabbit"]);
    let rabbit = instances[0];
    // A custom object with a finalizer: its identity and finalizers are kept (an operator
    // acts on its deletion), nothing of its spec.
    let Spec::Kept(kept) = &rabbit.spec else {
        panic!("RabbitmqCluster rabbit is not kept: {:?}", rabbit.spec);
    };
    assert_eq!(
        kept["metadata"]["finalizers"][0],
        "deletion.finalizers.rabbitmqclusters.rabbitmq.com"
    );
    assert!(kept.get("spec").is_none());
    assert_eq!(&*rabbit.api_version, "rabbitmq.com/v1beta1");
    assert_eq!(
        rabbit.annotation("suture.dev/description"),
        Some("orders message bus")
    );
    assert_eq!(
        names(model.dependents(rabbit.uid.as_deref().unwrap())),
        [
            "ConfigMap rabbit-server-conf",
            "Secret rabbit-default-user",
            "Service rabbit",
            "Service rabbit-nodes",
            "StatefulSet rabbit-server",
        ]
    );
    let sts = get(&model, "apps", "StatefulSet", "mq", "rabbit-server");
    assert!(matches!(
        sts.spec,
        Spec::StatefulSet {
            replicas: 3,
            parallel: true,
            ..
        }
    ));
    assert_eq!(
        sts.controller().map(|o| (&*o.kind, &*o.name)),
        Some(("RabbitmqCluster", "rabbit"))
    );
    assert_eq!(
        names(model.dependents(sts.uid.as_deref().unwrap())),
        [
            "ControllerRevision rabbit-server-5d8f9c7b6",
            "Pod rabbit-server-0",
            "Pod rabbit-server-1",
            "Pod rabbit-server-2",
        ]
    );
    // An unknown kind keeps its identity and its owners: it still cascades.
    let revision = get(
        &model,
        "apps",
        "ControllerRevision",
        "mq",
        "rabbit-server-5d8f9c7b6",
    );
    assert_eq!(revision.spec, Spec::Other);
    assert_eq!(revision.controller().map(|o| &*o.uid), sts.uid.as_deref());
    assert_eq!(
        names(model.pods_using_claim("mq", "persistence-rabbit-server-2")),
        ["Pod rabbit-server-2"]
    );
    assert_eq!(
        names(model.pods_reading("Secret", "mq", "rabbit-default-user")).len(),
        3
    );
    let pod = get(&model, "", "Pod", "mq", "rabbit-server-0").pod().unwrap();
    assert_eq!(
        &*pod.secrets,
        [ConfigUse {
            name: "rabbit-default-user".into(),
            keys: None,
            required: true
        }]
    );
    let debug = format!("{model:?}");
    for value in ["WGtRMndaZzhwTHJ0", "ZGVmYXVsdF91c2VyX1hrUTJ3"] {
        assert!(!debug.contains(value), "the Secret's value {value} is kept");
    }
}

#[test]
fn mixed_directory_with_multi_document_yaml_typed_lists_and_json() {
    let mut reports = Vec::new();
    let path = clusters("mixed");
    let model = load_snapshots(&[&path], &mut |p| reports.push(p)).unwrap();
    assert_eq!(
        counts(&model),
        owned(&[
            ("CronJob.batch", 1),
            ("DaemonSet.apps", 1),
            ("EndpointSlice.discovery.k8s.io", 1),
            ("Job.batch", 1),
            ("Namespace", 3),
            ("PersistentVolumeClaim", 1),
            ("Pod", 4),
            ("Service", 2),
            ("StatefulSet.apps", 1),
        ])
    );
    // Four snapshot files (README.md is skipped), read to the end.
    let sizes: u64 = [
        "batch/jobs.json",
        "cache/redis.yaml",
        "monitoring/node-exporter.yaml",
        "namespaces.yaml",
    ]
    .iter()
    .map(|f| std::fs::metadata(path.join(f)).unwrap().len())
    .sum();
    let last = *reports.last().unwrap();
    let done = Progress {
        bytes_done: sizes,
        bytes_total: sizes,
        files_done: 4,
        files_total: 4,
        objects: 15,
    };
    assert_eq!(last, done);
    assert_eq!(
        reports[0],
        Progress {
            bytes_total: sizes,
            files_total: 4,
            ..Progress::default()
        }
    );
    assert!(reports.windows(2).all(|w| w[0].bytes_done <= w[1].bytes_done));

    // Written by hand without the fields the API server defaults.
    let redis = get(&model, "apps", "StatefulSet", "cache", "redis");
    let expected = Spec::StatefulSet {
        replicas: 1,
        selector: Selector {
            match_labels: labels(&[("app", "redis")]),
            expressions: vec![Requirement {
                key: "tier".into(),
                operator: Operator::NotIn,
                values: texts(&["test"]),
            }]
            .into_boxed_slice(),
        },
        strategy: StatefulSetStrategy::RollingUpdate {
            partition: 0,
            max_unavailable: IntOrPercent::Int(1),
        },
        parallel: false,
        claim_templates: texts(&["data"]),
        retention: Retention::default(),
    };
    assert_eq!(redis.spec, expected);
    assert_eq!(
        get(&model, "", "PersistentVolumeClaim", "cache", "data-redis-0").spec,
        Spec::PersistentVolumeClaim { volume: None }
    );
    assert!(model.volume_of_claim("cache", "data-redis-0").is_none());
    assert_eq!(
        get(&model, "", "Service", "cache", "legacy-db").spec,
        Spec::Service {
            selector: None,
            external: Box::default(),
            ports: vec![ServicePort {
                name: "".into(),
                port: 5432,
                protocol: "TCP".into(),
                target: PortTarget::Number(5432),
            }]
            .into(),
        }
    );
    assert_eq!(
        model.endpoint_slices("cache", "legacy-db")[0].spec,
        Spec::EndpointSlice {
            service: Some("legacy-db".into()),
            endpoints: vec![Endpoint {
                pod: None,
                ready: true
            }]
            .into_boxed_slice()
        }
    );
    let redis_0 = get(&model, "", "Pod", "cache", "redis-0");
    assert_eq!(names(model.selecting_pod("Service", redis_0)), ["Service redis"]);

    // Typed lists: items without apiVersion and kind take the list's.
    let exporter = get(&model, "apps", "DaemonSet", "monitoring", "node-exporter");
    assert_eq!(&*exporter.api_version, "apps/v1");
    assert!(matches!(
        exporter.spec,
        Spec::DaemonSet {
            max_unavailable: IntOrPercent::Int(1),
            max_surge: IntOrPercent::Int(0),
            ..
        }
    ));
    let exporter_pods = model.dependents(exporter.uid.as_deref().unwrap());
    assert_eq!(
        names(exporter_pods.clone()),
        ["Pod node-exporter-4kq9x", "Pod node-exporter-p7w2m"]
    );
    assert!(exporter_pods.iter().all(|p| &*p.api_version == "v1"));
    let everything = Toleration {
        key: None,
        exists: true,
        value: None,
        effect: None,
    };
    assert_eq!(
        exporter_pods[0].pod().unwrap().tolerations,
        vec![everything].into_boxed_slice()
    );

    // The JSON List: CronJob (kept as Other) → Job → a finished pod with an optional key.
    let cron = get(&model, "batch", "CronJob", "batch", "nightly-report");
    assert_eq!(cron.spec, Spec::Other);
    assert_eq!(
        names(model.dependents(cron.uid.as_deref().unwrap())),
        ["Job nightly-report-28900000"]
    );
    let job = get(&model, "batch", "Job", "batch", "nightly-report-28900000");
    assert!(matches!(&job.spec, Spec::Job { selector: Some(s) } if s.match_labels.len() == 1));
    let report = get(&model, "", "Pod", "batch", "nightly-report-28900000-x2v9k")
        .pod()
        .unwrap();
    assert!(report.finished() && !report.ready);
    let settings = ConfigUse {
        name: "report-settings".into(),
        keys: Some(texts(&["bucket"])),
        required: false,
    };
    assert_eq!(&*report.config_maps, [settings]);
    assert_eq!(model.in_namespace("monitoring").len(), 3);
}

#[test]
fn several_paths_make_one_model() {
    let model = load(&["database", "web", "operator", "mixed"]);
    assert_eq!(model.len(), 16 + 14 + 15 + 15);
    assert_eq!(
        names(model.pods_on_node("worker-a-1")),
        [
            "Pod node-exporter-4kq9x",
            "Pod pg-main-0",
            "Pod rabbit-server-0",
            "Pod redis-0"
        ]
    );
}

#[test]
fn a_broken_yaml_document_names_file_and_line() {
    let error = load_err("bad/syntax.yaml");
    let SnapshotError::Syntax { at, format, .. } = &error else {
        panic!("{error:?}")
    };
    assert!(at.file.ends_with("testdata/clusters/bad/syntax.yaml"), "{at}");
    assert_eq!((at.document, at.line, *format), (2, 13, "YAML"));
    assert!(
        error
            .to_string()
            .contains("syntax.yaml:13 (document 2): YAML syntax error at column"),
        "{error}"
    );
}

#[test]
fn a_wrong_type_names_the_field_and_line() {
    let error = load_err("bad/replicas-three.yaml");
    let text = error.to_string();
    let file = clusters("bad/replicas-three.yaml").display().to_string();
    assert_eq!(
        text,
        format!(
            "{file}:9 (document 1): items[0].spec.replicas: expected an integer, found \"three\" (in StatefulSet databases/pg-main)"
        )
    );
    assert_eq!(error.field(), Some("items[0].spec.replicas"));
}

#[test]
fn a_list_item_without_kind_is_refused() {
    let error = load_err("bad/item-without-kind.yaml");
    let SnapshotError::Invalid {
        at,
        field,
        message,
        object,
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!((at.line, field.as_str(), object), (7, "items[1].kind", &None));
    assert_eq!(
        message,
        "Required value: the items of a plain List (kind: List) carry their own apiVersion and kind"
    );
}

#[test]
fn an_invalid_selector_operator_is_named() {
    let error = load_err("bad/selector-operator.yaml");
    let SnapshotError::Invalid {
        at,
        field,
        message,
        object,
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(
        (at.line, field.as_str()),
        (11, "spec.selector.matchExpressions[0].operator")
    );
    assert_eq!(
        message,
        "Unsupported value: \"Contains\": supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\""
    );
    assert_eq!(object.as_deref(), Some("PodDisruptionBudget shop/web"));
}

#[test]
fn an_empty_file_loads_nothing() {
    assert!(load(&["bad/empty.yaml"]).is_empty());
    let mut loader = SnapshotLoader::new();
    loader.add_str("empty.json", "");
    loader.add_str("blank.yaml", "\n\n---\n# nothing\n");
    assert_eq!(loader.objects(), 0);
    assert!(loader.finish().unwrap().is_empty());
}

#[test]
fn every_problem_of_a_directory_is_reported() {
    let error = load_err("bad");
    let found: Vec<(String, usize)> = error
        .errors()
        .iter()
        .map(|e| {
            let at = e.source_ref().unwrap();
            (
                Path::new(&at.file)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                at.line,
            )
        })
        .collect();
    let expected = [
        ("item-without-kind.yaml", 7),
        ("replicas-three.yaml", 9),
        ("selector-operator.yaml", 11),
        ("syntax.yaml", 13),
    ];
    assert_eq!(found, expected.map(|(f, l)| (f.to_owned(), l)));
    assert!(error.to_string().starts_with("4 problems:\n- "), "{error}");
}

#[test]
fn a_missing_path_is_an_io_error() {
    let error = load_err("no-such-snapshot");
    assert!(matches!(error, SnapshotError::Io { .. }));
    assert!(error.to_string().starts_with("cannot read `"), "{error}");
}

#[test]
fn json_errors_have_lines_too() {
    let mut loader = SnapshotLoader::new();
    let text = "{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        {\n            \"apiVersion\": \"policy/v1\",\n            \"kind\": \"PodDisruptionBudget\",\n            \"metadata\": {\"name\": \"web\", \"namespace\": \"shop\"},\n            \"spec\": {\"minAvailable\": \"half\"}\n        }\n    ],\n    \"kind\": \"List\"\n}\n";
    loader.add_str("pdbs.json", text);
    let error = loader.finish().unwrap_err();
    assert_eq!(
        error.to_string(),
        "pdbs.json:8 (document 1): items[0].spec.minAvailable: expected an integer or a percentage such as \"25%\", found \"half\" (in PodDisruptionBudget shop/web)"
    );
    let mut loader = SnapshotLoader::new();
    loader.add_str("broken.json", "{\"kind\": \"List\",\n \"items\": [1, }\n");
    let error = loader.finish().unwrap_err();
    let SnapshotError::Syntax { at, format, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!((at.line, *format), (2, "JSON"));
}

/// A pod as an API server serves it, with the usual labels, owner, volumes and tolerations.
fn synthetic_pod(i: usize) -> Value {
    let app = format!("app-{}", i / 10);
    let hash = format!("{:010x}", (i / 10) * 7919);
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("{app}-{hash}-{:05x}", i), "namespace": format!("team-{}", i % 50),
            "uid": format!("{:08x}-0000-4000-8000-{:012x}", i, i),
            "labels": {"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": "shop", "pod-template-hash": hash},
            "annotations": {"prometheus.io/scrape": "true"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{app}-{hash}"),
                "uid": format!("{:08x}-1111-4000-8000-{:012x}", i / 10, i / 10), "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {
            "nodeName": format!("node-{}", i % 200),
            "containers": [{"name": "main", "image": "registry.example.com/shop/app:1.2.3",
                "env": [{"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": format!("{app}-db"), "key": "password"}}}]}],
            "volumes": [{"name": "config", "configMap": {"name": format!("{app}-config")}},
                {"name": "kube-api-access", "projected": {"sources": [{"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ]
        },
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    })
}

/// Resident memory of this process, in bytes (Linux).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

const MEMORY_PROBE: &str = "SUTURE_MEMORY_PROBE";

/// Resident memory per pod a model costs (slim objects, interned strings, every index),
/// measured in a process of its own so that no other test's allocations count.
///
/// The target is 1 KiB per pod. For these 50k pods (three labels, an owner, three ConfigMap or
/// Secret uses and two tolerations each, with label values, ConfigMaps and namespaces spread so
/// that most index keys are a pod's own) the model costs about 1,080 bytes resident (identical
/// label, owner and ConfigMap/Secret-use lists are shared by the model since): the `Object`
/// itself 248 bytes, its own name and uid ~110, its lists ~530 (tolerations 128, labels 112,
/// ConfigMap/Secret uses with their keys ~210, owner 80), and the indexes, whose label and
/// ConfigMap keys are mostly unique per pod here, most of the rest. The budget leaves ~15%
/// headroom over that figure, which `--nocapture` prints.
#[test]
fn memory_per_pod_stays_within_budget() {
    const PODS: usize = 50_000;
    const BUDGET: u64 = 1239;
    if std::env::var_os(MEMORY_PROBE).is_some() {
        let before = resident_bytes().unwrap();
        let mut model = ClusterModel::new();
        for i in 0..PODS {
            let object = project(&synthetic_pod(i), &mut model).unwrap();
            model.insert(object);
        }
        let after = resident_bytes().unwrap();
        assert_eq!(model.len(), PODS);
        println!("bytes-per-pod={}", (after.saturating_sub(before)) / PODS as u64);
        return;
    }
    if resident_bytes().is_none() {
        eprintln!("skipping: /proc/self/statm is not readable here");
        return;
    }
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &test_path("memory_per_pod_stays_within_budget"),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(MEMORY_PROBE, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let per_pod: u64 = stdout
        .lines()
        .find_map(|l| l.split_once("bytes-per-pod=").map(|(_, n)| n.trim()))
        .unwrap_or_else(|| {
            panic!(
                "the probe printed no figure:\n{stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        })
        .parse()
        .unwrap();
    println!("{per_pod} bytes per pod");
    assert!(
        per_pod < BUDGET,
        "{per_pod} bytes per pod, over the budget of {BUDGET}"
    );
}

/// The name the test harness knows a test of this module by (`snapshot::<name>`).
fn test_path(test: &str) -> String {
    let module = module_path!();
    let module = module.split_once("::").map_or(module, |(_, inner)| inner);
    format!("{module}::{test}")
}

/// Writes a List of `n` objects (pods, with a Deployment, ReplicaSet, Service, ConfigMap and
/// Secret for every 10 pods) to `path`, as JSON or YAML.
fn write_big_list(path: &Path, n: usize) {
    let mut items = Vec::with_capacity(n);
    let mut i = 0;
    while items.len() < n {
        let pod = synthetic_pod(i);
        if i % 10 == 0 {
            let app = pod["metadata"]["labels"]["app.kubernetes.io/name"]
                .as_str()
                .unwrap()
                .to_owned();
            let ns = pod["metadata"]["namespace"].clone();
            items.push(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": app, "namespace": ns, "uid": format!("d-{i}")},
                "spec": {"replicas": 10, "selector": {"matchLabels": {"app.kubernetes.io/name": app}}}}));
            items.push(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": format!("{app}-db"), "namespace": ns}, "data": {"password": "c2VjcmV0"}}));
            items.push(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": app, "namespace": ns}, "spec": {"selector": {"app.kubernetes.io/name": app}}}));
        }
        items.push(pod);
        i += 1;
    }
    items.truncate(n);
    let list =
        json!({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}});
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    if path.extension().is_some_and(|e| e == "json") {
        serde_json::to_writer_pretty(file, &list).unwrap();
    } else {
        serde_yaml_ng::to_writer(file, &list).unwrap();
    }
}

/// `cargo test --release -p policies-cel --test integration snapshot -- --ignored --nocapture`
#[test]
#[ignore = "a timing: run in release mode"]
fn load_100k_objects() {
    let dir = std::env::temp_dir().join(format!("suture-snapshot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, n) in [("big.json", 100_000), ("big.yaml", 100_000)] {
        let path = dir.join(name);
        write_big_list(&path, n);
        let size = std::fs::metadata(&path).unwrap().len();
        let start = Instant::now();
        let mut reports = 0;
        let model = load_snapshots(&[&path], &mut |_| reports += 1).unwrap();
        let took = start.elapsed();
        assert_eq!(model.len(), n);
        println!(
            "{name}: {n} objects, {:.0} MB in {:.2?} ({:.0} MB/s, {reports} progress reports)",
            size as f64 / 1e6,
            took,
            size as f64 / 1e6 / took.as_secs_f64()
        );
        std::fs::remove_file(&path).unwrap();
    }
    std::fs::remove_dir(&dir).unwrap();
}
