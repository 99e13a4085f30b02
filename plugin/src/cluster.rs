//! The cluster a command sees. Offline commands take `--cluster` snapshots; until the cluster
//! model lands they are refused clearly, and evaluation sees an empty cluster.

use std::path::PathBuf;

use policies_cel::{ClusterView, EmptyCluster};

use crate::exit::Failure;

/// The cluster view for `--cluster PATH...` (an empty cluster when no snapshot is given).
pub fn load(snapshots: &[PathBuf]) -> Result<Box<dyn ClusterView>, Failure> {
    match snapshots.first() {
        None => Ok(Box::new(EmptyCluster)),
        Some(path) => Err(Failure::usage(anyhow::anyhow!(
            "--cluster {}: cluster snapshots are not supported yet (they arrive with the cluster model)",
            path.display()
        ))),
    }
}
