//! The flags `check` and `impact` share to say what to judge and against which cluster: `-f`
//! or a what-if action, and `--cluster` snapshots or the live cluster (kubectl's connection
//! flags, `-A`).

use std::path::PathBuf;

use clap::Args;
use policies_cel::cluster::ClusterModel;
use policies_cel::operators::Profiles;
use policies_cel::{ClusterView, Request};

use crate::cluster;
use crate::exit::Failure;
use crate::live::KubeArgs;
use crate::review::RequestSpec;
use crate::whatif::collection::{self, Collection};
use crate::whatif::{self, Subject, WhatIfArgs};

/// What to judge, and the cluster to judge it against.
#[derive(Debug, Clone, Default, Args)]
pub struct RequestArgs {
    /// The AdmissionReview (admission.k8s.io/v1) as recorded, or plain manifests to create,
    /// update or delete, one request each in order (JSON or YAML, several documents or a `kind:
    /// List`, or a directory of such files; `-` reads stdin)
    #[arg(short = 'f', long = "filename", value_name = "REVIEW|MANIFEST")]
    pub filename: Option<PathBuf>,

    #[command(flatten)]
    pub what_if: WhatIfArgs,

    /// Cluster snapshot file or directory, as `kubectl get -o yaml|json` or `kubectl suture
    /// snapshot` writes it (repeatable). Without it the kubeconfig's cluster is read (only what
    /// the request can reach; -A for everything), or an empty cluster when there is no kubeconfig
    #[arg(long = "cluster", value_name = "PATH")]
    pub cluster: Vec<PathBuf>,

    #[command(flatten)]
    pub kube: KubeArgs,

    /// Live mode: read every namespace, not only the ones the request reaches
    #[arg(short = 'A', long = "all-namespaces")]
    pub all_namespaces: bool,
}

impl RequestArgs {
    /// Reads `-f` (or takes the action): cheap, so usage errors come before any cluster read.
    pub fn subject(&self) -> Result<Subject, Failure> {
        Subject::read(self.filename.as_deref(), &self.what_if)
    }

    /// Refuses `--cluster` given with the live cluster's flags.
    pub fn one_cluster(&self) -> Result<(), Failure> {
        if !self.cluster.is_empty() && (self.kube.explicit() || self.all_namespaces) {
            return Err(Failure::usage(anyhow::anyhow!(
                "--cluster judges against a snapshot; --kubeconfig, --context and -A are for the live cluster: give one or the other"
            )));
        }
        Ok(())
    }

    /// A what-if collection: the cluster as a model its deletions are carried into, what the
    /// collection selects in it, and the DELETE of each selected object. The model keeps, of
    /// operators' kinds, what `keep` names (here and below).
    pub fn resolve_collection(
        &self,
        keep: &Profiles,
    ) -> Result<(ClusterModel, Collection, Vec<RequestSpec>), Failure> {
        self.one_cluster()?;
        let (model, default_namespace) = cluster::for_collection(
            &self.cluster,
            &self.kube,
            self.all_namespaces,
            &self.what_if,
            keep,
        )?;
        let selected = collection::collection(&self.what_if, default_namespace.as_deref(), &model)
            .map_err(Failure::usage)?;
        let specs = collection::requests(&selected, &self.what_if, &model);
        Ok((model, selected, specs))
    }

    /// A file of several manifests: the cluster as a model their requests are carried into, and
    /// the namespace of objects that name none (`-n`'s is applied when the requests are built).
    pub fn resolve_manifests(
        &self,
        documents: &[crate::whatif::manifests::Document],
        keep: &Profiles,
    ) -> Result<(ClusterModel, Option<String>), Failure> {
        self.one_cluster()?;
        cluster::for_manifests(
            &self.cluster,
            &self.kube,
            self.all_namespaces,
            &self.what_if,
            documents,
            keep,
        )
    }

    /// Several named objects (`delete pod a b`): the cluster as a model their requests are carried
    /// into, and the namespace of namespaced objects when `-n` is not given.
    pub fn resolve_actions(&self, keep: &Profiles) -> Result<(ClusterModel, Option<String>), Failure> {
        self.one_cluster()?;
        cluster::for_actions(
            &self.cluster,
            &self.kube,
            self.all_namespaces,
            &self.what_if,
            keep,
        )
    }

    /// The cluster and the request to judge against it.
    pub fn resolve(
        &self,
        subject: &Subject,
        keep: &Profiles,
    ) -> Result<(Box<dyn ClusterView>, Request), Failure> {
        self.one_cluster()?;
        let (cluster, default_namespace) = cluster::for_request(
            &self.cluster,
            &self.kube,
            self.all_namespaces,
            subject,
            &self.what_if,
            keep,
        )?;
        let request = whatif::request(
            subject,
            &self.what_if,
            default_namespace.as_deref(),
            cluster.as_ref(),
        )?;
        Ok((cluster, request))
    }
}
