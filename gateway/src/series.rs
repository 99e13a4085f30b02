//! Metric series resolved once. A prometheus-client family finds a series by an owned label set
//! (built, hashed with SipHash and dropped on every call); the request path instead keeps each
//! series' handle (counters and histograms share their value with the family's series) under its
//! label values, found by borrowed text with no allocation.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use foldhash::fast::RandomState;

/// Handles by their first label value, each with its second label value.
type ByLabels<T> = HashMap<String, Vec<(&'static str, T)>, RandomState>;

/// Series handles by two label values: the first any text (a policy name), the second one of a
/// few fixed words (a verdict).
#[derive(Debug)]
pub struct Resolved<T> {
    known: RwLock<ByLabels<T>>,
}

impl<T> Default for Resolved<T> {
    fn default() -> Self {
        Self {
            known: RwLock::default(),
        }
    }
}

impl<T: Clone> Resolved<T> {
    /// Applies `act` to the series of (`first`, `second`), asking the family for it with
    /// `resolve` the first time only.
    pub fn with(&self, first: &str, second: &'static str, resolve: impl FnOnce() -> T, act: impl FnOnce(&T)) {
        {
            let known = self.known.read().unwrap_or_else(PoisonError::into_inner);
            if let Some(series) = known
                .get(first)
                .and_then(|seconds| seconds.iter().find(|(word, _)| *word == second))
            {
                act(&series.1);
                return;
            }
        }
        let series = resolve();
        act(&series);
        let mut known = self.known.write().unwrap_or_else(PoisonError::into_inner);
        let seconds = known.entry(first.to_owned()).or_default();
        // Another thread may have resolved the same series meanwhile: keep one handle.
        if !seconds.iter().any(|(word, _)| *word == second) {
            seconds.push((second, series));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use prometheus_client::metrics::counter::Counter;

    use super::*;

    #[test]
    fn a_series_is_resolved_once_and_shares_its_value() {
        let resolved = Resolved::<Counter>::default();
        let family_series = Counter::default();
        let resolutions = Cell::new(0);
        for _ in 0..3 {
            resolved.with(
                "policy",
                "deny",
                || {
                    resolutions.set(resolutions.get() + 1);
                    family_series.clone()
                },
                |counter| {
                    counter.inc();
                },
            );
        }
        assert_eq!(resolutions.get(), 1);
        assert_eq!(family_series.get(), 3, "the family's series counted every call");

        let other = Counter::default();
        resolved.with(
            "policy",
            "pass",
            || other.clone(),
            |c| {
                c.inc();
            },
        );
        resolved.with(
            "another",
            "deny",
            || other.clone(),
            |c| {
                c.inc();
            },
        );
        assert_eq!(other.get(), 2, "another label value is another series");
        assert_eq!(family_series.get(), 3);
    }
}
