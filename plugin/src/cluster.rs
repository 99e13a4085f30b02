//! The cluster a command sees: `--cluster` snapshots (files or directories of what
//! `kubectl get -o yaml|json` prints) loaded into one model, with a progress bar on stderr for
//! big snapshots when stderr is a terminal; else the live cluster of the kubeconfig, read as far
//! as the request reaches ([`crate::live`]); else (no kubeconfig) an empty cluster.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use policies_cel::cluster::{ClusterModel, Progress, load_snapshots_keeping};
use policies_cel::operators::Profiles;
use policies_cel::{ClusterView, EmptyCluster};

use crate::exit::Failure;
use crate::live::scope::{Instances, Namespaces};
use crate::live::{self, Credentials, KubeArgs, ModelSink, Scope};
use crate::whatif::collection::collection;
use crate::whatif::target::{action_targets, manifest_target, target};
use crate::whatif::{Subject, WhatIfArgs};

/// Snapshots smaller than this load too fast for a bar to be worth drawing.
const PROGRESS_THRESHOLD_BYTES: u64 = 8 << 20;

/// The cluster view for `--cluster PATH...` (an empty cluster when no snapshot is given),
/// keeping of operators' kinds what `keep` names. Exit 2 when a snapshot cannot be read or is
/// not valid (the message names file, line and field).
pub fn load(snapshots: &[PathBuf], keep: &Profiles) -> Result<Box<dyn ClusterView>, Failure> {
    if snapshots.is_empty() {
        return Ok(Box::new(EmptyCluster));
    }
    Ok(Box::new(load_model(snapshots, keep)?))
}

/// The model of `--cluster PATH...`, to be changed as a replay goes (empty when no snapshot is
/// given). Errors as [`load`].
pub fn load_model(snapshots: &[PathBuf], keep: &Profiles) -> Result<ClusterModel, Failure> {
    if snapshots.is_empty() {
        let mut model = ClusterModel::new();
        model.keep_for(keep);
        return Ok(model);
    }
    let paths: Vec<&Path> = snapshots.iter().map(PathBuf::as_path).collect();
    let mut bar = Bar::default();
    let loaded = load_snapshots_keeping(&paths, keep, &mut |progress| bar.show(progress));
    if let Some(bar) = bar.bar {
        bar.finish_and_clear();
    }
    loaded.map_err(|error| {
        Failure::usage(anyhow::Error::new(error).context("cannot load the --cluster snapshots"))
    })
}

/// Where a command's cluster comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--cluster` snapshots.
    Snapshots,
    /// The live cluster: no `--cluster`, and a kubeconfig (or a pod's service account).
    Live(Credentials),
    /// Neither: an empty cluster.
    Empty,
}

/// The source for `--cluster PATH...` and kubectl's connection flags.
pub fn source(snapshots: &[PathBuf], kube: &KubeArgs) -> Source {
    if !snapshots.is_empty() {
        return Source::Snapshots;
    }
    live::credentials(kube).map_or(Source::Empty, Source::Live)
}

/// The cluster to judge a what-if `subject` against, and the namespace kubectl defaults to (the
/// context's in live mode, else `None`). Live mode reads the cluster-scoped kinds, then only
/// what a request on the subject can reach (`-A`: everything).
pub fn for_request(
    snapshots: &[PathBuf],
    kube: &KubeArgs,
    all_namespaces: bool,
    subject: &Subject,
    what_if: &WhatIfArgs,
    keep: &Profiles,
) -> Result<(Box<dyn ClusterView>, Option<String>), Failure> {
    let credentials = match source(snapshots, kube) {
        Source::Snapshots => return Ok((load(snapshots, keep)?, None)),
        Source::Empty => return Ok((Box::new(EmptyCluster), None)),
        Source::Live(credentials) => credentials,
    };
    let mut sink = ModelSink::keeping(keep);
    let default_namespace = live::read(kube, &credentials, false, &mut sink, |sink, namespace| {
        if all_namespaces {
            return Scope::everything();
        }
        target(subject, what_if, Some(namespace), &sink.model).map_or_else(Scope::nothing, |target| {
            live::scope::for_target(&target, &sink.model)
        })
    })?;
    Ok((Box::new(sink.finish()), Some(default_namespace)))
}

/// The cluster a what-if collection (`delete pvc -l app=pg`) is judged against, as a model its
/// admitted deletions are carried into, and the namespace kubectl defaults to (the context's in
/// live mode). Live mode reads the cluster-scoped kinds, then the collection's namespace, custom
/// resources included (everything for a cluster-scoped type, and with `-A`).
pub fn for_collection(
    snapshots: &[PathBuf],
    kube: &KubeArgs,
    all_namespaces: bool,
    what_if: &WhatIfArgs,
    keep: &Profiles,
) -> Result<(ClusterModel, Option<String>), Failure> {
    model_reaching(snapshots, kube, all_namespaces, keep, |model, namespace| {
        match collection(what_if, Some(namespace), model) {
            Ok(collection) => match collection.namespace {
                Some(namespace) => Scope {
                    namespaces: Namespaces::Only([namespace].into()),
                    instances: Instances::All,
                },
                None => Scope::everything(),
            },
            // Reported once the cluster is read.
            Err(_) => Scope::nothing(),
        }
    })
}

/// The cluster a file of several manifests is judged against, as a model each admitted request
/// is carried into, and kubectl's default namespace (the context's in live mode). Live mode
/// reads the cluster-scoped kinds, then what each manifest's object can reach (the union of their
/// scopes; everything with `-A`).
pub fn for_manifests(
    snapshots: &[PathBuf],
    kube: &KubeArgs,
    all_namespaces: bool,
    what_if: &WhatIfArgs,
    documents: &[crate::whatif::manifests::Document],
    keep: &Profiles,
) -> Result<(ClusterModel, Option<String>), Failure> {
    model_reaching(snapshots, kube, all_namespaces, keep, |model, namespace| {
        documents
            .iter()
            .filter_map(|document| manifest_target(&document.object, what_if, Some(namespace), model))
            .map(|target| live::scope::for_target(&target, model))
            .fold(Scope::nothing(), Scope::union)
    })
}

/// The cluster several named objects (`delete pod a b`) are judged against, as a model each
/// admitted request is carried into, and kubectl's default namespace (the context's in live
/// mode). Live mode reads the cluster-scoped kinds, then what each object can reach (the union of
/// their scopes; everything with `-A`).
pub fn for_actions(
    snapshots: &[PathBuf],
    kube: &KubeArgs,
    all_namespaces: bool,
    what_if: &WhatIfArgs,
    keep: &Profiles,
) -> Result<(ClusterModel, Option<String>), Failure> {
    model_reaching(snapshots, kube, all_namespaces, keep, |model, namespace| {
        action_targets(what_if, Some(namespace), model)
            .iter()
            .map(|target| live::scope::for_target(target, model))
            .fold(Scope::nothing(), Scope::union)
    })
}

/// The cluster as a model requests are carried into, and the namespace kubectl defaults to (the
/// context's in live mode): the snapshots, else an empty cluster without a kubeconfig, else the
/// live cluster's cluster-scoped kinds and what `reach` says (given them and the context's
/// namespace) the requests can reach — everything with `-A`.
fn model_reaching(
    snapshots: &[PathBuf],
    kube: &KubeArgs,
    all_namespaces: bool,
    keep: &Profiles,
    reach: impl FnOnce(&ClusterModel, &str) -> Scope,
) -> Result<(ClusterModel, Option<String>), Failure> {
    let credentials = match source(snapshots, kube) {
        Source::Snapshots => return Ok((load_model(snapshots, keep)?, None)),
        Source::Empty => return Ok((load_model(&[], keep)?, None)),
        Source::Live(credentials) => credentials,
    };
    let mut sink = ModelSink::keeping(keep);
    let default_namespace = live::read(kube, &credentials, false, &mut sink, |sink, namespace| {
        if all_namespaces {
            Scope::everything()
        } else {
            reach(&sink.model, namespace)
        }
    })?;
    Ok((sink.finish(), Some(default_namespace)))
}

/// The whole live cluster as a model (`test --live`), keeping of operators' kinds what `keep`
/// names. Exit 2 when there is no kubeconfig.
pub fn live_model(kube: &KubeArgs, keep: &Profiles) -> Result<Box<dyn ClusterView>, Failure> {
    let credentials = live::require_credentials(kube)?;
    let mut sink = ModelSink::keeping(keep);
    live::read(kube, &credentials, false, &mut sink, |_, _| Scope::everything())?;
    Ok(Box::new(sink.finish()))
}

/// The progress bar, decided on at the first report (which knows the total).
#[derive(Debug, Default)]
struct Bar {
    decided: bool,
    bar: Option<ProgressBar>,
}

impl Bar {
    fn show(&mut self, progress: Progress) {
        if !self.decided {
            self.decided = true;
            if progress.bytes_total >= PROGRESS_THRESHOLD_BYTES && std::io::stderr().is_terminal() {
                let bar =
                    ProgressBar::with_draw_target(Some(progress.bytes_total), ProgressDrawTarget::stderr());
                if let Ok(style) = ProgressStyle::with_template(
                    "loading snapshots {bar:30} {bytes}/{total_bytes} {wide_msg}",
                ) {
                    bar.set_style(style);
                }
                bar.enable_steady_tick(Duration::from_millis(120));
                self.bar = Some(bar);
            }
        }
        if let Some(bar) = &self.bar {
            bar.set_position(progress.bytes_done);
            bar.set_message(format!("{} objects", progress.objects));
        }
    }
}
