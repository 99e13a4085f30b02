//! The kubelet and scheduler part of the simulation, driven by a watch on every pod: a pending
//! pod that fits a simulated node is bound to it (`pods/binding`); a pod bound to a simulated node
//! is reported Running, and Ready unless its `e2e.suture.dev/ready: "false"` annotation says
//! otherwise (flipping the annotation flips readiness, for readiness scenarios); a pod with a
//! deletionTimestamp on a simulated node is finished with grace 0, as a kubelet confirms that its
//! containers stopped. Like the scheduler's queue of unschedulable pods, a pending pod that fits
//! no node yet (a new Node still tainted not-ready, say) is tried again every second until it is
//! bound or gone: no event would come for it otherwise.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Binding, Node, Pod};
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions};
use kube::runtime::watcher;
use serde_json::json;

use crate::simulator::{Registry, applied, placement};

/// The annotation that makes a simulated pod Running but not Ready.
pub const READY_ANNOTATION: &str = "e2e.suture.dev/ready";

/// Pod IPs handed out by the simulation (10.244.0.0/16).
static NEXT_IP: AtomicU32 = AtomicU32::new(1);

fn next_ip() -> String {
    let n = NEXT_IP.fetch_add(1, Ordering::Relaxed);
    format!("10.244.{}.{}", (n / 250) % 250, n % 250 + 1)
}

fn now() -> String {
    k8s_openapi::jiff::Timestamp::now().to_string()
}

fn wants_ready(pod: &Pod) -> bool {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(READY_ANNOTATION))
        .is_none_or(|value| value != "false")
}

fn condition(pod: &Pod, kind: &str) -> Option<String> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == kind)
        .map(|c| c.status.clone())
}

fn running_status(pod: &Pod, ready: bool, ip: &str, host_ip: &str) -> serde_json::Value {
    let now = now();
    let ready = if ready { "True" } else { "False" };
    let containers: Vec<serde_json::Value> = pod
        .spec
        .as_ref()
        .map(|spec| spec.containers.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|c| {
            json!({
                "name": c.name, "image": c.image.clone().unwrap_or_default(), "imageID": "",
                "ready": ready == "True", "started": true, "restartCount": 0,
                "state": {"running": {"startedAt": now}},
            })
        })
        .collect();
    let start = pod
        .status
        .as_ref()
        .and_then(|s| s.start_time.as_ref())
        .map_or_else(|| now.clone(), |t| t.0.to_string());
    json!({"status": {
        "phase": "Running",
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": start,
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
            {"type": "Initialized", "status": "True", "lastTransitionTime": now},
            {"type": "ContainersReady", "status": ready, "lastTransitionTime": now},
            {"type": "Ready", "status": ready, "lastTransitionTime": now},
        ],
        "containerStatuses": containers,
    }})
}

/// How often pods left pending are tried again.
const RETRY_PENDING: Duration = Duration::from_secs(1);

/// What the simulation does with one pod it sees.
struct Kubelet {
    client: kube::Client,
    nodes: Registry,
    load: BTreeMap<String, usize>,
    /// Pods (namespace, name) that fit no node when last seen, or whose binding failed.
    unbound: BTreeSet<(String, String)>,
}

impl Kubelet {
    /// The host IP of `node` when the simulation runs it.
    fn host_ip(&self, node: &str) -> Option<String> {
        let nodes = self
            .nodes
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        nodes.get(node).cloned()
    }

    async fn handle(&mut self, pod: &Pod) -> anyhow::Result<()> {
        let (Some(name), Some(namespace)) = (pod.metadata.name.as_deref(), pod.metadata.namespace.as_deref())
        else {
            return Ok(());
        };
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let node_name = pod.spec.as_ref().and_then(|s| s.node_name.clone());
        if pod.metadata.deletion_timestamp.is_some() {
            if node_name.as_deref().and_then(|n| self.host_ip(n)).is_some() {
                let params = DeleteParams {
                    grace_period_seconds: Some(0),
                    preconditions: Some(Preconditions {
                        uid: pod.metadata.uid.clone(),
                        resource_version: None,
                    }),
                    ..DeleteParams::default()
                };
                let _ = pods.delete(name, &params).await;
            }
            return Ok(());
        }
        let phase = pod
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or_default();
        if matches!(phase.as_str(), "Succeeded" | "Failed") {
            return Ok(());
        }
        let host_ip = node_name.as_deref().and_then(|n| self.host_ip(n));
        match (node_name, host_ip) {
            (None, _) => self.bind(&pods, pod, name).await,
            (Some(_), Some(host_ip)) => {
                let ready = wants_ready(pod);
                let want = if ready { "True" } else { "False" };
                if phase != "Running" || condition(pod, "Ready").as_deref() != Some(want) {
                    let ip = pod
                        .status
                        .as_ref()
                        .and_then(|s| s.pod_ip.clone())
                        .unwrap_or_else(next_ip);
                    let status = running_status(pod, ready, &ip, &host_ip);
                    pods.patch_status(name, &PatchParams::default(), &Patch::Merge(status))
                        .await?;
                }
                Ok(())
            }
            (Some(_), None) => Ok(()),
        }
    }

    async fn bind(&mut self, pods: &Api<Pod>, pod: &Pod, name: &str) -> anyhow::Result<()> {
        let key = (
            pod.metadata.namespace.clone().unwrap_or_default(),
            name.to_owned(),
        );
        let listed = Api::<Node>::all(self.client.clone())
            .list(&ListParams::default().labels(crate::simulator::nodes::TAINT_KEY))
            .await;
        let nodes: Vec<Node> = match listed {
            Ok(list) => list.items,
            Err(error) => {
                self.unbound.insert(key);
                return Err(error.into());
            }
        };
        let siblings = self.siblings(pod).await;
        let Some(node) = placement::choose(pod, &nodes, &siblings, &self.load) else {
            self.unbound.insert(key);
            return Ok(());
        };
        let node_name = node.metadata.name.clone().unwrap_or_default();
        let binding: Binding = serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "uid": pod.metadata.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }))?;
        let bound: Result<serde_json::Value, _> = pods
            .create_subresource("binding", name, &PostParams::default(), &binding)
            .await;
        if bound.is_ok() {
            *self.load.entry(node_name).or_default() += 1;
            self.unbound.remove(&key);
        } else {
            self.unbound.insert(key);
        }
        Ok(())
    }

    /// Per node, the pods bound there that share `pod`'s controller and are not being deleted (the
    /// scheduler's default topology spreading counts them); none for a pod without a controller,
    /// or when they cannot be listed (the pods bound so far decide then).
    async fn siblings(&self, pod: &Pod) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        let Some(owner) = placement::controller_uid(pod) else {
            return counts;
        };
        let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
        let Ok(listed) = Api::<Pod>::namespaced(self.client.clone(), namespace)
            .list(&ListParams::default())
            .await
        else {
            return counts;
        };
        for other in &listed.items {
            if other.metadata.deletion_timestamp.is_some() || placement::controller_uid(other) != Some(owner)
            {
                continue;
            }
            if let Some(node) = other.spec.as_ref().and_then(|spec| spec.node_name.clone()) {
                *counts.entry(node).or_default() += 1;
            }
        }
        counts
    }

    /// Tries the pods left pending again (as they are now; those gone or bound meanwhile are
    /// forgotten).
    async fn retry_unbound(&mut self) {
        for (namespace, name) in std::mem::take(&mut self.unbound) {
            let pods: Api<Pod> = Api::namespaced(self.client.clone(), &namespace);
            match pods.get_opt(&name).await {
                Ok(Some(pod)) => {
                    if let Err(error) = self.handle(&pod).await {
                        eprintln!("node simulator: pod {namespace}/{name}: {error:#}");
                    }
                }
                Ok(None) => {}
                // Looked at again next time.
                Err(_) => {
                    self.unbound.insert((namespace, name));
                }
            }
        }
    }
}

/// Acts on every pod event forever, restarting the watch after errors.
pub async fn run(client: kube::Client, nodes: Registry) {
    let mut kubelet = Kubelet {
        client: client.clone(),
        nodes,
        load: BTreeMap::new(),
        unbound: BTreeSet::new(),
    };
    let mut pods = applied(Api::<Pod>::all(client), watcher::Config::default()).boxed();
    let mut retry = tokio::time::interval(RETRY_PENDING);
    retry.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            pod = pods.next() => {
                let Some(pod) = pod else { return };
                if let Err(error) = kubelet.handle(&pod).await {
                    eprintln!(
                        "node simulator: pod {}/{}: {error:#}",
                        pod.metadata.namespace.as_deref().unwrap_or_default(),
                        pod.metadata.name.as_deref().unwrap_or_default()
                    );
                }
            }
            _ = retry.tick() => kubelet.retry_unbound().await,
        }
    }
}

#[cfg(test)]
mod tests {
    //! The scheduler part against a scripted API server (kube's mock-service pattern): a pod that
    //! fits no node, or whose binding or Node list failed, is kept and tried again; one gone
    //! meanwhile is forgotten.

    use std::sync::{Arc, RwLock};

    use http::{Request, Response};
    use kube::client::Body;
    use serde_json::{Value, json};
    use tower_test::mock;

    use super::*;
    use crate::simulator::nodes::TAINT_KEY;

    type Handle = mock::Handle<Request<Body>, Response<Body>>;

    fn kubelet() -> (Kubelet, Handle) {
        let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
        let nodes: Registry = Arc::new(RwLock::new(BTreeMap::from([("sim-1".into(), "10.1.0.1".into())])));
        let kubelet = Kubelet {
            client: kube::Client::new(service, "default"),
            nodes,
            load: BTreeMap::new(),
            unbound: BTreeSet::new(),
        };
        (kubelet, handle)
    }

    fn pending_pod() -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "db-0", "namespace": "db", "uid": "u-1", "resourceVersion": "7"},
            "spec": {"containers": [{"name": "db", "image": "postgres"}],
                     "tolerations": [{"key": TAINT_KEY, "operator": "Exists"}]},
            "status": {"phase": "Pending"}})
    }

    /// The simulated node, with the not-ready taint a new Node carries until it is seen Ready.
    fn node_list(not_ready: bool) -> Value {
        let mut taints = vec![json!({"key": TAINT_KEY, "value": "true", "effect": "NoSchedule"})];
        if not_ready {
            taints.push(json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}));
        }
        json!({"apiVersion": "v1", "kind": "NodeList", "metadata": {"resourceVersion": "3"},
            "items": [{"metadata": {"name": "sim-1", "labels": {TAINT_KEY: "true"}},
                       "spec": {"taints": taints}}]})
    }

    /// Answers the next request with `status` and `body`; returns its method, path and body.
    async fn answer(handle: &mut Handle, status: u16, body: Value) -> (String, String, Vec<u8>) {
        let (request, respond) = handle.next_request().await.expect("the kubelet makes a request");
        let method = request.method().to_string();
        let path = request.uri().path().to_owned();
        let sent = http_body_util::BodyExt::collect(request.into_body())
            .await
            .map(|collected| collected.to_bytes().to_vec())
            .unwrap_or_default();
        let response = Response::builder()
            .status(status)
            .body(Body::from(body.to_string().into_bytes()))
            .expect("a response");
        respond.send_response(response);
        (method, path, sent)
    }

    fn not_found() -> Value {
        json!({"apiVersion": "v1", "kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404,
            "message": "pods \"db-0\" not found"})
    }

    #[tokio::test]
    async fn a_pod_that_fits_no_node_yet_is_bound_on_a_later_try() {
        let (mut kubelet, mut handle) = kubelet();
        let pod: Pod = serde_json::from_value(pending_pod()).expect("a pod");
        let server = async {
            let (method, path, _) = answer(&mut handle, 200, node_list(true)).await;
            assert_eq!((method.as_str(), path.as_str()), ("GET", "/api/v1/nodes"));
        };
        let (handled, ()) = tokio::join!(kubelet.handle(&pod), server);
        handled.expect("no error: the pod simply fits no node yet");
        assert!(
            kubelet.unbound.contains(&("db".to_owned(), "db-0".to_owned())),
            "kept for a later try"
        );

        let server = async {
            let (method, path, _) = answer(&mut handle, 200, pending_pod()).await;
            assert_eq!(
                (method.as_str(), path.as_str()),
                ("GET", "/api/v1/namespaces/db/pods/db-0")
            );
            answer(&mut handle, 200, node_list(false)).await;
            let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "db-0"},
                "target": {"kind": "Node", "name": "sim-1"}});
            let (method, path, sent) = answer(&mut handle, 201, binding).await;
            assert_eq!(
                (method.as_str(), path.as_str()),
                ("POST", "/api/v1/namespaces/db/pods/db-0/binding")
            );
            let sent: Value = serde_json::from_slice(&sent).expect("a JSON Binding");
            assert_eq!(sent["target"]["name"], "sim-1");
            assert_eq!(sent["metadata"]["uid"], "u-1");
        };
        tokio::join!(kubelet.retry_unbound(), server);
        assert!(kubelet.unbound.is_empty(), "bound, so no longer retried");
        assert_eq!(kubelet.load.get("sim-1"), Some(&1));
    }

    #[tokio::test]
    async fn a_controllers_pod_goes_to_the_node_with_fewest_of_its_siblings() {
        let (mut kubelet, mut handle) = kubelet();
        kubelet.load.insert("sim-2".into(), 5);
        let owner = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-1", "controller": true}]);
        let mut pending = pending_pod();
        pending["metadata"]["ownerReferences"] = owner.clone();
        let pod: Pod = serde_json::from_value(pending).expect("a pod");
        let server = async {
            let simulated = |name: &str| {
                json!({"metadata": {"name": name, "labels": {TAINT_KEY: "true"}},
                "spec": {"taints": [{"key": TAINT_KEY, "value": "true", "effect": "NoSchedule"}]}})
            };
            let nodes = json!({"apiVersion": "v1", "kind": "NodeList", "metadata": {"resourceVersion": "3"},
                "items": [simulated("sim-1"), simulated("sim-2")]});
            answer(&mut handle, 200, nodes).await;
            // A sibling already on sim-1; another controller's pod on sim-2 does not count.
            let bound = |name: &str, node: &str, uid: &str| {
                json!({"metadata": {"name": name, "namespace": "db",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "uid": uid, "controller": true}]},
                "spec": {"nodeName": node, "containers": []}})
            };
            let pods = json!({"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "9"},
                "items": [bound("web-a", "sim-1", "rs-1"), bound("other", "sim-2", "rs-2")]});
            let (method, path, _) = answer(&mut handle, 200, pods).await;
            assert_eq!(
                (method.as_str(), path.as_str()),
                ("GET", "/api/v1/namespaces/db/pods")
            );
            let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "db-0"},
                "target": {"kind": "Node", "name": "sim-2"}});
            let (_, _, sent) = answer(&mut handle, 201, binding).await;
            let sent: Value = serde_json::from_slice(&sent).expect("a JSON Binding");
            assert_eq!(
                sent["target"]["name"], "sim-2",
                "spread from its sibling, though sim-2 has run more pods"
            );
        };
        let (handled, ()) = tokio::join!(kubelet.handle(&pod), server);
        handled.expect("bound");
    }

    #[tokio::test]
    async fn a_failed_binding_is_retried_and_a_deleted_pod_forgotten() {
        let (mut kubelet, mut handle) = kubelet();
        let pod: Pod = serde_json::from_value(pending_pod()).expect("a pod");
        let server = async {
            answer(&mut handle, 200, node_list(false)).await;
            let conflict = json!({"apiVersion": "v1", "kind": "Status", "status": "Failure",
                "reason": "Conflict", "code": 409, "message": "pod db-0 is being bound"});
            let (method, _, _) = answer(&mut handle, 409, conflict).await;
            assert_eq!(method, "POST");
        };
        let (handled, ()) = tokio::join!(kubelet.handle(&pod), server);
        handled.expect("a refused binding is no error of the simulation");
        assert_eq!(kubelet.unbound.len(), 1, "a refused binding is tried again");
        assert!(kubelet.load.is_empty());

        let server = async {
            let (method, path, _) = answer(&mut handle, 404, not_found()).await;
            assert_eq!(
                (method.as_str(), path.as_str()),
                ("GET", "/api/v1/namespaces/db/pods/db-0")
            );
        };
        tokio::join!(kubelet.retry_unbound(), server);
        assert!(kubelet.unbound.is_empty(), "a pod gone is not tried again");
    }

    #[tokio::test]
    async fn a_pod_whose_node_list_failed_is_tried_again() {
        let (mut kubelet, mut handle) = kubelet();
        let pod: Pod = serde_json::from_value(pending_pod()).expect("a pod");
        let server = async {
            let unavailable = json!({"apiVersion": "v1", "kind": "Status", "status": "Failure",
                "reason": "ServiceUnavailable", "code": 503, "message": "etcd is not ready"});
            let (method, path, _) = answer(&mut handle, 503, unavailable).await;
            assert_eq!((method.as_str(), path.as_str()), ("GET", "/api/v1/nodes"));
        };
        let (handled, ()) = tokio::join!(kubelet.handle(&pod), server);
        assert!(handled.is_err(), "the failed list is reported");
        assert!(
            kubelet.unbound.contains(&("db".to_owned(), "db-0".to_owned())),
            "and the pod kept for a later try"
        );
    }
}
