//! Listing one resource from the API server: paged (500 objects a page, as kubectl pages),
//! whole objects or metadata only (custom resources: the model keeps only their identity and
//! owners), each stripped on arrival ([`object_json`]: no managedFields, no last-applied
//! annotation, no Secret or ConfigMap values unless asked to keep them).

use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::ApiResource;
use policies_cel::cluster::api::kinds::resource_name;
use policies_cel::cluster::api::strip::{full_json, object_json};
use serde_json::Value;

/// Objects per page.
const PAGE: u32 = 500;

/// What to list.
#[derive(Debug, Clone, Copy)]
pub struct ListRequest<'a> {
    pub resource: &'a ApiResource,
    /// `None`: every namespace (or a cluster-scoped resource).
    pub namespace: Option<&'a str>,
    pub metadata_only: bool,
    /// Keep objects as the API returns them (`snapshot --full`) instead of stripping them.
    pub full: bool,
}

impl ListRequest<'_> {
    /// `pods in prod`, `nodes`, as messages print it.
    pub fn describe(&self) -> String {
        let name = resource_name(self.resource);
        match self.namespace {
            Some(namespace) => format!("{name} in namespace {namespace}"),
            None => name,
        }
    }
}

/// Why a list failed.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// The API server does not serve the resource (HTTP 404): an API not installed.
    #[error("the API server does not serve {0}")]
    NotServed(String),
    #[error("cannot list {what}")]
    Failed {
        what: String,
        #[source]
        source: kube::Error,
    },
}

/// Lists every object of `request`, calling `on_page` with the count so far after each page.
pub async fn list(
    client: &Client,
    request: ListRequest<'_>,
    on_page: &mut dyn FnMut(usize),
) -> Result<Vec<Value>, ListError> {
    let api: Api<DynamicObject> = match request.namespace {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, request.resource),
        None => Api::all_with(client.clone(), request.resource),
    };
    let fail = |source: kube::Error| match &source {
        kube::Error::Api(status) if status.code == 404 => ListError::NotServed(request.describe()),
        _ => ListError::Failed {
            what: request.describe(),
            source,
        },
    };
    let mut objects = Vec::new();
    let mut params = ListParams::default().limit(PAGE);
    loop {
        let next = if request.metadata_only {
            let page = api.list_metadata(&params).await.map_err(fail)?;
            let next = page.metadata.continue_.clone();
            objects.extend(
                page.items
                    .into_iter()
                    .map(|item| object_json(request.resource, item.metadata, Value::Null)),
            );
            next
        } else {
            let page = api.list(&params).await.map_err(fail)?;
            let next = page.metadata.continue_.clone();
            objects.extend(page.items.into_iter().map(|item| {
                if request.full {
                    full_json(request.resource, item.metadata, item.data)
                } else {
                    object_json(request.resource, item.metadata, item.data)
                }
            }));
            next
        };
        on_page(objects.len());
        match next.filter(|token| !token.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(objects),
        }
    }
}
