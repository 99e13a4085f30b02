//! A mock Kubernetes API server on loopback for live mode: it serves the objects of snapshot
//! files through the real list endpoints (`/api/v1/...`, `/apis/GROUP/VERSION/...`, namespaced
//! or not), pages them (`limit`/`continue`, at most 7 a page so paging is exercised), answers
//! metadata-only lists (`as=PartialObjectMetadataList`), 404s what it does not serve, 403s the
//! paths it is told to forbid, and records every request. It is not a Kubernetes API server:
//! it implements only the GET lists that `kubectl suture` makes, with kubectl's wire format.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use policies_cel::cluster::api::kinds;
use serde::Deserialize as _;
use serde_json::{Value, json};

/// Objects per page at most, whatever `limit` asks.
const MAX_PAGE: usize = 7;

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub query: String,
    pub metadata_only: bool,
}

#[derive(Debug, Default)]
struct State {
    objects: Vec<Value>,
    /// Resources answered with 403 (`secrets`, `statefulsets.apps`).
    forbidden: Vec<String>,
    requests: Vec<Recorded>,
}

/// A running mock API server; it stops with the test process.
#[derive(Debug)]
pub struct MockApi {
    address: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl MockApi {
    /// Serves the objects of `snapshots` (YAML Lists or multi-document files).
    pub fn serve(snapshots: &[&Path]) -> Self {
        let mut objects = Vec::new();
        for path in snapshots {
            let text = std::fs::read_to_string(path).unwrap();
            for document in serde_yaml_ng::Deserializer::from_str(&text) {
                let value = Value::deserialize(document).unwrap();
                match value["kind"].as_str() {
                    Some("List") => objects.extend(value["items"].as_array().cloned().unwrap_or_default()),
                    Some(_) => objects.push(value),
                    None => {}
                }
            }
        }
        let state = Arc::new(Mutex::new(State {
            objects,
            ..State::default()
        }));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let address = listener.local_addr().unwrap();
        let served = state.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        continue;
                    };
                    let state = served.clone();
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |request| {
                            let state = state.clone();
                            async move { Ok::<_, Infallible>(answer(&state, &request)) }
                        });
                        let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
            });
        });
        MockApi { address, state }
    }

    /// Answers 403 Forbidden to lists of `resource` (`secrets`, `statefulsets.apps`).
    pub fn forbid(&self, resource: &str) {
        self.state.lock().unwrap().forbidden.push(resource.to_owned());
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Writes a kubeconfig for this server into `dir`, its context's namespace `namespace`.
    pub fn kubeconfig(&self, dir: &Path, namespace: &str) -> PathBuf {
        let path = dir.join("kubeconfig");
        let text = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: mock\n\
             clusters:\n- name: mock\n  cluster: {{server: \"http://{}\"}}\n\
             users:\n- name: me\n  user: {{token: not-a-real-token}}\n\
             contexts:\n- name: mock\n  context: {{cluster: mock, user: me, namespace: {namespace}}}\n\
             - name: other\n  context: {{cluster: mock, user: me, namespace: other}}\n",
            self.address
        );
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// The parts of a list path.
struct ListPath<'a> {
    group: &'a str,
    namespace: Option<&'a str>,
    plural: &'a str,
}

fn parse_path(path: &str) -> Option<ListPath<'_>> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, rest) = match parts.as_slice() {
        ["api", "v1", rest @ ..] => ("", rest),
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => return None,
    };
    match rest {
        [plural] => Some(ListPath {
            group,
            namespace: None,
            plural,
        }),
        ["namespaces", namespace, plural] => Some(ListPath {
            group,
            namespace: Some(namespace),
            plural,
        }),
        _ => None,
    }
}

fn answer(state: &Mutex<State>, request: &Request<Incoming>) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or_default().to_owned();
    let metadata_only = request
        .headers()
        .get("accept")
        .and_then(|a| a.to_str().ok())
        .is_some_and(|a| a.contains("as=PartialObjectMetadataList"));
    let mut state = state.lock().unwrap();
    state.requests.push(Recorded {
        path: path.clone(),
        query: query.clone(),
        metadata_only,
    });
    let Some(list) = parse_path(&path).filter(|_| request.method() == hyper::Method::GET) else {
        return status(
            StatusCode::NOT_FOUND,
            "NotFound",
            "the server could not find the requested resource",
        );
    };
    let resource = if list.group.is_empty() {
        list.plural.to_owned()
    } else {
        format!("{}.{}", list.plural, list.group)
    };
    if state.forbidden.contains(&resource) {
        return status(
            StatusCode::FORBIDDEN,
            "Forbidden",
            &format!(
                "{resource} is forbidden: User \"me\" cannot list resource \"{}\"",
                list.plural
            ),
        );
    }
    let plurals = plurals(&state.objects);
    let Some(kind) = plurals.get(&(list.group.to_owned(), list.plural.to_owned())) else {
        return status(
            StatusCode::NOT_FOUND,
            "NotFound",
            "the server could not find the requested resource",
        );
    };
    let matching: Vec<&Value> = state
        .objects
        .iter()
        .filter(|o| group_of(o) == list.group && o["kind"] == kind.as_str())
        .filter(|o| list.namespace.is_none_or(|ns| o["metadata"]["namespace"] == ns))
        .collect();
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|pair| pair.strip_prefix(&format!("{name}=")))
            .map(str::to_owned)
    };
    let start: usize = param("continue").and_then(|c| c.parse().ok()).unwrap_or(0);
    let limit: usize = param("limit")
        .and_then(|l| l.parse().ok())
        .unwrap_or(usize::MAX)
        .min(MAX_PAGE);
    let end = (start + limit).min(matching.len());
    let items: Vec<Value> = matching[start.min(end)..end]
        .iter()
        .map(|o| {
            if metadata_only {
                json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata", "metadata": o["metadata"]})
            } else {
                let mut item = (*o).clone();
                if let Some(fields) = item.as_object_mut() {
                    fields.remove("apiVersion");
                    fields.remove("kind");
                }
                item
            }
        })
        .collect();
    let continue_token = if end < matching.len() {
        end.to_string()
    } else {
        String::new()
    };
    let (api_version, list_kind) = if metadata_only {
        (
            "meta.k8s.io/v1".to_owned(),
            "PartialObjectMetadataList".to_owned(),
        )
    } else {
        let version = state
            .objects
            .iter()
            .find(|o| group_of(o) == list.group && o["kind"] == kind.as_str())
            .and_then(|o| o["apiVersion"].as_str())
            .unwrap_or("v1")
            .to_owned();
        (version, format!("{kind}List"))
    };
    let body = json!({
        "apiVersion": api_version,
        "kind": list_kind,
        "metadata": {"resourceVersion": "1000", "continue": continue_token},
        "items": items,
    });
    Response::builder()
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

/// A Status answer, as the API server sends errors.
fn status(code: StatusCode, reason: &str, message: &str) -> Response<Full<Bytes>> {
    let body = json!({"apiVersion": "v1", "kind": "Status", "status": "Failure",
        "message": message, "reason": reason, "code": code.as_u16()});
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

fn group_of(object: &Value) -> &str {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// (group, plural) → kind for the built-in kinds live mode lists (the same table, so a kind
/// added to it is served here too) and the CRDs among `objects`.
fn plurals(objects: &[Value]) -> BTreeMap<(String, String), String> {
    let mut plurals: BTreeMap<(String, String), String> = kinds::builtin()
        .into_iter()
        .map(|r| ((r.group, r.plural), r.kind))
        .collect();
    for crd in objects.iter().filter(|o| o["kind"] == "CustomResourceDefinition") {
        let spec = &crd["spec"];
        if let (Some(group), Some(plural), Some(kind)) = (
            spec["group"].as_str(),
            spec["names"]["plural"].as_str(),
            spec["names"]["kind"].as_str(),
        ) {
            plurals.insert((group.to_owned(), plural.to_owned()), kind.to_owned());
        }
    }
    plurals
}
