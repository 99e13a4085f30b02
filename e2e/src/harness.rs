//! The suite's runner (a `harness = false` test): one cluster for the whole run, tests run in
//! order, each failure or panic reported with the test's name, the control plane stopped and the
//! run directory kept (its logs) when anything failed. Without a cluster it prints how to run the
//! suite and succeeds; so it does, saying what is missing, when the image mode
//! (`SUTURE_E2E_GATEWAY=image`) is asked for where podman cannot run the image.
//!
//! To cargo and nextest the binary lists one test, `suite`; arguments that are not flags filter
//! the suite's own tests by substring (`cargo test -p suture-e2e -- admission`).

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::time::Instant;

use futures::FutureExt;

use crate::cluster::{Cluster, HOW_TO_RUN};
use crate::gateway::container::Mode;

/// A test's future.
pub type TestFuture<'a> = Pin<Box<dyn Future<Output = anyhow::Result<()>> + 'a>>;

/// One test of the suite.
#[derive(Debug, Clone, Copy)]
pub struct Test {
    /// Its name (`module::what_it_shows`).
    pub name: &'static str,
    /// Its body, given the cluster.
    pub run: for<'a> fn(&'a mut Cluster) -> TestFuture<'a>,
}

fn filters() -> (bool, Vec<String>) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let list = args.iter().any(|a| a == "--list");
    let filters = args
        .iter()
        .filter(|a| !a.starts_with('-') && a.as_str() != "suite")
        .cloned()
        .collect();
    (list, filters)
}

/// Runs `tests` against the environment's cluster.
pub fn main(tests: &[Test]) -> ExitCode {
    let (list, filters) = filters();
    if list {
        println!("suite: test");
        return ExitCode::SUCCESS;
    }
    let selected: Vec<&Test> = tests
        .iter()
        .filter(|t| filters.is_empty() || filters.iter().any(|f| t.name.contains(f.as_str())))
        .collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("e2e: cannot start a runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(&selected))
}

async fn run(tests: &[&Test]) -> ExitCode {
    let started = Instant::now();
    match Mode::from_env() {
        Ok(mode) => {
            if let Some(missing) = mode.unavailable() {
                println!("e2e: skipped (the gateway's image cannot run here): {missing}");
                return ExitCode::SUCCESS;
            }
        }
        Err(error) => {
            eprintln!("e2e: {error:#}");
            return ExitCode::FAILURE;
        }
    }
    let mut cluster = match Cluster::from_env().await {
        Ok(Some(cluster)) => cluster,
        Ok(None) => {
            println!("e2e: skipped (no cluster): {HOW_TO_RUN}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("e2e: cannot get a cluster: {error:#}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "e2e: cluster ready in {:.1}s ({} simulated nodes); running {} tests",
        started.elapsed().as_secs_f64(),
        cluster.simulator.nodes().len(),
        tests.len()
    );
    let mut failed = Vec::new();
    for test in tests {
        let begun = Instant::now();
        let outcome = std::panic::AssertUnwindSafe((test.run)(&mut cluster))
            .catch_unwind()
            .await;
        let seconds = begun.elapsed().as_secs_f64();
        match outcome {
            Ok(Ok(())) => println!("test {} ... ok ({seconds:.1}s)", test.name),
            Ok(Err(error)) => {
                println!("test {} ... FAILED ({seconds:.1}s)\n  {error:#}", test.name);
                failed.push(test.name);
            }
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                println!("test {} ... PANICKED ({seconds:.1}s)\n  {message}", test.name);
                failed.push(test.name);
            }
        }
    }
    println!(
        "e2e: {} passed, {} failed in {:.1}s",
        tests.len() - failed.len(),
        failed.len(),
        started.elapsed().as_secs_f64()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        let dir = cluster.keep_dir();
        println!(
            "e2e: failed: {}; logs kept in {}",
            failed.join(", "),
            dir.display()
        );
        ExitCode::FAILURE
    }
}
