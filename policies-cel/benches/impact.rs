//! `cargo bench -p policies-cel --bench impact`: the cluster model and the impact estimate at
//! three cluster sizes (about 1.5k, 15k and 150k pods with their workloads, Services, PDBs and
//! volumes, generated here as `kubectl get -o json` objects and projected into the model).
//!
//! Reports model build time, resident memory per pod, and the median estimate time for a
//! single-pod delete, a Deployment rollout, a StatefulSet scale-down and a namespace delete, with
//! each size's ratio to the smallest (cost follows what a request touches, not cluster size).
//! Resident bytes per pod are meaningful at the largest size only: mimalloc reserves memory in
//! large segments, which dominates small models.

/// The allocator the binaries use (see `cmd/`): with glibc malloc, the model build leaves the heap
/// fragmented and allocation-heavy estimates run about twice as slow at 150k pods.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::time::{Duration, Instant};

use policies_cel::Request;
use policies_cel::cluster::{ClusterModel, project};
use policies_cel::impact::{estimate, estimate_with};
use policies_cel::operators::Profiles;
use serde_json::{Value as Json, json};

/// Pods per namespace: a Deployment of 10 and a StatefulSet of 5.
const PODS_PER_NAMESPACE: usize = 15;

fn meta(kind: &str, namespace: &str, name: &str, labels: Json, owner: Option<(&str, &str)>) -> Json {
    let mut metadata = json!({"name": name, "uid": format!("{namespace}-{kind}-{name}"), "labels": labels});
    if !namespace.is_empty() {
        metadata["namespace"] = json!(namespace);
    }
    if let Some((owner_kind, owner_name)) = owner {
        metadata["ownerReferences"] = json!([{
            "apiVersion": "apps/v1", "kind": owner_kind, "name": owner_name,
            "uid": format!("{namespace}-{owner_kind}-{owner_name}"), "controller": true, "blockOwnerDeletion": true
        }]);
    }
    metadata
}

fn pod(
    namespace: &str,
    name: &str,
    app: &str,
    owner: (&str, &str),
    node: usize,
    claim: Option<&str>,
) -> Json {
    let mut spec = json!({"nodeName": format!("node-{node}"), "containers": [{"name": "app", "image": "registry.example.com/app:1.0",
        "env": [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": format!("{app}-config"), "key": "mode"}}}]}]});
    if let Some(claim) = claim {
        spec["volumes"] = json!([{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta("Pod", namespace, name, json!({"app": app}), Some(owner)),
           "spec": spec, "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
}

/// The objects of one namespace.
fn namespace_objects(index: usize) -> Vec<Json> {
    let ns = format!("team-{index}");
    let ns = ns.as_str();
    let web_selector = json!({"matchLabels": {"app": "web"}});
    let db_selector = json!({"matchLabels": {"app": "db"}});
    let template = |app: &str| json!({"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1.0"}]}});
    let mut objects = vec![
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": meta("Namespace", "", ns, json!({}), None)}),
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("Deployment", ns, "web", json!({"app": "web"}), None),
               "spec": {"replicas": 10, "selector": web_selector, "template": template("web")}}),
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta("ReplicaSet", ns, "web-5d8f", json!({"app": "web"}), Some(("Deployment", "web"))),
               "spec": {"replicas": 10, "selector": web_selector, "template": template("web")}}),
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta("StatefulSet", ns, "db", json!({"app": "db"}), None),
               "spec": {"replicas": 5, "selector": db_selector, "serviceName": "db", "template": template("db"),
                        "volumeClaimTemplates": [{"metadata": {"name": "data"}}]}}),
        json!({"apiVersion": "v1", "kind": "Service", "metadata": meta("Service", ns, "web", json!({}), None), "spec": {"selector": {"app": "web"}}}),
        json!({"apiVersion": "v1", "kind": "Service", "metadata": meta("Service", ns, "db", json!({}), None), "spec": {"selector": {"app": "db"}}}),
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta("PodDisruptionBudget", ns, "web", json!({}), None),
               "spec": {"maxUnavailable": "25%", "selector": web_selector}}),
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta("PodDisruptionBudget", ns, "db", json!({}), None),
               "spec": {"minAvailable": 3, "selector": db_selector}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("ConfigMap", ns, "web-config", json!({}), None), "data": {"mode": "prod"}}),
    ];
    for i in 0..10 {
        objects.push(pod(
            ns,
            &format!("web-5d8f-{i:05}"),
            "web",
            ("ReplicaSet", "web-5d8f"),
            (index + i) % 500,
            None,
        ));
    }
    for i in 0..5 {
        let claim = format!("data-db-{i}");
        objects.push(pod(
            ns,
            &format!("db-{i}"),
            "db",
            ("StatefulSet", "db"),
            (index * 7 + i) % 500,
            Some(&claim),
        ));
        let volume = format!("pv-{ns}-{i}");
        objects.push(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta("PersistentVolumeClaim", ns, &claim, json!({"app": "db"}), None),
                            "spec": {"volumeName": volume}}));
        objects.push(json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta("PersistentVolume", "", &volume, json!({}), None),
                            "spec": {"persistentVolumeReclaimPolicy": "Delete", "claimRef": {"namespace": ns, "name": claim}}}));
    }
    objects
}

fn resident_bytes() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<usize>().ok()))
        .map_or(0, |pages| pages * 4096)
}

fn review(operation: &str, resource: (&str, &str), kind: &str, ns: &str, name: &str, extra: Json) -> Request {
    let mut request = json!({"uid": "b1e6c7a4-1111-4c3b-9a57-0d1e2f3a4b5c",
        "kind": {"group": resource.0, "version": "v1", "kind": kind},
        "resource": {"group": resource.0, "version": "v1", "resource": resource.1},
        "name": name, "namespace": ns, "operation": operation,
        "userInfo": {"username": "system:serviceaccount:ops:operator"}});
    for (k, v) in extra.as_object().into_iter().flatten() {
        request[k] = v.clone();
    }
    match Request::from_review(
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}),
    ) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("bad benchmark review: {e}");
            std::process::exit(1)
        }
    }
}

fn median_ns(samples: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..samples)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos() as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

struct Row {
    pods: usize,
    build: Duration,
    bytes_per_pod: f64,
    estimates: Vec<f64>,
    /// The same estimates without the OperatorProfile catalog (its in-process baseline).
    without_catalog: Vec<f64>,
    /// The whole built-in pack's decision on the same requests (the estimate included).
    decisions: Vec<f64>,
    /// The same decisions with no OperatorProfile loaded.
    decisions_without_catalog: Vec<f64>,
    /// The same with a SafetyPackParams loaded (every policy's scope condition reads it).
    tuned: Vec<f64>,
}

/// A SafetyPackParams as an operator team would tune the pack.
const TUNING: &str = r#"
apiVersion: suture.dev/v1alpha1
kind: SafetyPackParams
metadata: {name: tuning}
spec:
  excludeServiceAccountNamespaces: [ci]
  excludeServiceAccounts: [backup/velero]
  maxDeletedObjects: 200
"#;

fn main() {
    let quick = std::env::args().any(|a| a == "--test");
    let sizes: &[usize] = if quick { &[10] } else { &[100, 1_000, 10_000] };
    let samples = if quick { 3 } else { 101 };
    let deployment = |replicas: i64, image: &str| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "team-7", "uid": "team-7-Deployment-web"},
               "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": image}]}}}})
    };
    let statefulset = |replicas: i64| {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "team-7", "uid": "team-7-StatefulSet-db"},
               "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "db"}}, "serviceName": "db",
                        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1.0"}]}},
                        "volumeClaimTemplates": [{"metadata": {"name": "data"}}]}})
    };
    let requests = [
        (
            "single-pod delete",
            review(
                "DELETE",
                ("", "pods"),
                "Pod",
                "team-7",
                "web-5d8f-00003",
                json!({}),
            ),
        ),
        (
            "Deployment rollout",
            review(
                "UPDATE",
                ("apps", "deployments"),
                "Deployment",
                "team-7",
                "web",
                json!({"object": deployment(10, "registry.example.com/app:1.1"), "oldObject": deployment(10, "registry.example.com/app:1.0")}),
            ),
        ),
        (
            "StatefulSet 5→2",
            review(
                "UPDATE",
                ("apps", "statefulsets"),
                "StatefulSet",
                "team-7",
                "db",
                json!({"object": statefulset(2), "oldObject": statefulset(5)}),
            ),
        ),
        (
            "namespace delete",
            review("DELETE", ("", "namespaces"), "Namespace", "", "team-7", json!({})),
        ),
    ];
    let mut rows = Vec::new();
    for &namespaces in sizes {
        let before = resident_bytes();
        let started = Instant::now();
        let mut model = ClusterModel::new();
        for index in 0..namespaces {
            for object in namespace_objects(index) {
                match project(&object, &mut model) {
                    Ok(slim) => model.insert(slim),
                    Err(e) => {
                        eprintln!("projection failed: {e}");
                        std::process::exit(1);
                    }
                }
            }
        }
        let build = started.elapsed();
        let pods = namespaces * PODS_PER_NAMESPACE;
        let bytes_per_pod = resident_bytes().saturating_sub(before) as f64 / pods as f64;
        let estimates = requests
            .iter()
            .map(|(_, request)| {
                median_ns(samples, || {
                    black_box(estimate(request, &model));
                })
            })
            .collect();
        // The same estimates without the OperatorProfile catalog, in this process: what the
        // catalog costs requests that touch no custom kind.
        let no_profiles = Profiles::default();
        let without_catalog = requests
            .iter()
            .map(|(_, request)| {
                median_ns(samples, || {
                    black_box(estimate_with(request, &model, &no_profiles));
                })
            })
            .collect();
        let pack = match policies_cel::pack::builtin() {
            Ok(pack) => pack,
            Err(e) => {
                eprintln!("the built-in pack does not load: {e}");
                std::process::exit(1);
            }
        };
        let tuned_pack = match policies_cel::pack::builtin_loader()
            .and_then(|loader| loader.add_str("tuning.yaml", TUNING))
            .and_then(|loader| loader.finish())
        {
            Ok(pack) => pack,
            Err(e) => {
                eprintln!("the tuned pack does not load: {e}");
                std::process::exit(1);
            }
        };
        let decide = |set: &policies_cel::PolicySet| -> Vec<f64> {
            requests
                .iter()
                .map(|(_, request)| {
                    median_ns(samples, || {
                        black_box(policies_cel::evaluate(set, request, &model));
                    })
                })
                .collect()
        };
        let decisions = decide(&pack);
        let tuned = decide(&tuned_pack);
        let pack_without_catalog = policies_cel::PolicySet {
            profiles: Profiles::default(),
            ..pack.clone()
        };
        let decisions_without_catalog = decide(&pack_without_catalog);
        rows.push(Row {
            pods,
            build,
            bytes_per_pod,
            estimates,
            without_catalog,
            decisions,
            decisions_without_catalog,
            tuned,
        });
        drop(model);
    }
    println!("impact estimate, median of {samples} runs per request (model objects per pod ≈ 2.3)\n");
    print!("{:>8} {:>10} {:>10}", "pods", "build", "B/pod");
    for (name, _) in &requests {
        print!(" {name:>20}");
    }
    println!();
    let base = rows.first().map(|r| r.estimates.clone()).unwrap_or_default();
    for row in &rows {
        print!(
            "{:>8} {:>9.2}s {:>10.0}",
            row.pods,
            row.build.as_secs_f64(),
            row.bytes_per_pod
        );
        for (i, ns) in row.estimates.iter().enumerate() {
            let ratio = ns / base.get(i).copied().unwrap_or(*ns);
            print!(" {:>10.1} µs ({:.2}x)", ns / 1000.0, ratio);
        }
        println!();
    }
    println!(
        "\nthe built-in pack's whole decision ({} SafetyPolicies, the estimate included), median µs\n",
        policies_cel::pack::files().len()
    );
    print!("{:>8}", "pods");
    for (name, _) in &requests {
        print!(" {name:>20}");
    }
    println!();
    for row in &rows {
        print!("{:>8}", row.pods);
        for ns in &row.decisions {
            print!(" {:>20.1}", ns / 1000.0);
        }
        println!();
    }
    println!("\nthe same with a SafetyPackParams loaded (every scope condition reads it), median µs\n");
    for row in &rows {
        print!("{:>8}", row.pods);
        for ns in &row.tuned {
            print!(" {:>20.1}", ns / 1000.0);
        }
        println!();
    }
    println!(
        "\nthe OperatorProfile catalog ({} profiles) on requests that touch no custom kind: median µs with it / without it (ratio), estimate | whole pack decision\n",
        policies_cel::operators::catalog().len()
    );
    for row in &rows {
        print!("{:>8}", row.pods);
        for (with, without) in row.estimates.iter().zip(&row.without_catalog) {
            print!(
                " {:>7.1}/{:<7.1}({:.2}x)",
                with / 1000.0,
                without / 1000.0,
                with / without
            );
        }
        print!("  |");
        for (with, without) in row.decisions.iter().zip(&row.decisions_without_catalog) {
            print!(
                " {:>7.1}/{:<7.1}({:.2}x)",
                with / 1000.0,
                without / 1000.0,
                with / without
            );
        }
        println!();
    }
}
