//! How long the admission path's CPU work takes per request, without the network: read an
//! AdmissionReview (on the async side), finish it (on the evaluation thread), pre-filter,
//! evaluate and serialize the answer.
//!
//! `cargo run --release -p suture-gateway --example parse_cost -- REVIEW.json [SNAPSHOT...]`
//! (`ROUNDS=N` sets the repetitions per step, 20,000 by default; `ONLY=<label>` runs one step,
//! `ONLY=policies` each candidate policy alone; `COLD=<MiB>` evicts the caches before each
//! repetition and reports medians).

use std::path::PathBuf;
use std::time::Instant;

use policies_cel::WireReview;
use policies_cel::cluster::ClusterModel;
use suture_gateway::admission::{parse::parse, prefilter, review::ReviewResponse, verdict};

/// The allocator of the `suture-gateway` binary: allocation-heavy steps cost what they cost there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((review, snapshots)) = args.split_first() else {
        anyhow::bail!("usage: parse_cost REVIEW.json [SNAPSHOT...]");
    };
    let body = std::fs::read(review)?;
    let set = policies_cel::pack::builtin()?;
    let paths: Vec<PathBuf> = snapshots.iter().map(PathBuf::from).collect();
    let model = if paths.is_empty() {
        ClusterModel::new()
    } else {
        suture_gateway::reload::load_model(&paths)?
    };
    let rounds: u32 = std::env::var("ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    // `ONLY=<label>` times one step (for a profiler).
    let only = std::env::var("ONLY").ok();
    // `COLD=<MiB>`: before each step, write through that much memory (more than the caches hold),
    // as the rest of a busy machine does between two admission requests, and report the median
    // of the steps timed one by one.
    let cold: usize = std::env::var("COLD")
        .ok()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    let mut scrub = vec![0u8; cold << 20];
    let mut time = |label: &str, f: &mut dyn FnMut()| {
        let label_text = label.trim();
        if only.as_deref().is_some_and(|only| {
            only != label_text && !(only == "policies" && label_text.starts_with("policy "))
        }) {
            return;
        }
        if cold > 0 {
            let mut took = Vec::with_capacity(rounds as usize);
            for round in 0..rounds {
                for line in scrub.chunks_mut(64) {
                    line[0] = line[0].wrapping_add(round as u8);
                }
                std::hint::black_box(&scrub);
                let started = Instant::now();
                f();
                took.push(started.elapsed());
            }
            took.sort();
            println!("{label:>24}: {:?} median, cold", took[took.len() / 2]);
            return;
        }
        let started = Instant::now();
        for _ in 0..rounds {
            f();
        }
        println!("{label:>24}: {:?} per request", started.elapsed() / rounds);
    };
    time("json -> Value", &mut || {
        let _ = std::hint::black_box(serde_json::from_slice::<serde_json::Value>(&body));
    });
    time("read (async side)", &mut || {
        let _ = std::hint::black_box(WireReview::read(&body));
    });
    let review = WireReview::read(&body).ok_or_else(|| anyhow::anyhow!("not a plain review"))?;
    // The clone copies the objects' text, which the gateway moves: a little more than it pays.
    time("finish (eval side)", &mut || {
        let _ = std::hint::black_box(review.clone().into_request());
    });
    time("parse (Request)", &mut || {
        let _ = std::hint::black_box(parse(&body));
    });
    let request = parse(&body).map_err(|e| anyhow::anyhow!(e.message))?;
    time("prefilter", &mut || {
        let _ = std::hint::black_box(prefilter::candidates(&set, &request.admission));
    });
    // As the gateway judges: only the pre-filter's candidates.
    let candidates = prefilter::candidates(&set, &request.admission);
    let context = policies_cel::EvalContext {
        only: Some(&candidates),
        ..policies_cel::EvalContext::default()
    };
    time("evaluate", &mut || {
        let _ = std::hint::black_box(policies_cel::evaluate_in(&set, &request, &model, &context));
    });
    // Each candidate alone, to see which policies the evaluation's cost is in.
    for policy in &candidates {
        let alone = [policy.clone()];
        let context = policies_cel::EvalContext {
            only: Some(&alone),
            ..policies_cel::EvalContext::default()
        };
        time(&format!("  policy {}", policy.name), &mut || {
            let _ = std::hint::black_box(policies_cel::evaluate_in(&set, &request, &model, &context));
        });
    }
    time("finish + evaluate", &mut || {
        // A fresh request each time: what the evaluation thread pays, objects parsed when read.
        let request = review.clone().into_request();
        let _ = std::hint::black_box(policies_cel::evaluate_in(&set, &request, &model, &context));
    });
    // The evaluation lane's whole work from a body: read, finish, judge (what cachegrind profiles).
    time("read + finish + evaluate", &mut || {
        if let Some(review) = WireReview::read(&body) {
            let request = review.into_request();
            let _ = std::hint::black_box(policies_cel::evaluate_in(&set, &request, &model, &context));
        }
    });
    let mut limited = set.clone();
    limited.options.time_limit = Some(std::time::Duration::from_millis(1600));
    time("evaluate (time limit)", &mut || {
        let _ = std::hint::black_box(policies_cel::evaluate_in(&limited, &request, &model, &context));
    });
    time("  in it: impact estimate", &mut || {
        let _ = std::hint::black_box(policies_cel::impact::estimate(&request, &model));
    });
    let estimate = policies_cel::impact::estimate(&request, &model);
    time("  in it: impact as CEL", &mut || {
        let _ = std::hint::black_box(estimate.to_value_of(policies_cel::impact::ImpactFields::ALL));
    });
    let decision = policies_cel::evaluate(&set, &request, &model);
    time("respond + serialize", &mut || {
        let response: ReviewResponse = verdict::respond("uid", &decision);
        let _ = std::hint::black_box(serde_json::to_vec(&response));
    });
    Ok(())
}
