//! Live cluster mode: the cluster read through kube's client instead of a snapshot, for
//! `check`, `impact`, `test` and `snapshot`.
//!
//! Credentials are resolved as kubectl does ([`client`], flags in [`args`]); [`read`] then
//! reads the cluster-scoped kinds first (Namespaces, Nodes, PersistentVolumes, CRDs), then only
//! the namespaces and custom resources the request can reach ([`scope`]); every list is paged
//! and stripped on arrival ([`list`]), with a progress bar on a terminal ([`progress`]).

pub mod args;
pub mod client;
pub mod list;
mod progress;
pub mod scope;

use std::collections::BTreeMap;

use anyhow::Context as _;
use kube::core::ApiResource;
use policies_cel::cluster::ClusterModel;
use policies_cel::cluster::api::kinds::{self, instance_resource};
use serde_json::Value;

pub use args::KubeArgs;
pub use client::{Credentials, credentials};
pub use scope::{Instances, Namespaces, Scope, Target};

use crate::exit::Failure;
use list::{ListError, ListRequest};

/// The credentials live mode would use (see [`credentials`]); exit 2 naming how to give a
/// kubeconfig when there are none.
pub fn require_credentials(kube: &KubeArgs) -> Result<Credentials, Failure> {
    credentials(kube).ok_or_else(|| {
        Failure::usage(anyhow::anyhow!(
            "no kubeconfig: give --kubeconfig, set $KUBECONFIG, or create ~/.kube/config"
        ))
    })
}

/// What receives the objects a live read lists.
pub trait Sink {
    /// Takes one object, as listed (stripped unless `full`).
    fn add(&mut self, object: Value);
}

impl Sink for Vec<Value> {
    fn add(&mut self, object: Value) {
        self.push(object);
    }
}

impl Sink for ModelSink {
    fn add(&mut self, object: Value) {
        ModelSink::add(self, object);
    }
}

/// Reads the cluster of `kube` into `sink` through one connection: the cluster-scoped kinds
/// first, then the namespaced kinds and custom resources of the scope `reach` decides from what
/// `sink` holds by then and the context's namespace. `full` keeps objects as the API returns
/// them (`snapshot --full`). Returns the context's namespace (`default` when it names none).
/// Exit 2 when the cluster cannot be reached or read.
pub fn read<S: Sink>(
    kube: &KubeArgs,
    credentials: &Credentials,
    full: bool,
    sink: &mut S,
    reach: impl FnOnce(&S, &str) -> Scope,
) -> Result<String, Failure> {
    let mut connection = Connection::open(kube, credentials, full)?;
    connection.read_cluster_scoped(&mut |object| sink.add(object))?;
    let default_namespace = connection.default_namespace().to_owned();
    let scope = reach(sink, &default_namespace);
    connection.read_scope(&scope, &mut |object| sink.add(object))?;
    connection.finish();
    Ok(default_namespace)
}

/// A CRD read with the cluster-scoped kinds: the resource its instances are listed through.
#[derive(Debug, Clone)]
struct CustomResource {
    resource: ApiResource,
    namespaced: bool,
}

/// An open connection to a cluster and the objects read through it.
struct Connection {
    runtime: tokio::runtime::Runtime,
    client: kube::Client,
    bar: progress::Bar,
    /// Keep objects as the API returns them (`snapshot --full`).
    full: bool,
    /// The custom resources of the CRDs read so far.
    crds: Vec<CustomResource>,
    /// Lists of resources the server does not serve, reported once at the end.
    not_served: Vec<String>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("namespace", &self.default_namespace())
            .field("crds", &self.crds.len())
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Connects with `args` (nothing is read yet). Exit 2 when the kubeconfig cannot be used.
    fn open(args: &KubeArgs, credentials: &Credentials, full: bool) -> Result<Self, Failure> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the runtime of the Kubernetes client")
            .map_err(Failure::usage)?;
        let client = runtime
            .block_on(client::client(args, credentials))
            .map_err(Failure::usage)?;
        Ok(Connection {
            runtime,
            client,
            bar: progress::Bar::new(),
            full,
            crds: Vec::new(),
            not_served: Vec::new(),
        })
    }

    /// The namespace of the kubeconfig's context (`default` when it names none).
    fn default_namespace(&self) -> &str {
        self.client.default_namespace()
    }

    /// Reads the cluster-scoped kinds into `sink`.
    fn read_cluster_scoped(&mut self, sink: &mut dyn FnMut(Value)) -> Result<(), Failure> {
        let resources: Vec<ApiResource> = kinds::builtin()
            .into_iter()
            .filter(|r| kinds::is_cluster_scoped(&r.kind))
            .collect();
        self.bar.plan(resources.len());
        for resource in &resources {
            let is_crd = resource.kind == "CustomResourceDefinition";
            let objects = self.list(ListRequest {
                resource,
                namespace: None,
                metadata_only: false,
                full: self.full,
            })?;
            for object in objects {
                if is_crd && let Some((_, resource)) = instance_resource(&object) {
                    self.crds.push(CustomResource {
                        resource,
                        namespaced: object["spec"]["scope"] == "Namespaced",
                    });
                }
                sink(object);
            }
        }
        Ok(())
    }

    /// Reads the namespaced kinds and custom resources of `scope` into `sink`.
    fn read_scope(&mut self, scope: &Scope, sink: &mut dyn FnMut(Value)) -> Result<(), Failure> {
        let namespaced: Vec<ApiResource> = kinds::builtin()
            .into_iter()
            .filter(|r| !kinds::is_cluster_scoped(&r.kind))
            .collect();
        let instances: &[CustomResource] = match scope.instances {
            Instances::All => &self.crds,
            Instances::None => &[],
        };
        let namespaces: Vec<Option<String>> = match &scope.namespaces {
            Namespaces::All => vec![None],
            Namespaces::Only(names) => names.iter().cloned().map(Some).collect(),
        };
        let mut requests: Vec<(ApiResource, Option<String>, bool)> = Vec::new();
        for namespace in &namespaces {
            for resource in &namespaced {
                requests.push((resource.clone(), namespace.clone(), false));
            }
            for crd in instances.iter().filter(|crd| crd.namespaced) {
                requests.push((crd.resource.clone(), namespace.clone(), true));
            }
        }
        if !namespaces.is_empty() {
            for crd in instances.iter().filter(|crd| !crd.namespaced) {
                requests.push((crd.resource.clone(), None, true));
            }
        }
        self.bar.plan(requests.len());
        for (resource, namespace, metadata_only) in &requests {
            let objects = self.list(ListRequest {
                resource,
                namespace: namespace.as_deref(),
                metadata_only: *metadata_only,
                full: self.full,
            })?;
            objects.into_iter().for_each(&mut *sink);
        }
        Ok(())
    }

    /// Ends the reads: clears the bar and warns of resources the server does not serve.
    fn finish(&self) {
        self.bar.finish();
        for what in &self.not_served {
            eprintln!("warning: the API server does not serve {what}; read as empty");
        }
    }

    /// One list, paged; a resource the server does not serve reads as empty (and is reported).
    fn list(&mut self, request: ListRequest<'_>) -> Result<Vec<Value>, Failure> {
        let what = request.describe();
        let bar = &self.bar;
        let listed = self
            .runtime
            .block_on(list::list(&self.client, request, &mut |count| {
                bar.listing(&what, count)
            }));
        match listed {
            Ok(objects) => {
                self.bar.listed(objects.len());
                Ok(objects)
            }
            Err(ListError::NotServed(what)) => {
                self.bar.listed(0);
                self.not_served.push(what);
                Ok(Vec::new())
            }
            Err(error) => {
                self.bar.finish();
                Err(Failure::usage(anyhow::Error::new(error)))
            }
        }
    }
}

/// A model filled from a connection's reads, counting what it could not project.
#[derive(Debug, Default)]
pub struct ModelSink {
    pub model: ClusterModel,
    /// Objects that could not be read into the model, with the reason.
    pub skipped: BTreeMap<String, String>,
}

impl ModelSink {
    /// An empty sink whose model keeps, of operators' kinds, what `profiles` name.
    pub fn keeping(profiles: &policies_cel::operators::Profiles) -> Self {
        let mut sink = Self::default();
        sink.model.keep_for(profiles);
        sink
    }

    /// Projects `object` into the model; an object that cannot be projected is skipped (see
    /// [`ModelSink::finish`]).
    pub fn add(&mut self, object: Value) {
        if let Err(error) = self.model.insert_json(&object) {
            let name = format!(
                "{} {}/{}",
                object["kind"].as_str().unwrap_or("object"),
                object["metadata"]["namespace"].as_str().unwrap_or(""),
                object["metadata"]["name"].as_str().unwrap_or("?")
            );
            self.skipped.insert(name, error.to_string());
        }
    }

    /// The model, once the reads are over: each skipped object is reported on stderr (after
    /// the progress bar is gone).
    pub fn finish(self) -> ClusterModel {
        for (name, reason) in &self.skipped {
            eprintln!("warning: skipped {name}: {reason}");
        }
        self.model
    }
}
