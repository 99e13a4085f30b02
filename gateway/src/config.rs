//! The gateway's command line (clap derive): every flag has an environment variable, and
//! `--help` documents them all. Durations are written `500ms`, `2s`, `1m`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::admission::DEFAULT_INLINE_COST;
use crate::cluster_version::VersionSetting;
use crate::duration::parse_duration;

/// `suture-gateway`: the validating admission webhook that enforces Suture's safety policies.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "suture-gateway",
    version,
    about = "Suture's validating admission webhook: enforces CEL safety policies inline",
    long_about = "suture-gateway answers kube-apiserver's AdmissionReviews on POST /validate (HTTPS) \
                  with the same evaluation `kubectl suture check` runs offline. It keeps a slim model \
                  of the cluster (live watches, or --cluster snapshots offline) for policies that read \
                  `impact`, and serves /healthz, /readyz and /metrics on a second, plain-HTTP listener.",
    after_help = AFTER_HELP,
    args_override_self = true
)]
pub struct Config {
    /// HTTPS webhook address (POST /validate)
    #[arg(
        long,
        env = "SUTURE_LISTEN",
        default_value = "0.0.0.0:8443",
        value_name = "ADDR"
    )]
    pub listen: SocketAddr,

    /// Plain-HTTP address for /healthz, /readyz and /metrics
    #[arg(
        long,
        env = "SUTURE_METRICS_LISTEN",
        default_value = "0.0.0.0:8080",
        value_name = "ADDR"
    )]
    pub metrics_listen: SocketAddr,

    /// PEM certificate chain served to the API server; reloaded when it changes
    #[arg(long, env = "SUTURE_TLS_CERT", value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key of --tls-cert; reloaded when it changes
    #[arg(long, env = "SUTURE_TLS_KEY", value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Generate a CA and serving certificate for local runs; prints the base64 caBundle on stdout
    #[arg(long, env = "SUTURE_SELF_SIGNED", conflicts_with_all = ["tls_cert", "tls_key"])]
    pub self_signed: bool,

    /// Subject alternative names of the --self-signed certificate (DNS names or IP addresses)
    #[arg(
        long,
        env = "SUTURE_TLS_SAN",
        value_name = "NAME",
        num_args = 1..,
        value_delimiter = ',',
        default_values = ["localhost", "127.0.0.1"]
    )]
    pub tls_san: Vec<String>,

    /// Also write the --self-signed CA certificate (PEM) to this file
    #[arg(
        long,
        env = "SUTURE_CA_BUNDLE_OUT",
        value_name = "FILE",
        requires = "self_signed"
    )]
    pub ca_bundle_out: Option<PathBuf>,

    /// Require API-server client certificates signed by this CA (PEM)
    #[arg(long, env = "SUTURE_CLIENT_CA", value_name = "FILE")]
    pub client_ca: Option<PathBuf>,

    /// Policy files or directories (SafetyPolicy, ValidatingAdmissionPolicy and bindings); reloaded on change
    #[arg(
        short = 'f',
        long = "policies",
        env = "SUTURE_POLICIES",
        value_name = "PATH",
        num_args = 1..,
        value_delimiter = ','
    )]
    pub policies: Vec<PathBuf>,

    /// Params files or directories (the objects bindings' paramRefs select); in live mode the
    /// cluster's objects of every kind a policy's paramKind names are watched as well
    #[arg(long, env = "SUTURE_PARAMS", value_name = "PATH", num_args = 1.., value_delimiter = ',')]
    pub params: Vec<PathBuf>,

    /// Leave out the built-in safety pack
    #[arg(long, env = "SUTURE_NO_BUILTIN_PACK")]
    pub no_builtin_pack: bool,

    /// The action of every built-in pack policy instead of its own (Deny): Audit (reports and
    /// metrics only), Warn (the requester sees a warning), or Deny — the audit-first rollout
    #[arg(long, env = "SUTURE_PACK_ACTION", value_name = "ACTION", value_parser = parse_action)]
    pub pack_action: Option<policies_cel::policy::Action>,

    /// The Kubernetes version whose CEL environment ValidatingAdmissionPolicies compile
    /// against, the cluster's own (1.33 to 1.37; `v1.36.2` reads as 1.36), or `auto`: the API
    /// server's, read at start (live mode). One calling a function of a later version fails to
    /// load (SafetyPolicies get the newest environment)
    #[arg(
        long,
        env = "SUTURE_KUBERNETES_VERSION",
        default_value_t,
        value_name = "VERSION|auto"
    )]
    pub kubernetes_version: VersionSetting,

    /// Offline mode: build the cluster model from these snapshots (reloaded on change) instead of watches
    #[arg(long, env = "SUTURE_CLUSTER", value_name = "PATH", num_args = 1.., value_delimiter = ',')]
    pub cluster: Vec<PathBuf>,

    /// Live mode: kubeconfig file (default: in-cluster configuration, then $KUBECONFIG)
    #[arg(
        long,
        env = "SUTURE_KUBECONFIG",
        value_name = "FILE",
        conflicts_with = "cluster"
    )]
    pub kubeconfig: Option<PathBuf>,

    /// Live mode: kubeconfig context
    #[arg(long, env = "SUTURE_CONTEXT", value_name = "NAME", conflicts_with = "cluster")]
    pub context: Option<String>,

    /// Don't load SafetyPolicy / ValidatingAdmissionPolicy / Binding objects from the cluster
    #[arg(long, env = "SUTURE_NO_CLUSTER_POLICIES")]
    pub no_cluster_policies: bool,

    /// Load only the SafetyPolicy / ValidatingAdmissionPolicy / Binding objects of the cluster
    /// with these labels (a label selector, e.g. `suture.dev/enforce=true` or `!team`); a
    /// policy kube-apiserver already enforces need not be judged twice
    #[arg(
        long,
        env = "SUTURE_CLUSTER_POLICY_SELECTOR",
        value_name = "SELECTOR",
        conflicts_with = "no_cluster_policies"
    )]
    pub cluster_policy_selector: Option<String>,

    /// Beyond this model age, policies that read `impact` follow their failurePolicy
    #[arg(long, env = "SUTURE_MAX_MODEL_AGE", default_value = "60s", value_name = "DURATION", value_parser = parse_duration)]
    pub max_model_age: Duration,

    /// Largest AdmissionReview body accepted, in bytes (larger ones get 413)
    #[arg(
        long,
        env = "SUTURE_MAX_BODY_BYTES",
        default_value_t = 6_291_456,
        value_name = "N"
    )]
    pub max_body_bytes: u64,

    /// Longest a request body may take to arrive whole (and to find room, see
    /// --max-buffered-bytes); slower ones get 408
    #[arg(long, env = "SUTURE_BODY_TIMEOUT", default_value = "10s", value_name = "DURATION", value_parser = parse_duration)]
    pub body_timeout: Duration,

    /// Request body bytes buffered at once by all requests (at least --max-body-bytes); a body
    /// that finds no room within --body-timeout gets 503
    #[arg(
        long,
        env = "SUTURE_MAX_BUFFERED_BYTES",
        default_value_t = 134_217_728,
        value_name = "N"
    )]
    pub max_buffered_bytes: u64,

    /// Webhook connections open at once; further clients wait to be accepted
    #[arg(long, env = "SUTURE_MAX_CONNECTIONS", default_value_t = 1024, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,

    /// Evaluations running at once; further requests wait for a slot within their time budget
    #[arg(long, env = "SUTURE_MAX_CONCURRENCY", default_value_t = 64, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrency: u32,

    /// Cost units (as the CEL budget counts them: about one per expression step) a request may
    /// spend being judged on the async worker that read it, with no hand-off to an evaluation
    /// thread; one that needs more is judged again on the evaluation threads. 0: always hand off
    #[arg(long, env = "SUTURE_INLINE_COST", default_value_t = DEFAULT_INLINE_COST, value_name = "UNITS")]
    pub inline_cost: u64,

    /// Keep the judged path warm: after this long without a judged request, judge the last one
    /// again as a rehearsal (nothing recorded, the answer dropped), so that the next request
    /// finds its code and data in the CPU caches. Costs one judged request's warm work per
    /// period while idle (about 1% of a core at 5ms, 2% at 2ms), none under load, and none once
    /// --keep-warm-for has passed without a request. 0s: off
    #[arg(long, env = "SUTURE_KEEP_WARM", default_value = "0s", value_name = "DURATION", value_parser = parse_duration)]
    pub keep_warm: Duration,

    /// With --keep-warm: how long after the last judged request rehearsals go on; then they stop
    /// (no CPU) until a request is judged again. Rehearsals do not extend it
    #[arg(long, env = "SUTURE_KEEP_WARM_FOR", default_value = "1m", value_name = "DURATION", value_parser = parse_duration)]
    pub keep_warm_for: Duration,

    /// Threads that parse and evaluate judged requests [default: 0, one per core]. Evaluation is
    /// CPU-bound: more threads than cores add no throughput, but let a fast request overtake slow
    /// ones that hold every thread
    #[arg(long, env = "SUTURE_EVAL_THREADS", default_value_t = 0, value_name = "N")]
    pub eval_threads: usize,

    /// Per-request time budget, below the webhook's timeoutSeconds; beyond it the failurePolicy answers
    #[arg(long, env = "SUTURE_EVAL_TIMEOUT", default_value = "2s", value_name = "DURATION", value_parser = parse_duration)]
    pub eval_timeout: Duration,

    /// On SIGTERM/SIGINT, how long in-flight requests may take to finish
    #[arg(long, env = "SUTURE_SHUTDOWN_GRACE", default_value = "25s", value_name = "DURATION", value_parser = parse_duration)]
    pub shutdown_grace: Duration,

    /// Where decisions are logged, one JSON line each: stdout, off, or a file path (appended)
    #[arg(
        long,
        env = "SUTURE_DECISION_LOG",
        default_value = "stdout",
        value_name = "stdout|off|FILE"
    )]
    pub decision_log: String,

    /// Log level or tracing filter (logs go to stderr)
    #[arg(long, env = "SUTURE_LOG_LEVEL", default_value = "info", value_name = "LEVEL")]
    pub log_level: String,

    /// Self-protection: the gateway's own namespace
    #[arg(long, env = "SUTURE_PROTECT_NAMESPACE", value_name = "NS")]
    pub protect_namespace: Option<String>,

    /// Self-protection: the gateway Deployment's name
    #[arg(long, env = "SUTURE_PROTECT_DEPLOYMENT", value_name = "NAME")]
    pub protect_deployment: Option<String>,

    /// Self-protection: the ValidatingWebhookConfiguration's name
    #[arg(long, env = "SUTURE_PROTECT_WEBHOOK", value_name = "NAME")]
    pub protect_webhook: Option<String>,

    /// Self-protection: users still allowed to change the gateway's own objects
    #[arg(long, env = "SUTURE_PROTECT_ALLOW_USER", value_name = "USER", num_args = 1.., value_delimiter = ',')]
    pub protect_allow_user: Vec<String>,

    /// Namespace of the shared ledger's shards (one ConfigMap per replica) in live mode [default: POD_NAMESPACE, else the service account's namespace, else suture-system]
    #[arg(long, env = "SUTURE_LEDGER_NAMESPACE", value_name = "NS")]
    pub ledger_namespace: Option<String>,

    /// This replica's name in the shared ledger (its shard is suture-ledger-NAME) [default: POD_NAME, else the host name]
    #[arg(long, env = "SUTURE_LEDGER_IDENTITY", value_name = "NAME")]
    pub ledger_identity: Option<String>,

    /// How long admitted records are batched before this replica's shard is written: other replicas see them this much later (plus the watch's delay)
    #[arg(long, env = "SUTURE_LEDGER_FLUSH", default_value = "250ms", value_name = "DURATION", value_parser = parse_duration)]
    pub ledger_flush: Duration,

    /// Admitted records waiting for the shard writer at most; beyond, suture_gateway_ledger_queue_full_total counts them (they go out with the next write)
    #[arg(long, env = "SUTURE_LEDGER_QUEUE", default_value_t = 4096, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub ledger_queue: u32,

    /// Do not write PolicyReports / ClusterPolicyReports (wgpolicyk8s.io/v1alpha2) of Audit, Warn and Deny failures (live mode writes them by default; the CRD must be installed)
    #[arg(long, env = "SUTURE_NO_POLICY_REPORTS")]
    pub no_policy_reports: bool,

    /// How long a report result is kept after the request that last produced it
    #[arg(long, env = "SUTURE_REPORT_WINDOW", default_value = "1h", value_name = "DURATION", value_parser = parse_duration)]
    pub report_window: Duration,

    /// How long failures are batched before the reports that changed are written (each report at most once per interval)
    #[arg(long, env = "SUTURE_REPORT_FLUSH", default_value = "10s", value_name = "DURATION", value_parser = parse_duration)]
    pub report_flush: Duration,

    /// The Lease (in the ledger's namespace) whose holder writes the reports; the other replicas skip
    #[arg(
        long,
        env = "SUTURE_REPORT_LEASE",
        default_value = "suture-gateway-reports",
        value_name = "NAME"
    )]
    pub report_lease: String,

    /// Do not emit Events (SutureDenied, SutureWarned) on denied or warned objects (live mode emits them by default)
    #[arg(long, env = "SUTURE_NO_EVENTS")]
    pub no_events: bool,

    /// How often a repeated Event's count is written at most (its first occurrence is written at once)
    #[arg(long, env = "SUTURE_EVENT_REFRESH", default_value = "1m", value_name = "DURATION", value_parser = parse_duration)]
    pub event_refresh: Duration,

    /// How often policy files, snapshots and certificates are checked for changes
    #[arg(long, env = "SUTURE_POLL_INTERVAL", default_value = "2s", value_name = "DURATION", value_parser = parse_duration, hide = true)]
    pub poll_interval: Duration,

    /// Benchmark floor: the same TLS/HTTP stack answering every review allowed, without evaluation
    #[arg(long, env = "SUTURE_NOOP", hide = true)]
    pub noop: bool,

    /// Time each stage of every request (reading, pre-filter, the estimate, each policy, the
    /// answer) and write the times with its decision (`stages` in the decision log, so only with
    /// `--decision-log`): where a request's latency goes (for requests judged inline or answered
    /// without evaluation)
    #[arg(long, env = "SUTURE_STAGE_TIMINGS")]
    pub stage_timings: bool,
}

const AFTER_HELP: &str = "\
Examples:
  # Local demo: offline model from snapshots, self-signed certificate (the caBundle is printed)
  suture-gateway --self-signed --cluster snapshot/ -f policies/

  # In a cluster (certificates mounted from a cert-manager secret)
  suture-gateway --tls-cert /tls/tls.crt --tls-key /tls/tls.key --client-ca /tls/apiserver-ca.crt

Durations are written like 500ms, 2s, 1m. Every flag can also be set by the environment variable
shown beside it; list values in variables are comma-separated.";

/// `Deny`, `Warn` or `Audit` (any case).
fn parse_action(text: &str) -> Result<policies_cel::policy::Action, String> {
    use policies_cel::policy::Action;
    match text.to_ascii_lowercase().as_str() {
        "deny" => Ok(Action::Deny),
        "warn" => Ok(Action::Warn),
        "audit" => Ok(Action::Audit),
        _ => Err(format!("{text:?} is not an action (Deny, Warn or Audit)")),
    }
}

impl Config {
    /// The configuration from the process's arguments and environment (exits on a usage error).
    pub fn from_args() -> Self {
        Self::parse()
    }

    /// Offline mode: the model comes from `--cluster` snapshots.
    pub fn offline(&self) -> bool {
        !self.cluster.is_empty()
    }

    /// The namespace of the ledger's shards: `--ledger-namespace`, else the pod's namespace
    /// (`POD_NAMESPACE`, or the mounted service account's), else `suture-system`.
    pub fn ledger_namespace(&self) -> String {
        self.ledger_namespace
            .clone()
            .or_else(|| std::env::var("POD_NAMESPACE").ok())
            .or_else(|| {
                std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace").ok()
            })
            .map(|ns| ns.trim().to_owned())
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| "suture-system".to_owned())
    }

    /// This replica's identity in the ledger: `--ledger-identity`, else `POD_NAME`, else the
    /// host name.
    pub fn ledger_identity(&self) -> String {
        self.ledger_identity
            .clone()
            .or_else(|| std::env::var("POD_NAME").ok())
            .or_else(|| std::env::var("HOSTNAME").ok())
            .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "gateway".to_owned())
    }

    /// Whether PolicyReports are written: live mode, unless `--no-policy-reports`.
    pub fn policy_reports(&self) -> bool {
        !self.offline() && !self.noop && !self.no_policy_reports
    }

    /// Whether Events are emitted: live mode, unless `--no-events`.
    pub fn events(&self) -> bool {
        !self.offline() && !self.noop && !self.no_events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Config::command().debug_assert();
    }

    #[test]
    fn defaults_follow_the_contract() {
        let config = Config::try_parse_from(["suture-gateway", "--self-signed"]).unwrap();
        assert_eq!(config.listen.to_string(), "0.0.0.0:8443");
        assert_eq!(config.metrics_listen.to_string(), "0.0.0.0:8080");
        assert_eq!(config.max_model_age, Duration::from_secs(60));
        assert_eq!(config.eval_timeout, Duration::from_secs(2));
        assert_eq!(config.shutdown_grace, Duration::from_secs(25));
        assert_eq!(config.max_body_bytes, 6_291_456);
        assert_eq!(config.max_concurrency, 64);
        assert_eq!(config.body_timeout, Duration::from_secs(10));
        assert_eq!(config.max_buffered_bytes, 128 << 20);
        assert_eq!(config.max_connections, 1024);
        assert_eq!(config.eval_threads, 0);
        assert_eq!(config.tls_san, ["localhost", "127.0.0.1"]);
        assert_eq!(config.decision_log, "stdout");
        assert_eq!(config.ledger_flush, Duration::from_millis(250));
        assert_eq!(config.ledger_queue, 4096);
        assert_eq!(
            (config.report_window, config.report_flush, config.event_refresh),
            (
                Duration::from_secs(3600),
                Duration::from_secs(10),
                Duration::from_secs(60)
            )
        );
        assert_eq!(config.report_lease, "suture-gateway-reports");
        assert_eq!(config.pack_action, None);
        let audit =
            Config::try_parse_from(["suture-gateway", "--self-signed", "--pack-action", "audit"]).unwrap();
        assert_eq!(audit.pack_action, Some(policies_cel::policy::Action::Audit));
        assert!(
            Config::try_parse_from(["suture-gateway", "--self-signed", "--pack-action", "block"]).is_err()
        );
        assert!(config.policy_reports() && config.events(), "live mode reports");
        assert_eq!(
            config.keep_warm,
            Duration::ZERO,
            "the binary rehearses only when asked"
        );
        assert_eq!(config.keep_warm_for, Duration::from_secs(60));
        assert!(!config.offline());
        assert_eq!(
            config.kubernetes_version,
            VersionSetting::Given(policies_cel::KubernetesVersion::V1_36)
        );
        let named = Config::try_parse_from([
            "suture-gateway",
            "--self-signed",
            "--ledger-identity",
            "replica-a",
            "--ledger-namespace",
            "ops",
        ])
        .unwrap();
        assert_eq!(
            (named.ledger_identity(), named.ledger_namespace()),
            ("replica-a".into(), "ops".into())
        );
    }

    #[test]
    fn every_flag_has_an_environment_variable() {
        let command = Config::command();
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            assert!(arg.get_env().is_some(), "--{id} has no environment variable");
        }
    }

    #[test]
    fn the_kubernetes_version_is_read_and_checked() {
        let config = Config::try_parse_from([
            "suture-gateway",
            "--self-signed",
            "--kubernetes-version",
            "v1.37.1",
        ])
        .unwrap();
        assert_eq!(
            config.kubernetes_version,
            VersionSetting::Given(policies_cel::KubernetesVersion::V1_37)
        );
        let auto = Config::try_parse_from(["suture-gateway", "--kubernetes-version", "auto"]).unwrap();
        assert_eq!(auto.kubernetes_version, VersionSetting::Auto);
        let error =
            Config::try_parse_from(["suture-gateway", "--self-signed", "--kubernetes-version", "1.30"])
                .unwrap_err();
        assert!(
            error.to_string().contains("Kubernetes 1.30 is not supported"),
            "{error}"
        );
    }

    #[test]
    fn certificate_files_come_in_pairs() {
        let error = Config::try_parse_from(["suture-gateway", "--tls-cert", "a.pem"]).unwrap_err();
        assert!(error.to_string().contains("--tls-key"), "{error}");
        assert!(
            Config::try_parse_from([
                "suture-gateway",
                "--self-signed",
                "--tls-cert",
                "a",
                "--tls-key",
                "b"
            ])
            .is_err()
        );
    }
}
