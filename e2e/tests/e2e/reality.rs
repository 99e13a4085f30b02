//! The reality harness (`suture_e2e::reality`): the estimate of every scenario's request against
//! what the real controllers do with it. Prints the report (and writes it beside the test
//! binaries, `reality-report.md`), then holds the run to the baseline of known disagreements.
//!
//! `SUTURE_REALITY_ONLY=text` runs the scenarios whose names contain `text`;
//! `SUTURE_REALITY_UPDATE=1` rewrites the baseline from the run.

use suture_e2e::Cluster;
use suture_e2e::binaries;
use suture_e2e::harness::{Test, TestFuture};
use suture_e2e::reality::{self, baseline, report, scenarios};

pub const TESTS: [Test; 1] = [Test {
    name: "reality::the_estimate_against_the_controllers",
    run: the_estimate_against_the_controllers,
}];

/// Object-level agreement the estimate aims for, in percent.
const AGREEMENT_TARGET: f64 = 95.0;
/// Scenarios whose every summary figure is right, in percent.
const COUNTS_TARGET: f64 = 90.0;

fn the_estimate_against_the_controllers(cluster: &mut Cluster) -> TestFuture<'_> {
    Box::pin(async move {
        let plugin = binaries::path("kubectl-suture")?;
        let only = std::env::var("SUTURE_REALITY_ONLY").unwrap_or_default();
        let catalogue: Vec<_> = scenarios::catalogue()
            .into_iter()
            .filter(|s| s.name.contains(only.as_str()))
            .collect();
        println!("reality: {} scenarios", catalogue.len());
        let (outcomes, failed) = reality::run_all(cluster, &plugin, &catalogue).await;
        let markdown = report::markdown(&outcomes);
        println!("\n{markdown}");
        let written = binaries::dir()?.join("reality-report.md");
        std::fs::write(&written, &markdown)?;
        println!("reality: report written to {}", written.display());
        let totals = report::totals(&outcomes);
        println!(
            "reality: targets: object-level agreement {:.1}% (target {AGREEMENT_TARGET}%), every summary \
             figure equal in {:.1}% of scenarios (target {COUNTS_TARGET}%)",
            totals.agreement(),
            totals.counts_equal()
        );

        let path = baseline::path();
        let known = baseline::Baseline::read(&path)?;
        if std::env::var_os("SUTURE_REALITY_UPDATE").is_some() {
            let mut next = known.updated(&outcomes);
            // Scenarios this run did not reach keep what is known about them.
            for (name, entry) in &known.scenarios {
                next.scenarios
                    .entry(name.clone())
                    .or_insert_with(|| entry.clone());
            }
            next.write(&path)?;
            println!("reality: baseline rewritten: {}", path.display());
        }
        let (failures, improved) = baseline::Baseline::read(&path)?.check(&outcomes);
        for line in &improved {
            println!("reality: {line} (tighten the baseline)");
        }
        anyhow::ensure!(
            failed.is_empty(),
            "scenarios that could not run:\n{}",
            failed.join("\n")
        );
        anyhow::ensure!(
            failures.is_empty(),
            "against the baseline:\n{}",
            failures.join("\n")
        );
        Ok(())
    })
}
