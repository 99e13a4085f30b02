//! The what-if flags `check` and `impact` share: an action on named objects (`delete sts/db`,
//! kubectl's `delete sts db`, several: `delete pod a b`; `scale deploy/web --replicas 0`, `evict
//! pod/web-1`) or on a collection (`delete pvc -l app=pg`), or a plain manifest given with `-f`,
//! and the identity to judge it as, with kubectl's names for the flags.

use clap::{Args, ValueEnum};

/// The identity what-if requests are judged as when `--as` is not given: a service account,
/// because the built-in pack judges service accounts (operators).
pub const DEFAULT_AS: &str = "system:serviceaccount:default:suture-what-if";

/// `--operation` for a manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "UPPER")]
pub enum OperationArg {
    Create,
    Update,
    Delete,
}

/// `--cascade`: how a what-if deletion reaches the object's dependents, with kubectl's names; it is
/// sent as the DELETE's `propagationPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Cascade {
    /// The garbage collector deletes the dependents after the object (kubectl's default)
    #[value(alias = "true")]
    Background,
    /// The object stays, marked for deletion, until its blocking dependents are gone
    Foreground,
    /// The dependents stay, their ownerReferences to the object removed
    #[value(alias = "false")]
    Orphan,
}

impl Cascade {
    /// The DeleteOptions `propagationPolicy` kubectl sends for it.
    pub fn propagation_policy(self) -> &'static str {
        match self {
            Self::Background => "Background",
            Self::Foreground => "Foreground",
            Self::Orphan => "Orphan",
        }
    }
}

/// The what-if arguments.
#[derive(Debug, Clone, Default, Args)]
pub struct WhatIfArgs {
    /// A what-if action instead of -f: `delete TYPE/NAME` or `delete TYPE NAME`, `scale
    /// TYPE/NAME --replicas N`, `evict pod/NAME`; several names are one request each, in order
    /// (`delete pod a b`, `delete pod/a pod/b`); or `delete TYPE -l SELECTOR` (or
    /// --field-selector, --all): a deletecollection
    #[arg(value_name = "ACTION TYPE/NAME|TYPE NAME")]
    pub action: Vec<String>,

    /// For `delete TYPE`: the label selector of the collection to delete, as kubectl takes it
    /// (`app=pg`, `tier in (db,cache)`, `!canary`)
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,

    /// For `delete TYPE`: a field selector on metadata.name or metadata.namespace
    #[arg(long = "field-selector", value_name = "SELECTOR")]
    pub field_selector: Option<String>,

    /// For `delete TYPE`: every object of the type in the namespace
    #[arg(long = "all")]
    pub all: bool,

    /// For deletions: background, foreground or orphan, as `kubectl delete --cascade=...` sends
    /// it (`--cascade` alone: background) [default: background]
    #[arg(
        long = "cascade",
        value_enum,
        value_name = "STRATEGY",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "background"
    )]
    pub cascade: Option<Cascade>,

    /// For deletions: the seconds given to the object to terminate, sent as the DELETE's
    /// gracePeriodSeconds as kubectl sends it (0 becomes 1 without --force) [default: the
    /// object's own]
    #[arg(long = "grace-period", value_name = "SECONDS", allow_negative_numbers = true)]
    pub grace_period: Option<i64>,

    /// For deletions: remove the object at once, without waiting for its node to confirm the
    /// stop (gracePeriodSeconds 0, as `kubectl delete --force`)
    #[arg(long = "force")]
    pub force: bool,

    /// For a manifest given with -f: the operation [default: UPDATE when the object is in the
    /// cluster, else CREATE]
    #[arg(long = "operation", value_enum, value_name = "OPERATION")]
    pub operation: Option<OperationArg>,

    /// For `scale`: the new replica count
    #[arg(long = "replicas", value_name = "N")]
    pub replicas: Option<u32>,

    /// The namespace of the what-if object [default: the manifest's, else the kubeconfig
    /// context's in live mode, else `default`]
    #[arg(short = 'n', long = "namespace", value_name = "NAMESPACE")]
    pub namespace: Option<String>,

    /// Judge the what-if request as this user, e.g. system:serviceaccount:databases:pg-operator
    /// [default: system:serviceaccount:default:suture-what-if]
    #[arg(long = "as", value_name = "USER")]
    pub as_user: Option<String>,

    /// Groups of the --as user (repeatable)
    #[arg(long = "as-group", value_name = "GROUP")]
    pub as_group: Vec<String>,
}

impl WhatIfArgs {
    /// The namespace of a namespaced what-if object: `-n`, else the manifest's (`manifest`; one
    /// that differs from `-n` is refused before, as kubectl does), else `default_namespace` (the
    /// kubeconfig context's in live mode), else `default`.
    pub fn namespace_for(&self, manifest: Option<&str>, default_namespace: Option<&str>) -> String {
        self.namespace
            .as_deref()
            .or(manifest)
            .or(default_namespace)
            .unwrap_or("default")
            .to_owned()
    }

    /// True when any what-if flag was given (they need a manifest or an action).
    pub fn any(&self) -> bool {
        !self.action.is_empty()
            || self.operation.is_some()
            || self.replicas.is_some()
            || self.cascade.is_some()
            || self.grace_period.is_some()
            || self.force
            || self.selects()
    }

    /// The DeleteOptions fields `--cascade`, `--grace-period` and `--force` set for a what-if
    /// DELETE (none: kubectl's default, Background and the object's own grace period, which the
    /// review builder sends).
    pub fn delete_options(&self) -> Option<serde_json::Value> {
        let mut options = serde_json::Map::new();
        if let Some(cascade) = self.cascade {
            options.insert("propagationPolicy".into(), cascade.propagation_policy().into());
        }
        if let Some(seconds) = self.grace_period_seconds() {
            options.insert("gracePeriodSeconds".into(), seconds.into());
        }
        (!options.is_empty()).then_some(serde_json::Value::Object(options))
    }

    /// The gracePeriodSeconds kubectl sends: `--force` without a grace period is 0; 0 without
    /// `--force` becomes 1 (kubectl's guard against an accidental immediate deletion); a negative
    /// one is the object's own (none sent).
    fn grace_period_seconds(&self) -> Option<i64> {
        match (self.grace_period, self.force) {
            (None, true) => Some(0),
            (Some(seconds), true) if seconds < 0 => Some(0),
            (Some(0), false) => Some(1),
            (Some(seconds), _) if seconds >= 0 => Some(seconds),
            _ => None,
        }
    }

    /// Refuses the deletion flags (`--cascade`, `--grace-period`, `--force`) for a request that
    /// deletes nothing.
    pub fn deletion_only(&self, what: &str) -> anyhow::Result<()> {
        let flag = if self.cascade.is_some() {
            "--cascade"
        } else if self.grace_period.is_some() {
            "--grace-period"
        } else if self.force {
            "--force"
        } else {
            return Ok(());
        };
        anyhow::bail!("{flag} applies to deletions, not to {what}")
    }

    /// True when a collection is selected (`-l`, `--field-selector`, `--all`).
    pub fn selects(&self) -> bool {
        self.selector.is_some() || self.field_selector.is_some() || self.all
    }
}
