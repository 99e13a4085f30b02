//! `suture-apiserver-bench`: latency inside kube-apiserver with no admission webhook, the gateway
//! as a no-op webhook, the gateway judging, an in-process ValidatingAdmissionPolicy, and
//! optionally a baseline build of the gateway judging beside this one (see
//! `suture_e2e::latency`). Takes the cluster as the e2e suite does (`SUTURE_E2E_K8S_BIN` or
//! `SUTURE_E2E_KUBECONFIG`). Run through `bench/apiserver/run.sh`.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Parser;
use suture_e2e::Cluster;
use suture_e2e::cluster::HOW_TO_RUN;
use suture_e2e::latency::{self, Baseline, Options, report};

/// Measures what admission adds to requests inside a real kube-apiserver.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Timed requests per setup and request kind (iterations: each sends every kind under every
    /// setup)
    #[arg(long, default_value_t = 600)]
    samples: usize,
    /// Untimed iterations first
    #[arg(long, default_value_t = 20)]
    warmup: usize,
    /// Also write the report to this file
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep the run directory (every component's log, the gateway's decision log)
    #[arg(long)]
    keep: bool,
    /// Another build of suture-gateway (e.g. the previous commit's) to time judging beside this
    /// one, request by request
    #[arg(long, value_name = "PATH", conflicts_with = "calibrate_path")]
    baseline_gateway: Option<PathBuf>,
    /// The suture-gateway build that judges and serves as the no-op twin (default: the one built
    /// beside this binary), e.g. the profile-guided release build of scripts/pgo-build.sh
    #[arg(long, value_name = "PATH")]
    gateway: Option<PathBuf>,
    /// This build's judging gateway's `--keep-warm` period (0s: off) [default: as the install
    /// renders it]
    #[arg(long, value_name = "DURATION")]
    keep_warm: Option<String>,
    /// The baseline build's `--keep-warm` period (0s: off, and the flag is left out, for builds
    /// older than it) [default: the same as this build's]
    #[arg(long, value_name = "DURATION", requires = "baseline_gateway")]
    baseline_keep_warm: Option<String>,
    /// Which gateway builds are timed, for the report (bench/apiserver/run.sh says)
    #[arg(long)]
    builds: Option<String>,
    /// Time this build's judging gateway a second time, as the baseline's identity through the
    /// baseline's copy of the webhook: what the setups' asymmetry alone adds at the client
    #[arg(long)]
    calibrate_path: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // Before a control plane is started for nothing.
    for (flag, binary) in [
        ("--gateway", &args.gateway),
        ("--baseline-gateway", &args.baseline_gateway),
    ] {
        if let Some(binary) = binary {
            anyhow::ensure!(binary.is_file(), "{flag} {}: no such file", binary.display());
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start a runtime")?;
    runtime.block_on(run(args))
}

async fn run(args: Args) -> anyhow::Result<()> {
    let mut cluster = Cluster::from_env()
        .await?
        .ok_or_else(|| anyhow::anyhow!("no cluster: {HOW_TO_RUN}"))?;
    let options = Options {
        samples: args.samples,
        warmup: args.warmup,
        baseline: match (&args.baseline_gateway, args.calibrate_path) {
            (Some(binary), _) => Some(Baseline::Build(binary.clone())),
            (None, true) => Some(Baseline::SameGateway),
            (None, false) => None,
        },
        gateway: args.gateway.clone(),
        keep_warm: args.keep_warm.clone(),
        baseline_keep_warm: args.baseline_keep_warm.clone(),
    };
    let outcome = latency::run(&mut cluster, options).await;
    let measured = match outcome {
        Ok(measured) => measured,
        Err(error) => {
            let kept = cluster.keep_dir();
            return Err(error.context(format!("logs kept in {}", kept.display())));
        }
    };
    let version = cluster.client.apiserver_version().await?;
    let context = report::Context {
        kubernetes: version.git_version,
        cores: std::thread::available_parallelism().map_or(1, usize::from),
        samples: args.samples,
        builds: args.builds.clone(),
    };
    let text = report::markdown(&measured, &context);
    print!("{text}");
    if args.keep {
        eprintln!("run directory kept: {}", cluster.keep_dir().display());
    }
    if let Some(path) = args.out {
        std::fs::write(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
