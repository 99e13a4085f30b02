//! The cluster a command sees: `--cluster` snapshots (files or directories of what
//! `kubectl get -o yaml|json` prints) loaded into one model, with a progress bar on stderr for
//! big snapshots when stderr is a terminal; an empty cluster when no snapshot is given.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use policies_cel::cluster::{Progress, load_snapshots};
use policies_cel::{ClusterView, EmptyCluster};

use crate::exit::Failure;

/// Snapshots smaller than this load too fast for a bar to be worth drawing.
const PROGRESS_THRESHOLD_BYTES: u64 = 8 << 20;

/// The cluster view for `--cluster PATH...` (an empty cluster when no snapshot is given).
/// Exit 2 when a snapshot cannot be read or is not valid (the message names file, line and
/// field).
pub fn load(snapshots: &[PathBuf]) -> Result<Box<dyn ClusterView>, Failure> {
    if snapshots.is_empty() {
        return Ok(Box::new(EmptyCluster));
    }
    let paths: Vec<&Path> = snapshots.iter().map(PathBuf::as_path).collect();
    let mut bar = Bar::default();
    let loaded = load_snapshots(&paths, &mut |progress| bar.show(progress));
    if let Some(bar) = bar.bar {
        bar.finish_and_clear();
    }
    let model = loaded.map_err(|error| {
        Failure::usage(anyhow::Error::new(error).context("cannot load the --cluster snapshots"))
    })?;
    Ok(Box::new(model))
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
