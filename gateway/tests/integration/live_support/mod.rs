//! A small mock Kubernetes API server for the live-model tests, on kube's documented
//! mock-service pattern (`tower_test::mock::pair` + `kube::Client::new`). These tests exercise
//! kube's real client and watchers against scripted HTTP answers — no live cluster is used.
//!
//! Routing is by path: a list request gets the path's current list (an empty list at
//! resourceVersion "1" by default, so every kind the gateway watches syncs); a watch request
//! (`?watch=true`) gets the next scripted reply for its path — newline-delimited watch events
//! after which the stream ends, or an HTTP error — and waits ("a quiet watch") until a test
//! scripts one. Lists can be held back, or fail, to test readiness and recovery.

#![allow(dead_code)]

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::{Request, Response, StatusCode};
use kube::client::Body;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tower_test::mock::{self, SendResponse};

type Handle = mock::Handle<Request<Body>, Response<Body>>;

/// A scripted answer to a watch request.
#[derive(Debug, Clone)]
pub enum WatchReply {
    /// These events, one JSON object per line, then the stream ends.
    Events(Vec<Value>),
    /// An HTTP error with a `Status` body.
    Error(u16),
}

#[derive(Default)]
struct State {
    lists: HashMap<String, (String, Vec<Value>)>,
    list_errors: HashMap<String, VecDeque<u16>>,
    held: HashSet<String>,
    watches: HashMap<String, VecDeque<WatchReply>>,
    /// (path, query, is a watch, responder) of requests not answered yet.
    parked: Vec<(String, String, bool, SendResponse<Response<Body>>)>,
    /// (URI, Accept header) of every request.
    requests: Vec<(String, String)>,
}

/// The mock API server; the server task stops when it is dropped.
pub struct MockApi {
    state: Arc<Mutex<State>>,
    wake: Arc<Notify>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockApi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MockApi {
    /// A client whose every request this mock answers.
    pub fn start() -> (kube::Client, MockApi) {
        let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(service, "default");
        let state = Arc::new(Mutex::new(State::default()));
        let wake = Arc::new(Notify::new());
        let task = tokio::spawn(serve(handle, state.clone(), wake.clone()));
        (client, MockApi { state, wake, task })
    }

    fn edit(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.state.lock().unwrap());
        self.wake.notify_one();
    }

    /// What a list of `path` answers from now on.
    pub fn set_list(&self, path: &str, resource_version: &str, items: Vec<Value>) {
        self.edit(|s| {
            s.lists.insert(path.into(), (resource_version.into(), items));
        });
    }

    /// The next list of `path` fails with HTTP `code`.
    pub fn fail_next_list(&self, path: &str, code: u16) {
        self.edit(|s| s.list_errors.entry(path.into()).or_default().push_back(code));
    }

    /// Lists of `path` wait until [`MockApi::release`].
    pub fn hold(&self, path: &str) {
        self.edit(|s| {
            s.held.insert(path.into());
        });
    }

    pub fn release(&self, path: &str) {
        self.edit(|s| {
            s.held.remove(path);
        });
    }

    /// The next watch request on `path` (or the one waiting) gets `reply`.
    pub fn reply_watch(&self, path: &str, reply: WatchReply) {
        self.edit(|s| s.watches.entry(path.into()).or_default().push_back(reply));
    }

    /// Every request URI so far (path and query).
    pub fn requests(&self) -> Vec<String> {
        self.state
            .lock()
            .unwrap()
            .requests
            .iter()
            .map(|(uri, _)| uri.clone())
            .collect()
    }

    /// Request URIs on `path` so far, in order.
    pub fn requests_on(&self, path: &str) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|uri| uri.split('?').next() == Some(path))
            .collect()
    }

    /// The Accept headers of the requests on `path` so far.
    pub fn accepts_on(&self, path: &str) -> Vec<String> {
        let state = self.state.lock().unwrap();
        state
            .requests
            .iter()
            .filter(|(uri, _)| uri.split('?').next() == Some(path))
            .map(|(_, accept)| accept.clone())
            .collect()
    }

    /// (list requests, watch requests) on `path` so far.
    pub fn counts_on(&self, path: &str) -> (usize, usize) {
        let uris = self.requests_on(path);
        let watches = uris.iter().filter(|uri| is_watch(uri)).count();
        (uris.len() - watches, watches)
    }
}

async fn serve(mut handle: Handle, state: Arc<Mutex<State>>, wake: Arc<Notify>) {
    loop {
        tokio::select! {
            request = handle.next_request() => {
                let Some((request, respond)) = request else { return };
                let uri = request.uri();
                let path = uri.path().to_owned();
                let query = uri.query().unwrap_or_default().to_owned();
                let watch = is_watch(&uri.to_string());
                let accept = request
                    .headers()
                    .get(http::header::ACCEPT)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                let mut state = state.lock().unwrap();
                state.requests.push((uri.to_string(), accept));
                state.parked.push((path, query, watch, respond));
                answer_parked(&mut state);
            }
            () = wake.notified() => answer_parked(&mut state.lock().unwrap()),
        }
    }
}

/// Whether a request URI is a watch.
pub fn is_watch(uri: &str) -> bool {
    uri.split_once('?')
        .is_some_and(|(_, q)| q.split('&').any(|p| p == "watch=true"))
}

/// Answers every parked request that can be answered now.
fn answer_parked(state: &mut State) {
    let parked = std::mem::take(&mut state.parked);
    for (path, query, watch, respond) in parked {
        if watch {
            match state.watches.get_mut(&path).and_then(VecDeque::pop_front) {
                Some(WatchReply::Events(events)) => {
                    let body: String = events.iter().map(|e| format!("{e}\n")).collect();
                    respond.send_response(ok(body.into_bytes()));
                }
                Some(WatchReply::Error(code)) => respond.send_response(error(code)),
                None => state.parked.push((path, query, watch, respond)),
            }
        } else if state.held.contains(&path) {
            state.parked.push((path, query, watch, respond));
        } else if let Some(code) = state.list_errors.get_mut(&path).and_then(VecDeque::pop_front) {
            respond.send_response(error(code));
        } else {
            let empty = ("1".to_owned(), Vec::new());
            let (version, items) = state.lists.get(&path).unwrap_or(&empty);
            let page = list_page(&query, version, items);
            respond.send_response(ok(page.to_string().into_bytes()));
        }
    }
}

/// One page of a list, honouring `limit` and `continue` as kube-apiserver does (the continue
/// token here is simply the offset of the next page).
fn list_page(query: &str, version: &str, items: &[Value]) -> Value {
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|p| p.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse::<usize>().ok())
    };
    let start = param("continue").unwrap_or(0).min(items.len());
    let end = param("limit").map_or(items.len(), |limit| (start + limit).min(items.len()));
    let mut metadata = json!({"resourceVersion": version});
    if end < items.len() {
        metadata["continue"] = json!(end.to_string());
    }
    json!({"apiVersion": "v1", "kind": "List", "metadata": metadata, "items": items[start..end]})
}

fn ok(body: Vec<u8>) -> Response<Body> {
    Response::builder().status(200).body(Body::from(body)).unwrap()
}

fn error(code: u16) -> Response<Body> {
    let reason = StatusCode::from_u16(code)
        .unwrap()
        .canonical_reason()
        .unwrap_or("Error");
    let status = json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
        "message": format!("mock: {reason}"), "reason": reason.replace(' ', ""), "code": code});
    Response::builder()
        .status(code)
        .body(Body::from(status.to_string().into_bytes()))
        .unwrap()
}

/// A watch event line.
pub fn event(kind: &str, object: Value) -> Value {
    json!({"type": kind, "object": object})
}

/// A BOOKMARK event at `resource_version`.
pub fn bookmark(api_version: &str, kind: &str, resource_version: &str) -> Value {
    event(
        "BOOKMARK",
        json!({"apiVersion": api_version, "kind": kind, "metadata": {"resourceVersion": resource_version}}),
    )
}

/// The ERROR event kube-apiserver sends when the watched resourceVersion is too old.
pub fn gone() -> Value {
    event(
        "ERROR",
        json!({"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
            "message": "too old resource version: 1 (20)", "reason": "Expired", "code": 410}),
    )
}

/// A running pod on `node`.
pub fn pod(name: &str, resource_version: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "uid": format!("uid-{name}"),
            "resourceVersion": resource_version, "labels": {"app": "web"},
            "managedFields": [{"manager": "kubelet", "operation": "Update"}]},
        "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "nginx"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
}

/// A StatefulSet with `replicas`.
pub fn stateful_set(name: &str, replicas: i64, resource_version: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "shop", "uid": format!("uid-{name}"),
            "resourceVersion": resource_version},
        "spec": {"replicas": replicas, "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": []}}}})
}

/// Waits (up to 5 s) until `condition` holds.
pub async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The gateway's live mode running against a mock; stopped when dropped.
pub struct Live {
    pub model: std::sync::Arc<suture_gateway::model::LiveModel>,
    pub policies: std::sync::Arc<suture_gateway::policies::PolicyReloader>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Live {
    /// Runs `suture_gateway::live::run` with `client` and no file policies.
    pub fn start(client: kube::Client, watch_policies: bool) -> Live {
        Self::start_with(
            client,
            suture_gateway::live::LiveConfig {
                watch_policies,
                ..suture_gateway::live::LiveConfig::default()
            },
        )
    }

    /// Runs `suture_gateway::live::run` with `client`, `config` and no file policies.
    pub fn start_with(client: kube::Client, config: suture_gateway::live::LiveConfig) -> Live {
        use suture_gateway::live::run;
        use suture_gateway::model::LiveModel;
        use suture_gateway::policies::{PolicyReloader, PolicySources};
        let model = std::sync::Arc::new(LiveModel::new());
        let policies = std::sync::Arc::new(PolicyReloader::start(PolicySources::default()).unwrap());
        let task = tokio::spawn({
            let (model, policies) = (model.clone(), policies.clone());
            async move {
                run(client, model, policies, config).await.unwrap();
            }
        });
        Live {
            model,
            policies,
            task,
        }
    }

    /// Names of the model's objects of `group`/`kind`, sorted.
    pub fn names(&self, group: &str, kind: &str) -> Vec<String> {
        use policies_cel::cluster::ClusterView;
        let model = self.model.read();
        let mut names: Vec<String> = model
            .of_kind(group, kind)
            .iter()
            .map(|o| o.key.name.to_string())
            .collect();
        names.sort();
        names
    }
}
