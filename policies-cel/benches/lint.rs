//! `cargo bench -p policies-cel --bench lint`: what `kubectl suture lint` costs on the built-in
//! policy pack (every file, every expression), against the baseline run in the same process:
//! loading the same files as `check` and `test` do (parse, decode, type-check and compile). The
//! lint does all of that and its own checks (folding, cost, schema fields, matching), so the
//! ratio says what its checks add over a load.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::time::{Duration, Instant};

use policies_cel::lint::{Linter, NoCatalog};
use policies_cel::policy::Loader;

/// Timed runs of each; the median is reported.
const RUNS: usize = 200;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn time(mut run: impl FnMut()) -> Duration {
    for _ in 0..RUNS / 10 {
        run();
    }
    median(
        (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                run();
                start.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let files = policies_cel::pack::files();
    let load = time(|| {
        let loader = files
            .iter()
            .try_fold(Loader::new(), |loader, (name, text)| loader.add_str(name, text));
        black_box(loader.and_then(Loader::finish).map(|set| set.policies.len()).ok());
    });
    let mut expressions = 0;
    let lint = time(|| {
        let mut linter = Linter::new();
        linter.add_builtin();
        let report = linter.run(&NoCatalog);
        expressions = report.expressions;
        black_box(report.findings.len());
    });
    println!(
        "built-in pack: {} files, {expressions} expressions; medians of {RUNS} runs",
        files.len()
    );
    println!("  load (baseline)   {:>9.3} ms", load.as_secs_f64() * 1e3);
    println!(
        "  lint              {:>9.3} ms   {:.2}x the load",
        lint.as_secs_f64() * 1e3,
        lint.as_secs_f64() / load.as_secs_f64()
    );
}
