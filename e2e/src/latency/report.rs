//! The latency report (Markdown): per request kind, the median and p99 of each admission setup
//! and what each adds to the median with no admission webhook; then Suture's own cost, judging
//! over the no-op webhook (the hop itself is not Suture's to save), also as the median of the
//! paired differences; with a baseline build timed beside this one, what this build costs
//! against it, request beside request; and each judging gateway's own time.

use std::fmt::Write;

use super::requests::RequestKind;
use super::setups::Setup;
use super::stats::{Summary, summarize};
use super::{Measured, Samples};

/// Where and how the figures were taken (the report's preamble).
#[derive(Debug, Clone)]
pub struct Context {
    pub kubernetes: String,
    pub cores: usize,
    pub samples: usize,
    /// Which gateway builds were timed (e.g. profile-guided), said before the tables.
    pub builds: Option<String>,
}

fn summary(samples: &Samples, setup: Setup, kind: RequestKind) -> Option<Summary> {
    samples.get(&(setup, kind)).and_then(|s| summarize(s))
}

/// The median of `a`'s samples minus `b`'s taken beside them (the same iteration), in ms.
fn paired_median(samples: &Samples, (a, b): (Setup, Setup), kind: RequestKind) -> Option<f64> {
    let (a, b) = (samples.get(&(a, kind))?, samples.get(&(b, kind))?);
    let mut differences: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(a, b)| (a.as_secs_f64() - b.as_secs_f64()) * 1000.0)
        .collect();
    differences.sort_by(f64::total_cmp);
    differences.get(differences.len().checked_sub(1)? / 2).copied()
}

fn signed(ms: f64) -> String {
    format!("{ms:+.3}")
}

/// Which build a judging setup runs, as the gateway tables name it.
fn build_label(setup: Setup) -> &'static str {
    match setup {
        Setup::Baseline => "baseline",
        _ => "this build",
    }
}

/// This build against the baseline build, both judging: each over the no-op webhook, and this
/// build minus the baseline, as medians of paired differences (requests sent side by side).
fn against_baseline(out: &mut String, measured: &Measured) {
    let samples = &measured.samples;
    let _ = writeln!(
        out,
        "\nThis build against the baseline (`bench-baseline` through its own copy of the webhook), \
         both judging with the pack and impact (paired medians: each request against the one sent \
         beside it; negative: this build's setup is faster):\n"
    );
    let _ = writeln!(
        out,
        "| request | baseline over no-op | this build over no-op | this build − baseline |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|");
    let paired = |pair, kind| paired_median(samples, pair, kind).map_or_else(|| "—".to_owned(), signed);
    for kind in RequestKind::ALL {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            kind.label(),
            paired((Setup::Baseline, Setup::NoopWebhook), kind),
            paired((Setup::Judging, Setup::NoopWebhook), kind),
            paired((Setup::Judging, Setup::Baseline), kind),
        );
    }
}

/// The Markdown report of what was measured.
pub fn markdown(measured: &Measured, context: &Context) -> String {
    let samples = &measured.samples;
    let mut out = String::new();
    if let Some(builds) = &context.builds {
        let _ = writeln!(out, "Gateway builds: {builds}.\n");
    }
    if !measured.kept_warm.is_empty() {
        let said: Vec<String> = measured
            .kept_warm
            .iter()
            .map(|(setup, period)| match period {
                Some(period) => format!("{} `--keep-warm={period}`", build_label(*setup)),
                None => format!("{} off", build_label(*setup)),
            })
            .collect();
        let _ = writeln!(
            out,
            "Judged path kept warm between requests: {}.\n",
            said.join(", the ")
        );
    }
    let _ = writeln!(
        out,
        "Dry-run requests timed at the client, through kube-apiserver {} on loopback ({} \
         cores): {} per setup and request, the setups alternating request by request (each \
         setup's identity is matched by its admission alone). Milliseconds.\n",
        context.kubernetes, context.cores, context.samples
    );
    let _ = writeln!(out, "| request | admission | median | p99 | median added |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|");
    for kind in RequestKind::ALL {
        let base = summary(samples, Setup::NoAdmission, kind);
        for setup in Setup::ALL {
            let Some(s) = summary(samples, setup, kind) else {
                continue;
            };
            let added = match (setup, base) {
                (Setup::NoAdmission, _) | (_, None) => "—".to_owned(),
                (_, Some(b)) => signed(s.median_ms - b.median_ms),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {:.3} | {:.3} | {added} |",
                kind.label(),
                setup.label(),
                s.median_ms,
                s.p99_ms
            );
        }
    }
    let _ = writeln!(
        out,
        "\nSuture's own cost (judging over the no-op webhook): the difference of the medians, and \
         the median of the paired differences (each judged request against the no-op one sent \
         beside it):\n"
    );
    let _ = writeln!(out, "| request | median | paired median | p99 |");
    let _ = writeln!(out, "|---|---:|---:|---:|");
    for kind in RequestKind::ALL {
        if let (Some(j), Some(n)) = (
            summary(samples, Setup::Judging, kind),
            summary(samples, Setup::NoopWebhook, kind),
        ) {
            let paired = paired_median(samples, (Setup::Judging, Setup::NoopWebhook), kind)
                .map_or_else(|| "—".to_owned(), signed);
            let _ = writeln!(
                out,
                "| {} | {} | {paired} | {} |",
                kind.label(),
                signed(j.median_ms - n.median_ms),
                signed(j.p99_ms - n.p99_ms)
            );
        }
    }
    if measured
        .samples
        .keys()
        .any(|(setup, _)| *setup == Setup::Baseline)
    {
        against_baseline(&mut out, measured);
    }
    let _ = writeln!(
        out,
        "\nInside the judging gateway (its decision log's `latencyUs`: body read to answer, the \
         timed requests only):\n"
    );
    let _ = writeln!(out, "| request | gateway | median | p99 | evaluated |");
    let _ = writeln!(out, "|---|---|---:|---:|---|");
    for kind in RequestKind::ALL {
        for (setup, inside) in &measured.inside {
            let Some(s) = inside.times.get(&kind).and_then(|t| summarize(t)) else {
                continue;
            };
            let lanes = inside
                .lanes
                .get(&kind)
                .map(|lanes| {
                    lanes
                        .iter()
                        .map(|(lane, count)| format!("{lane} {count}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "| {} | {} | {:.3} | {:.3} | {lanes} |",
                kind.label(),
                build_label(*setup),
                s.median_ms,
                s.p99_ms
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Three samples per setup on a 2-core machine.
    fn context() -> Context {
        Context {
            kubernetes: "v1.36.2".to_owned(),
            cores: 2,
            samples: 3,
            builds: None,
        }
    }

    #[test]
    fn each_setup_is_reported_with_what_it_adds_and_suture_over_the_noop() {
        let mut measured = Measured::default();
        let ms = |v: u64| vec![Duration::from_micros(v); 3];
        for kind in RequestKind::ALL {
            let samples = &mut measured.samples;
            samples.insert((Setup::NoAdmission, kind), ms(2000));
            samples.insert((Setup::Vap, kind), ms(2100));
            samples.insert((Setup::NoopWebhook, kind), ms(2700));
            samples.insert((Setup::Judging, kind), ms(2750));
            let inside = measured.inside.entry(Setup::Judging).or_default();
            inside.times.insert(kind, ms(40));
            inside
                .lanes
                .insert(kind, [("inline".to_owned(), 3)].into_iter().collect());
        }
        let text = markdown(&measured, &context());
        assert!(
            text.contains("| scale StatefulSet | Suture judging (pack + impact) | 2.750 | 2.750 | +0.750 |"),
            "{text}"
        );
        assert!(
            text.contains("| delete Pod | no admission webhook | 2.000 | 2.000 | — |"),
            "{text}"
        );
        assert!(
            text.contains("| create Deployment | +0.050 | +0.050 | +0.050 |"),
            "{text}"
        );
        assert!(
            text.contains("| delete Pod | this build | 0.040 | 0.040 | inline 3 |"),
            "{text}"
        );
        assert!(!text.contains("baseline"), "no baseline was timed: {text}");
        assert!(!text.contains("Gateway builds"), "no build was named: {text}");
        let named = Context {
            builds: Some("profile-guided (scripts/pgo-build.sh)".to_owned()),
            ..context()
        };
        let text = markdown(&measured, &named);
        assert!(
            text.starts_with("Gateway builds: profile-guided (scripts/pgo-build.sh).\n\nDry-run requests"),
            "{text}"
        );
    }

    #[test]
    fn a_baseline_build_is_compared_request_beside_request() {
        let mut measured = Measured::default();
        let ms = |values: &[u64]| values.iter().map(|v| Duration::from_micros(*v)).collect();
        let kind = RequestKind::DeletePod;
        let samples = &mut measured.samples;
        samples.insert((Setup::NoopWebhook, kind), ms(&[2500, 3500, 2600]));
        // Over the no-op, request by request: the baseline +300, +200, +300; this build +200,
        // +150, +200; this build against the baseline -100, -50, -100.
        samples.insert((Setup::Baseline, kind), ms(&[2800, 3700, 2900]));
        samples.insert((Setup::Judging, kind), ms(&[2700, 3650, 2800]));
        measured
            .inside
            .entry(Setup::Baseline)
            .or_default()
            .times
            .insert(kind, ms(&[150]));
        let text = markdown(&measured, &context());
        assert!(
            text.contains("| delete Pod | +0.300 | +0.200 | -0.100 |"),
            "{text}"
        );
        assert!(
            text.contains("| delete Pod | Suture judging, baseline | 2.900 | 3.700 | — |"),
            "{text}"
        );
        assert!(
            text.contains("| delete Pod | baseline | 0.150 | 0.150 |"),
            "{text}"
        );
        assert!(!text.contains("kept warm"), "no period was recorded: {text}");
        measured.kept_warm.insert(Setup::Judging, Some("2ms".to_owned()));
        measured.kept_warm.insert(Setup::Baseline, None);
        let text = markdown(&measured, &context());
        assert!(
            text.starts_with(
                "Judged path kept warm between requests: this build `--keep-warm=2ms`, the baseline off.\n\n"
            ),
            "{text}"
        );
    }
}
