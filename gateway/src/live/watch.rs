//! One watch: a kube-runtime [`watcher`] over one resource, its events turned into stripped
//! [`Change`]s for a [`Sink`], its health reported to the [`LiveModel`].
//!
//! Errors are retried with kube-runtime's [`DefaultBackoff`] (the parameters of
//! `WatchStreamExt::default_backoff`: 0.8 s doubling to 30 s, with jitter), and every retry after
//! an error starts with a fresh list. That is deliberate: kube-runtime's watcher consumes
//! bookmarks internally, so a watch it silently resumed after an error would give no sign of
//! being healthy again until an object changed, and a quiet kind would look stale for ever. A
//! re-list ends with `InitDone`, a definite sign, and it converges the model (objects deleted
//! while disconnected disappear). A watch request that merely times out is resumed from its last
//! resourceVersion by the watcher itself, without an error and without a re-list.
//!
//! A resource the API server does not serve (404: a CRD not installed, or not yet established)
//! counts as synced and empty, and is retried with the same backoff — after a few quick retries
//! first: a CRD that has just been established is served a moment later (kube-apiserver answers
//! `404 page not found` in between, seen against a real control plane), and until its instances
//! are listed the model would not know them.

use std::pin::pin;
use std::sync::Arc;

use futures::StreamExt;
use kube::Api;
use kube::core::ApiResource;
use kube::runtime::watcher::{self, DefaultBackoff, Event, watcher};
use serde_json::Value;

use crate::live::strip::{Values, Watched, watched_json_with};
use crate::model::LiveModel;

/// What a watch delivers, stripped.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A list starts: objects follow as [`Change::Listed`] until [`Change::ListDone`].
    Listing,
    /// An object of the list in progress.
    Listed(Value),
    /// The list is complete: objects of the kind not listed are gone.
    ListDone,
    /// An object was added or modified.
    Applied(Value),
    /// An object was deleted.
    Deleted {
        /// Empty for cluster-scoped objects.
        namespace: String,
        name: String,
    },
}

/// Where a watch's changes go (the model, the policy set, the CRD instance watchers).
pub trait Sink: Send {
    /// Applies one change. Called once per event, never across an await.
    fn change(&mut self, change: Change);
}

/// One resource to watch.
#[derive(Debug, Clone)]
pub struct Watch<K: Watched> {
    /// The name health is reported under (`pods`, `deployments.apps`).
    pub name: String,
    pub api: Api<K>,
    pub resource: ApiResource,
    pub config: watcher::Config,
    /// What objects keep of Secret and ConfigMap values ([`Values::Keep`] for params).
    pub values: Values,
}

impl<K: Watched> Watch<K> {
    /// A cluster-wide watch of `resource` with bookmarks and the given server-side timeout.
    pub fn all(client: kube::Client, name: String, resource: ApiResource, timeout_secs: u32) -> Self {
        Self {
            name,
            api: Api::all_with(client, &resource),
            resource,
            config: watcher::Config::default().timeout(timeout_secs),
            values: Values::Blank,
        }
    }
}

/// Retries of a resource not (yet) served before the backoff takes over: 2 s in all, each time
/// the resource stops being served.
const QUICK_RETRIES: u32 = 20;
const QUICK_RETRY_DELAY: std::time::Duration = std::time::Duration::from_millis(100);

/// Runs `watch` into `sink` for ever (until the future is dropped), re-listing with backoff
/// after every error. The watch must have been registered with the model beforehand, with what
/// it feeds ([`LiveModel::watch_registered`]), for readiness to wait for it and for its failures
/// to count against the model's currency only when it feeds the model.
pub async fn run<K: Watched>(watch: Watch<K>, model: Arc<LiveModel>, mut sink: impl Sink) {
    let mut backoff = DefaultBackoff::default();
    let mut absent = false;
    let mut quick_retries = 0;
    loop {
        let error = session(&watch, &model, &mut sink, &mut backoff, absent).await;
        absent = is_not_found(&error);
        if absent {
            sink.change(Change::Listing);
            sink.change(Change::ListDone);
            model.watch_synced(&watch.name);
            tracing::debug!(watch = %watch.name, "resource not served by the API server; counted as empty");
        } else {
            let feeds = model.watch_failed(&watch.name, error.to_string());
            if is_expired(&error) {
                tracing::info!(watch = %watch.name, %feeds, "watch expired (410 Gone); re-listing");
            } else {
                tracing::warn!(watch = %watch.name, %feeds, error = %error, effect = feeds.while_failing(),
                    "watch failed; re-listing after backoff");
            }
        }
        if !absent {
            // Served again: a later disappearance (a CRD deleted and re-created) gets its own.
            quick_retries = 0;
        }
        let delay = if absent && quick_retries < QUICK_RETRIES {
            quick_retries += 1;
            QUICK_RETRY_DELAY
        } else {
            backoff.next().unwrap_or(std::time::Duration::from_secs(30))
        };
        tokio::time::sleep(delay).await;
    }
}

/// One watcher stream, from its first list to its first error.
async fn session<K: Watched>(
    watch: &Watch<K>,
    model: &LiveModel,
    sink: &mut impl Sink,
    backoff: &mut DefaultBackoff,
    absent: bool,
) -> watcher::Error {
    let name = &watch.name;
    let mut stream = pin!(watcher(watch.api.clone(), watch.config.clone()));
    loop {
        let event = match stream.next().await {
            Some(Ok(event)) => event,
            Some(Err(error)) => return error,
            // The watcher's stream never ends; if it did, start over.
            None => return watcher::Error::NoResourceVersion,
        };
        match event {
            Event::Init => {
                // Retrying an absent resource: keep it synced (empty) unless it appears.
                if !absent {
                    model.watch_listing(name);
                }
                sink.change(Change::Listing);
            }
            Event::InitApply(object) => sink.change(Change::Listed(watched_json_with(
                &watch.resource,
                object,
                watch.values,
            ))),
            Event::InitDone => {
                sink.change(Change::ListDone);
                model.watch_synced(name);
                kube::runtime::utils::Backoff::reset(backoff);
                tracing::debug!(watch = %name, "list complete");
            }
            Event::Apply(object) => {
                sink.change(Change::Applied(watched_json_with(
                    &watch.resource,
                    object,
                    watch.values,
                )));
                model.watch_event(name);
            }
            Event::Delete(object) => {
                let meta = object.meta();
                sink.change(Change::Deleted {
                    namespace: meta.namespace.clone().unwrap_or_default(),
                    name: meta.name.clone().unwrap_or_default(),
                });
                model.watch_event(name);
            }
        }
    }
}

/// The watched resourceVersion is too old (`410 Gone`): routine, a re-list follows.
fn is_expired(error: &watcher::Error) -> bool {
    matches!(error, watcher::Error::WatchError(status) if status.code == 410)
}

/// The API server does not serve the resource.
fn is_not_found(error: &watcher::Error) -> bool {
    match error {
        watcher::Error::InitialListFailed(kube::Error::Api(status))
        | watcher::Error::WatchStartFailed(kube::Error::Api(status)) => {
            // kube-apiserver's plain-text `404 page not found` (a resource not yet served) has no
            // Status reason: the code says it.
            status.is_not_found() || status.code == 404
        }
        _ => false,
    }
}
