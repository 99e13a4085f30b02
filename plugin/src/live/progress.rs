//! The progress bar of live reads, on stderr and only when stderr is a terminal: one step per
//! list, the resource being listed and the objects read so far.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar over list calls (hidden when stderr is not a terminal).
#[derive(Debug)]
pub struct Bar {
    bar: Option<ProgressBar>,
    objects: usize,
}

impl Bar {
    /// A bar for reads whose number of lists grows as they are planned.
    pub fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            if let Ok(style) =
                ProgressStyle::with_template("reading the cluster {bar:24} {pos}/{len} {wide_msg}")
            {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Bar { bar, objects: 0 }
    }

    /// `lists` more lists are planned.
    pub fn plan(&self, lists: usize) {
        if let Some(bar) = &self.bar {
            bar.inc_length(lists as u64);
        }
    }

    /// A list of `what` has read `count` objects so far.
    pub fn listing(&self, what: &str, count: usize) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{what}: {count} ({} in all)", self.objects + count));
        }
    }

    /// A list finished with `count` objects.
    pub fn listed(&mut self, count: usize) {
        self.objects += count;
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
