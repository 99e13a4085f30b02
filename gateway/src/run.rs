//! Wiring: TLS, listeners, policies, the model (offline snapshots or live watches), reloaders,
//! the admission path and the operations routes — and the shutdown sequence: on SIGTERM/SIGINT
//! readiness turns false, the listeners stop accepting, in-flight requests drain within
//! `--shutdown-grace`, and the process exits 0.
//!
//! [`start`] runs a gateway in-process and returns its bound addresses (tests bind port 0).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use policies_cel::cluster::ClusterModel;
use policies_cel::policy::EvalOptions;
use policies_cel::{KubernetesVersion, PolicySet};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::admission::body::Intake;
use crate::admission::pool::EvalPool;
use crate::admission::rehearsal::Rehearsed;
use crate::admission::{self, Admission, EvalHook, Evaluator, Limits};
use crate::cluster_version::VersionSetting;
use crate::config::Config;
use crate::decision_log::DecisionLog;
use crate::guard::SelfProtection;
use crate::health::{self, Health};
use crate::ledger::SharedLedger;
use crate::ledger::writer::Writer;
use crate::metrics::Metrics;
use crate::model::LiveModel;
use crate::policies::{PolicyReloader, PolicySources, PolicyStore};
use crate::reload::{SnapshotWatcher, load_model, watch_policies};
use crate::server::{Transport, serve};
use crate::tls::{self, ReloadingResolver, SelfSigned};

/// Test and benchmark hooks that the command line does not expose.
#[derive(Clone, Default)]
pub struct Hooks {
    /// Runs on the blocking pool before each evaluation (simulate slow or panicking evaluations).
    pub before_evaluate: Option<EvalHook>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("before_evaluate", &self.before_evaluate.is_some())
            .finish()
    }
}

/// A gateway serving in this process.
#[derive(Debug)]
pub struct Running {
    /// Where the HTTPS webhook listens.
    pub webhook_addr: SocketAddr,
    /// Where `/healthz`, `/readyz` and `/metrics` listen.
    pub metrics_addr: SocketAddr,
    /// The generated pair, with `--self-signed`.
    pub self_signed: Option<SelfSigned>,
    /// The policy reloader (absent with `--noop`).
    pub policies: Option<Arc<PolicyReloader>>,
    pub model: Arc<LiveModel>,
    pub health: Arc<Health>,
    pub metrics: Arc<Metrics>,
    shutdown: CancellationToken,
    servers: JoinHandle<()>,
}

impl Running {
    /// Starts the shutdown: readiness false, listeners closed, in-flight requests draining.
    pub fn shutdown(&self) {
        self.health.begin_shutdown();
        self.shutdown.cancel();
    }

    /// Waits until both listeners have drained (after [`Self::shutdown`]).
    pub async fn wait(self) -> anyhow::Result<()> {
        self.servers.await.context("the server task failed")
    }
}

/// Runs until SIGTERM or SIGINT, then drains and returns.
pub async fn run(config: Config) -> anyhow::Result<()> {
    // Listening before serving: a SIGTERM as soon as the gateway serves (a pod deleted just
    // after it started) drains it like any other, instead of killing it outright.
    let termination = termination();
    let running = start(config, Hooks::default()).await?;
    tracing::info!(
        webhook = %running.webhook_addr,
        metrics = %running.metrics_addr,
        "suture-gateway serving"
    );
    termination.await;
    tracing::info!("shutting down: readiness is false, draining in-flight requests");
    running.shutdown();
    running.wait().await?;
    tracing::info!("stopped");
    Ok(())
}

/// Listens for SIGTERM and SIGINT from this call on; the future completes on the first.
fn termination() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate());
        let int = signal(SignalKind::interrupt());
        async move {
            match (term, int) {
                (Ok(mut term), Ok(mut int)) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = int.recv() => {}
                    }
                }
                (term, int) => {
                    let error = term
                        .err()
                        .or(int.err())
                        .map(|e| e.to_string())
                        .unwrap_or_default();
                    tracing::warn!(%error, "cannot listen for SIGTERM or SIGINT; falling back to Ctrl-C");
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Refuses a `--cluster-policy-selector` kube-apiserver cannot read, at start-up rather than as a
/// watch failing for ever: one list of ValidatingAdmissionPolicies (served since Kubernetes 1.30)
/// with it.
pub async fn check_policy_selector(client: &kube::Client, selector: &str) -> anyhow::Result<()> {
    use k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy;
    let api = kube::Api::<ValidatingAdmissionPolicy>::all(client.clone());
    match api
        .list(&kube::api::ListParams::default().labels(selector).limit(1))
        .await
    {
        Err(kube::Error::Api(status)) if status.code == 400 => {
            anyhow::bail!("--cluster-policy-selector {selector:?}: {}", status.message)
        }
        // Any other failure is the watches' to retry and report.
        _ => Ok(()),
    }
}

/// Builds and starts a gateway; it serves until [`Running::shutdown`].
pub async fn start(config: Config, hooks: Hooks) -> anyhow::Result<Running> {
    if !config.keep_warm.is_zero() && config.keep_warm_for < config.keep_warm {
        bail!(
            "--keep-warm-for {:?} is shorter than the --keep-warm period {:?}: no rehearsal would run",
            config.keep_warm_for,
            config.keep_warm
        );
    }
    let (resolver, self_signed) = certificates(&config)?;
    let tls_config = tls::server_config(Arc::clone(&resolver), config.client_ca.as_deref())
        .context("cannot set up TLS")?;
    let acceptor = TlsAcceptor::from(Arc::new(tls_config));
    let webhook = TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {} (--listen)", config.listen))?;
    let ops = TcpListener::bind(config.metrics_listen)
        .await
        .with_context(|| format!("cannot listen on {} (--metrics-listen)", config.metrics_listen))?;
    let webhook_addr = webhook.local_addr()?;
    let metrics_addr = ops.local_addr()?;

    let metrics = Arc::new(Metrics::new());
    let shutdown = CancellationToken::new();
    let background = CancellationToken::new();
    let grace = config.shutdown_grace;
    let transport = Transport::Tls(acceptor);

    spawn_until(&background, Arc::clone(&resolver).watch(config.poll_interval));

    let mut ledger_wake = None;
    // PolicyReports and Events (live mode): the handler's queues, their writers start with the
    // other watches.
    let (report_queue, report_observations) = queue(config.policy_reports(), REPORT_QUEUE);
    let (event_queue, event_notices) = queue(config.events(), EVENT_QUEUE);
    let (model, store, policies, webhook_server, decision_log) = if config.noop {
        let model = Arc::new(LiveModel::ready_with(ClusterModel::new()));
        let store = Arc::new(PolicyStore::new(PolicySet::default()));
        let routes = admission::noop_routes(intake(&config));
        let server = tokio::spawn(serve(
            webhook,
            transport,
            routes,
            max_connections(&config),
            shutdown.clone(),
            grace,
        ));
        (model, store, None, server, None)
    } else {
        let reloader = Arc::new(load_policies(&config).await?);
        let store = Arc::clone(reloader.store());
        let model = Arc::new(initial_model(&config).await?);
        let log = Arc::new(
            DecisionLog::open(&config.decision_log)
                .with_context(|| format!("cannot open the decision log {}", config.decision_log))?,
        );
        if log.enabled() {
            let log = Arc::clone(&log);
            spawn_until(&background, async move { log.flush_periodically().await });
        }
        // Offline the ledger is this process's; live, it is shared through the API server
        // (its writer and watch start with the other watches).
        let identity = config.ledger_identity();
        let (ledger, wake) = if config.offline() {
            (SharedLedger::local(&identity), None)
        } else {
            let capacity = usize::try_from(config.ledger_queue).unwrap_or(usize::MAX);
            let (ledger, wake) = SharedLedger::shared(&identity, capacity);
            (ledger, Some(wake))
        };
        let ledger = Arc::new(ledger);
        metrics.attach_ledger(Arc::clone(&ledger));
        ledger_wake = wake.map(|wake| (Arc::clone(&ledger), wake));
        let pool = match config.eval_threads {
            0 => EvalPool::per_core(),
            threads => EvalPool::new(threads),
        }
        .context("cannot start the evaluation threads")?;
        let heavy_pool = EvalPool::new(1).context("cannot start the heavy lane's thread")?;
        let evaluator = Evaluator::new(
            Arc::clone(&model),
            ledger,
            pool,
            heavy_pool,
            Limits {
                max_concurrency: usize::try_from(config.max_concurrency).unwrap_or(usize::MAX),
                timeout: config.eval_timeout,
                max_model_age: config.max_model_age,
                inline_cost: config.inline_cost,
            },
            // The impact's summary is kept for the decision log and the reports' figures.
            log.enabled() || report_queue.is_some(),
            hooks.before_evaluate.clone(),
        );
        let admission = Arc::new(
            Admission::new(
                Arc::clone(&store),
                self_protection(&config),
                evaluator,
                Arc::clone(&metrics),
                Arc::clone(&log),
                intake(&config),
            )
            // The times are written with the decision: without a decision log, nothing to time.
            .with_stage_timings(config.stage_timings && log.enabled())
            .with_keep_warm(config.keep_warm, config.keep_warm_for)
            .with_reporting(crate::reports::Reporting::new(
                report_queue.clone(),
                event_queue.clone(),
                Arc::clone(&metrics),
            )),
        );
        if !config.keep_warm.is_zero() {
            spawn_until(
                &background,
                keep_warm(Arc::clone(&admission), Arc::clone(&metrics)),
            );
        }
        let routes = admission::routes(admission);
        let server = tokio::spawn(serve(
            webhook,
            transport,
            routes,
            max_connections(&config),
            shutdown.clone(),
            grace,
        ));
        let mut watched: Vec<PathBuf> = config.policies.clone();
        watched.extend(config.params.iter().cloned());
        spawn_until(
            &background,
            watch_policies(Arc::clone(&reloader), watched, config.poll_interval),
        );
        (model, store, Some(reloader), server, Some(log))
    };

    let health = Arc::new(Health::new(Arc::clone(&model), store, Arc::clone(&metrics)));
    if !config.noop {
        if config.offline() {
            let watcher = SnapshotWatcher {
                model: Arc::clone(&model),
                paths: config.cluster.clone(),
                metrics: Arc::clone(&metrics),
                health: Arc::clone(&health),
            };
            spawn_until(&background, watcher.run(config.poll_interval));
        } else if let Some(reloader) = &policies {
            start_live(
                &config,
                &background,
                Arc::clone(&model),
                Arc::clone(reloader),
                ledger_wake,
                Reporters {
                    observations: report_observations,
                    notices: event_notices,
                    metrics: Arc::clone(&metrics),
                },
            )
            .await?;
        }
    }
    // The operations listener outlives the webhook's drain, so /readyz reports the shutdown.
    let ops_shutdown = CancellationToken::new();
    let ops_server = tokio::spawn(serve(
        ops,
        Transport::Plain,
        health::routes(Arc::clone(&health)),
        OPS_MAX_CONNECTIONS,
        ops_shutdown.clone(),
        grace,
    ));
    let servers = tokio::spawn(async move {
        let _ = webhook_server.await;
        // Every request has been answered: its decision is written before the gateway stops.
        if let Some(log) = decision_log {
            log.flush();
        }
        ops_shutdown.cancel();
        let _ = ops_server.await;
        background.cancel();
    });
    Ok(Running {
        webhook_addr,
        metrics_addr,
        self_signed,
        policies,
        model,
        health,
        metrics,
        shutdown,
        servers,
    })
}

/// Observations waiting for the report writer at most; beyond, they are dropped and counted
/// (`suture_gateway_policy_report_writes_total{result="dropped"}`).
const REPORT_QUEUE: usize = 4096;
/// Events waiting for the Event writer at most; beyond, dropped and counted.
const EVENT_QUEUE: usize = 1024;
/// How long the reports' Lease is held without a renewal (renewed every third of it).
const REPORT_LEASE_DURATION: Duration = Duration::from_secs(15);

/// A bounded queue when `on`.
fn queue<T>(
    on: bool,
    capacity: usize,
) -> (
    Option<tokio::sync::mpsc::Sender<T>>,
    Option<tokio::sync::mpsc::Receiver<T>>,
) {
    if on {
        let (sender, receiver) = tokio::sync::mpsc::channel(capacity);
        (Some(sender), Some(receiver))
    } else {
        (None, None)
    }
}

/// The receiving ends of the handler's report and Event queues.
struct Reporters {
    observations: Option<tokio::sync::mpsc::Receiver<crate::reports::Observation>>,
    notices: Option<tokio::sync::mpsc::Receiver<crate::reports::events::Notice>>,
    metrics: Arc<Metrics>,
}

/// Rehearses the judged path whenever it was idle for its `--keep-warm` period, and sleeps
/// from the end of its `--keep-warm-for` window until a request is judged again
/// (`admission::rehearsal`).
async fn keep_warm(admission: Arc<Admission>, metrics: Arc<Metrics>) {
    let mut ticks = tokio::time::interval(admission.keep_warm());
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match admission.rehearse() {
            Rehearsed::Judged => metrics.count_rehearsal(),
            Rehearsed::Skipped => {}
            Rehearsed::Dormant => {
                admission.rehearsals_resumed().await;
                ticks.reset();
            }
        }
    }
}

/// Runs `task` in the background until `stop` is cancelled.
fn spawn_until(stop: &CancellationToken, task: impl Future<Output = ()> + Send + 'static) {
    let stop = stop.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = stop.cancelled() => {}
            () = task => {}
        }
    });
}

/// The serving certificate: from files, or generated (`--self-signed`, caBundle printed).
fn certificates(config: &Config) -> anyhow::Result<(Arc<ReloadingResolver>, Option<SelfSigned>)> {
    if config.self_signed {
        let pair = SelfSigned::generate(&config.tls_san).context("--self-signed")?;
        if let Some(path) = &config.ca_bundle_out {
            std::fs::write(path, &pair.ca_pem)
                .with_context(|| format!("cannot write the CA to {} (--ca-bundle-out)", path.display()))?;
        }
        println!("caBundle: {}", pair.ca_bundle());
        let resolver = ReloadingResolver::from_pem(&pair.cert_pem, &pair.key_pem)?;
        return Ok((Arc::new(resolver), Some(pair)));
    }
    match (&config.tls_cert, &config.tls_key) {
        (Some(cert), Some(key)) => Ok((Arc::new(ReloadingResolver::from_files(cert, key)?), None)),
        _ => bail!("no serving certificate: give --tls-cert and --tls-key, or --self-signed for a local run"),
    }
}

async fn load_policies(config: &Config) -> anyhow::Result<PolicyReloader> {
    let kubernetes_version = kubernetes_version(config).await?;
    tracing::info!(%kubernetes_version, "policies compile for this Kubernetes version's CEL environment");
    let sources = PolicySources {
        builtin_pack: !config.no_builtin_pack,
        pack_action: config.pack_action,
        kubernetes_version,
        paths: config.policies.clone(),
        params_paths: config.params.clone(),
        options: EvalOptions {
            time_limit: Some(cel_time_limit(config.eval_timeout)),
            ..EvalOptions::default()
        },
        ..PolicySources::default()
    };
    tokio::task::spawn_blocking(move || PolicyReloader::start(sources))
        .await
        .context("the policy loader failed")?
        .map_err(|error| anyhow::anyhow!(crate::error_chain(&error)))
        .context("cannot load the policies")
}

/// The limits webhook bodies are read under.
fn intake(config: &Config) -> Intake {
    Intake::new(
        config.max_body_bytes,
        config.body_timeout,
        config.max_buffered_bytes,
    )
}

fn max_connections(config: &Config) -> usize {
    usize::try_from(config.max_connections).unwrap_or(usize::MAX)
}

/// Connections the operations listener (probes, scrapes) keeps open at once.
const OPS_MAX_CONNECTIONS: usize = 64;

/// The version `--kubernetes-version` gives, or with `auto` the API server's (live mode only).
async fn kubernetes_version(config: &Config) -> anyhow::Result<KubernetesVersion> {
    match config.kubernetes_version {
        VersionSetting::Given(version) => Ok(version),
        VersionSetting::Auto if config.offline() => {
            bail!("--kubernetes-version auto asks the cluster: it needs live mode, not --cluster snapshots")
        }
        VersionSetting::Auto => {
            let client = crate::live::client(config.kubeconfig.clone(), config.context.clone())
                .await
                .context("--kubernetes-version auto: cannot set up the Kubernetes client")?;
            let (version, note) = crate::cluster_version::read(&client)
                .await
                .context("--kubernetes-version auto")?;
            if let Some(note) = note {
                tracing::warn!("{note}");
            }
            Ok(version)
        }
    }
}

/// CEL stops itself a little before the request's budget runs out, so that a slow policy is an
/// evaluation error (judged by its failurePolicy) rather than a timeout of the whole request.
pub fn cel_time_limit(eval_timeout: Duration) -> Duration {
    eval_timeout.mul_f64(0.8)
}

async fn initial_model(config: &Config) -> anyhow::Result<LiveModel> {
    if !config.offline() {
        return Ok(LiveModel::new());
    }
    let paths = config.cluster.clone();
    let model = tokio::task::spawn_blocking(move || load_model(&paths))
        .await
        .context("the snapshot loader failed")?
        .map_err(|error| anyhow::anyhow!(crate::error_chain(&error)))
        .context("cannot load the --cluster snapshots")?;
    tracing::info!(objects = model.len(), "cluster model loaded from snapshots");
    Ok(LiveModel::ready_with(model))
}

fn self_protection(config: &Config) -> SelfProtection {
    SelfProtection {
        namespace: config.protect_namespace.clone().unwrap_or_default(),
        deployment: config.protect_deployment.clone().unwrap_or_default(),
        webhook_configuration: config.protect_webhook.clone().unwrap_or_default(),
        allowed_users: config.protect_allow_user.clone(),
    }
}

/// Live mode: watches fill the model and feed cluster policy objects to the reloader, and the
/// shared ledger's writer and watch start. The watches run in the background; readiness stays
/// false until their initial lists are in.
async fn start_live(
    config: &Config,
    background: &CancellationToken,
    model: Arc<LiveModel>,
    reloader: Arc<PolicyReloader>,
    ledger: Option<(Arc<SharedLedger>, tokio::sync::mpsc::Receiver<()>)>,
    reporters: Reporters,
) -> anyhow::Result<()> {
    let client = crate::live::client(config.kubeconfig.clone(), config.context.clone())
        .await
        .context(
            "live mode: cannot set up the Kubernetes client (or give --cluster snapshots to run offline)",
        )?;
    if let Some((ledger, wake)) = ledger {
        let namespace = config.ledger_namespace();
        tracing::info!(shard = ledger.shard(), %namespace, "shared ledger: this replica's shard");
        let watch = crate::ledger::sync::watch(client.clone(), &namespace);
        model.watch_registered(&watch.name, crate::model::Feeds::History);
        let sink = crate::ledger::sync::LedgerSync::new(Arc::clone(&ledger));
        spawn_until(
            background,
            crate::live::watch::run(watch, Arc::clone(&model), sink),
        );
        let writer = Writer {
            api: kube::Api::namespaced(client.clone(), &namespace),
            namespace,
            ledger,
            flush: config.ledger_flush,
        };
        spawn_until(background, writer.run(wake));
    }
    start_reporters(config, background, &client, reporters);
    if let Some(selector) = &config.cluster_policy_selector {
        check_policy_selector(&client, selector).await?;
    }
    let live_config = crate::live::LiveConfig {
        watch_policies: !config.no_cluster_policies,
        policy_selector: config.cluster_policy_selector.clone(),
        ..crate::live::LiveConfig::default()
    };
    spawn_until(background, async move {
        if let Err(error) = crate::live::run(client, model, reloader, live_config).await {
            tracing::error!(
                error = format!("{error:#}"),
                "live mode stopped: the model is no longer kept current"
            );
        }
    });
    Ok(())
}

/// The PolicyReport writer and its Lease, and the Event writer, on their queues.
fn start_reporters(
    config: &Config,
    background: &CancellationToken,
    client: &kube::Client,
    reporters: Reporters,
) {
    use crate::reports::{events::EventWriter, lease::Elector, writer};
    let identity = config.ledger_identity();
    if let Some(observations) = reporters.observations {
        let namespace = config.ledger_namespace();
        tracing::info!(lease = %config.report_lease, %namespace, window = ?config.report_window,
            flush = ?config.report_flush, "policy reports: written by the holder of the Lease");
        let elector = Elector::new(
            kube::Api::namespaced(client.clone(), &namespace),
            &config.report_lease,
            &identity,
            REPORT_LEASE_DURATION,
        );
        let leading = elector.leading();
        spawn_until(background, elector.run());
        let window = chrono::Duration::from_std(config.report_window).unwrap_or(chrono::Duration::MAX);
        let book = policies_cel::reports::ReportBook::new(window, writer::MAX_RESULTS);
        let writer = writer::ReportWriter::new(
            client.clone(),
            book,
            config.report_flush,
            leading,
            Arc::clone(&reporters.metrics),
        );
        spawn_until(background, writer.run(observations));
    }
    if let Some(notices) = reporters.notices {
        let writer = EventWriter::new(client.clone(), &identity, config.event_refresh, reporters.metrics);
        spawn_until(background, writer.run(notices));
    }
}
