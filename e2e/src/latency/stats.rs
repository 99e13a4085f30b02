//! Order statistics of latency samples: median and p99 (nearest rank), in milliseconds.

use std::time::Duration;

/// A sample set's summary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub samples: usize,
    pub median_ms: f64,
    pub p99_ms: f64,
}

/// The summary of `samples` (`None` when there are none).
pub fn summarize(samples: &[Duration]) -> Option<Summary> {
    let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    Some(Summary {
        samples: ms.len(),
        median_ms: percentile(&ms, 50.0)?,
        p99_ms: percentile(&ms, 99.0)?,
    })
}

/// The nearest-rank percentile `p` of sorted `values`.
fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(values: &[u64]) -> Vec<Duration> {
        values.iter().map(|v| Duration::from_millis(*v)).collect()
    }

    #[test]
    fn the_median_and_p99_are_nearest_ranks() {
        let samples = ms(&(1..=100).rev().collect::<Vec<_>>());
        let summary = summarize(&samples);
        assert_eq!(
            summary,
            Some(Summary {
                samples: 100,
                median_ms: 50.0,
                p99_ms: 99.0
            })
        );
    }

    #[test]
    fn one_sample_is_every_percentile_and_none_is_no_summary() {
        let one = summarize(&ms(&[7])).map(|s| (s.median_ms, s.p99_ms));
        assert_eq!(one, Some((7.0, 7.0)));
        assert_eq!(summarize(&[]), None);
    }
}
