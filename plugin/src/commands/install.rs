//! `kubectl suture install`: renders the gateway's manifests (Namespace, RBAC, Deployment, PDB,
//! Service, TLS, the SafetyPolicy CRD and the webhook configuration) to stdout or a directory.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::exit::{Exit, Failure, OrExit};
use crate::install::{
    self, DEFAULT_KEEP_WARM, FailurePolicy, InstallOptions, IssuerRef, Tls, TlsMaterial, WebhookUrl, names,
};

/// The webhook's failure policy, as the flag reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailurePolicyArg {
    #[value(name = "Fail")]
    Fail,
    #[value(name = "Ignore")]
    Ignore,
}

/// The built-in pack's action in the gateway, as the flag reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PackActionArg {
    #[value(name = "Audit")]
    Audit,
    #[value(name = "Warn")]
    Warn,
    #[value(name = "Deny")]
    Deny,
}

/// Arguments of `kubectl suture install`.
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct InstallArgs {
    /// The gateway's namespace (never sent to the gateway)
    #[arg(short = 'n', long, default_value = names::DEFAULT_NAMESPACE, value_name = "NS")]
    pub namespace: String,

    /// The gateway's container image [default: ghcr.io/suture-dev/suture-gateway:v<version>]
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,

    /// Gateway replicas (2 or more keep admission up through node drains and rollouts)
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(i32).range(1..=50))]
    pub replicas: i32,

    /// An operator identity whose requests are judged: a username as kube-apiserver reports it
    /// (repeatable)
    #[arg(long = "identity", value_name = "USER")]
    pub identities: Vec<String>,

    /// An operator service account whose requests are judged (repeatable)
    #[arg(long = "service-account", value_name = "NS/NAME", value_parser = parse_service_account)]
    pub service_accounts: Vec<String>,

    /// Judge every service account's requests, except the control plane's controllers' (by
    /// name, in kube-system) and the gateway's own
    /// (implied when no --identity or --service-account is given)
    #[arg(long)]
    pub all_service_accounts: bool,

    /// A user still allowed to change the gateway's own objects, e.g. your deploy pipeline
    /// (repeatable)
    #[arg(long = "allow-user", value_name = "USER")]
    pub allowed_users: Vec<String>,

    /// What kube-apiserver does when the gateway cannot answer: Fail refuses the judged
    /// identities' writes, Ignore admits them unjudged
    #[arg(long, value_enum, default_value = "Fail")]
    pub failure_policy: FailurePolicyArg,

    /// kube-apiserver's wait per webhook call; the gateway's evaluation budget is set below it
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(i32).range(1..=30))]
    pub timeout_seconds: i32,

    /// Generate a CA and serving certificate: renders the TLS Secret and the caBundle
    #[arg(long, conflicts_with_all = ["cert_manager", "ca_bundle"])]
    pub self_signed: bool,

    /// Let cert-manager issue the certificate, from ISSUER (`name` for a ClusterIssuer,
    /// `Issuer/name` for an Issuer in the namespace); without ISSUER a self-signed Issuer is
    /// rendered. This is the default.
    #[arg(long, value_name = "ISSUER", num_args = 0..=1, default_missing_value = "", conflicts_with = "ca_bundle")]
    pub cert_manager: Option<String>,

    /// The PEM CA bundle kube-apiserver trusts; the TLS Secret is rendered from --tls-cert and
    /// --tls-key, or created by you
    #[arg(long, value_name = "FILE")]
    pub ca_bundle: Option<PathBuf>,

    /// PEM serving certificate for the TLS Secret (with --ca-bundle)
    #[arg(long, value_name = "FILE", requires_all = ["ca_bundle", "tls_key"])]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key for the TLS Secret (with --ca-bundle)
    #[arg(long, value_name = "FILE", requires_all = ["ca_bundle", "tls_cert"])]
    pub tls_key: Option<PathBuf>,

    /// Run the gateway outside the cluster (e.g. on the control-plane hosts) at this HTTPS base
    /// URL: the webhooks call URL/validate, and no Deployment, Service or PDB is rendered. Needs
    /// --self-signed (the certificate also names the URL's host) or --ca-bundle
    #[arg(long, value_name = "URL", value_parser = parse_webhook_url)]
    pub webhook_url: Option<WebhookUrl>,

    /// Keep the gateway's judged path warm: after this long without a judged request it
    /// rehearses the last ones (nothing recorded), so an operator's next request does not find
    /// the CPU caches cold. Costs about 2% of a core per replica at 2ms while operators are at
    /// work, nothing once --keep-warm-for has passed without a request (docs/benchmarks.md, "Latency inside
    /// kube-apiserver"). 0s: off
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_KEEP_WARM, value_parser = parse_period)]
    pub keep_warm: Period,

    /// How long after the last judged request the gateway keeps rehearsing [default: the
    /// gateway's, 1m]
    #[arg(long, value_name = "DURATION", value_parser = parse_period)]
    pub keep_warm_for: Option<Period>,

    /// The action of every built-in pack policy: Audit (PolicyReports and metrics only), Warn
    /// (operators see a warning), or Deny (the pack's own) — the audit-first rollout
    /// (docs/rollout.md)
    #[arg(long, value_enum, value_name = "ACTION")]
    pub pack_action: Option<PackActionArg>,

    /// Also render the wg-policy PolicyReport and ClusterPolicyReport CRDs (wgpolicyk8s.io/v1alpha2)
    /// the gateway writes its reports into; leave off where Kyverno, Kubewarden or Policy
    /// Reporter installed them
    #[arg(long)]
    pub policy_report_crds: bool,

    /// Write one file per object into DIR instead of one stream to stdout
    #[arg(short = 'o', long = "output-dir", value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
}

const AFTER_HELP: &str = concat!(
    "\
Examples:
  # Judge two operators' requests; cert-manager issues the certificate
  kubectl suture install --service-account ops/db-operator --service-account ops/backup \\
    | kubectl apply --server-side -f -

  # Without cert-manager: a generated CA and certificate, one file per object
  kubectl suture install --all-service-accounts --self-signed -o deploy/

  # The gateway runs on the control-plane hosts, outside the cluster
  kubectl suture install --service-account ops/db-operator --webhook-url https://10.0.0.5:8443 \\
    --ca-bundle ca.pem --tls-cert tls.crt --tls-key tls.key

  # Availability first: admit requests unjudged while the gateway is down
  kubectl suture install --identity alice --failure-policy Ignore --timeout-seconds 3

See docs/gateway.md for what each object does and why.

",
    "Exit status:
  0  success (allowed / value printed / estimate printed / all cases passed)
  1  denied / evaluation error / some case failed
  2  usage error or unreadable input
  3  a policy or expression failed to load or compile"
);

fn parse_service_account(text: &str) -> Result<String, String> {
    match text.split_once('/') {
        Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok(format!("system:serviceaccount:{ns}:{name}"))
        }
        _ => Err(format!("`{text}` is not NAMESPACE/NAME")),
    }
}

/// A period passed on to the gateway as written (`--keep-warm`, `--keep-warm-for`).
#[derive(Debug, Clone, PartialEq)]
pub struct Period {
    /// As the gateway reads it, e.g. `2ms`.
    pub text: String,
    /// Its length in seconds.
    pub seconds: f64,
}

/// A period as the gateway reads it: a number with `ms`, `s` or `m` (zero allowed).
fn parse_period(text: &str) -> Result<Period, String> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit {
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        _ => 0.0,
    };
    match number.parse::<f64>() {
        Ok(value) if scale > 0.0 && value.is_finite() && value >= 0.0 => Ok(Period {
            text: text.to_owned(),
            seconds: value * scale,
        }),
        _ => Err(format!(
            "`{text}` is not a period the gateway reads (write e.g. 2ms, 1s or 1m)"
        )),
    }
}

/// The `--keep-warm` period to render and its `--keep-warm-for` window, checked as the gateway
/// would check them: none when `--keep-warm` is zero.
fn keep_warm(args: &InstallArgs) -> Result<(Option<String>, Option<String>), Failure> {
    if args.keep_warm.seconds == 0.0 {
        return Ok((None, None));
    }
    let window = args.keep_warm_for.as_ref();
    if let Some(window) = window
        && window.seconds < args.keep_warm.seconds
    {
        return Err(Failure::usage(anyhow::anyhow!(
            "--keep-warm-for {} is shorter than --keep-warm {}: no rehearsal would run",
            window.text,
            args.keep_warm.text
        )));
    }
    Ok((
        Some(args.keep_warm.text.clone()),
        window.map(|window| window.text.clone()),
    ))
}

fn parse_webhook_url(text: &str) -> Result<WebhookUrl, String> {
    WebhookUrl::parse(text).map_err(|error| error.to_string())
}

fn parse_issuer(text: &str) -> Result<Option<IssuerRef>, Failure> {
    if text.is_empty() {
        return Ok(None);
    }
    let (kind, name) = match text.split_once('/') {
        Some(("Issuer", name)) => ("Issuer", name),
        Some(("ClusterIssuer", name)) => ("ClusterIssuer", name),
        Some((kind, _)) => {
            return Err(Failure::usage(anyhow::anyhow!(
                "--cert-manager: `{kind}` is not Issuer or ClusterIssuer"
            )));
        }
        None => ("ClusterIssuer", text),
    };
    if name.is_empty() {
        return Err(Failure::usage(anyhow::anyhow!(
            "--cert-manager: the issuer has no name"
        )));
    }
    Ok(Some(IssuerRef {
        kind: kind.to_owned(),
        name: name.to_owned(),
    }))
}

fn read_pem(path: &PathBuf, what: &str) -> Result<String, Failure> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the {what} {}", path.display()))
        .or_exit(Exit::Usage)?;
    if !text.contains("-----BEGIN ") {
        return Err(Failure::usage(anyhow::anyhow!(
            "{} is not PEM ({what})",
            path.display()
        )));
    }
    Ok(text)
}

fn tls(args: &InstallArgs) -> Result<Tls, Failure> {
    if args.self_signed {
        let mut names = names::service_dns_names(&args.namespace);
        if let Some(url) = &args.webhook_url {
            names.insert(0, url.host().to_owned());
        }
        let material = install::tls::self_signed_for(&names).or_exit(Exit::Failure)?;
        return Ok(Tls::Material(material));
    }
    if let Some(ca_bundle) = &args.ca_bundle {
        let ca_pem = read_pem(ca_bundle, "CA bundle")?;
        return Ok(match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => {
                let cert_pem = read_pem(cert, "certificate")?;
                // kube-apiserver calls `<service>.<namespace>.svc` (or the webhook URL's
                // host): a certificate it would refuse is a usage error now rather than a
                // webhook outage later.
                let name = match &args.webhook_url {
                    Some(url) => url.host().to_owned(),
                    None => format!("{}.{}.svc", names::GATEWAY, args.namespace),
                };
                install::tls::verify(&ca_pem, &cert_pem, &name)
                    .with_context(|| format!("--tls-cert {}", cert.display()))
                    .or_exit(Exit::Usage)?;
                Tls::Material(TlsMaterial {
                    cert_pem,
                    key_pem: read_pem(key, "private key")?,
                    ca_pem,
                })
            }
            _ => Tls::CaBundle { ca_pem },
        });
    }
    if args.webhook_url.is_some() {
        return Err(Failure::usage(anyhow::anyhow!(
            "--webhook-url: a gateway outside the cluster needs --self-signed or --ca-bundle \
             (cert-manager issues certificates for the in-cluster Service only)"
        )));
    }
    Ok(Tls::CertManager {
        issuer: parse_issuer(args.cert_manager.as_deref().unwrap_or(""))?,
    })
}

/// The options an install is rendered from.
pub fn options(args: &InstallArgs) -> Result<InstallOptions, Failure> {
    let mut identities = args.identities.clone();
    for account in &args.service_accounts {
        if !identities.contains(account) {
            identities.push(account.clone());
        }
    }
    let (keep_warm, keep_warm_for) = keep_warm(args)?;
    Ok(InstallOptions {
        namespace: args.namespace.clone(),
        image: args.image.clone().unwrap_or_else(names::default_image),
        replicas: args.replicas,
        identities,
        all_service_accounts: args.all_service_accounts,
        allowed_users: args.allowed_users.clone(),
        failure_policy: match args.failure_policy {
            FailurePolicyArg::Fail => FailurePolicy::Fail,
            FailurePolicyArg::Ignore => FailurePolicy::Ignore,
        },
        timeout_seconds: args.timeout_seconds,
        tls: tls(args)?,
        webhook_url: args.webhook_url.clone(),
        keep_warm,
        keep_warm_for,
        policy_report_crds: args.policy_report_crds,
        pack_action: args.pack_action.map(|action| {
            match action {
                PackActionArg::Audit => "Audit",
                PackActionArg::Warn => "Warn",
                PackActionArg::Deny => "Deny",
            }
            .to_owned()
        }),
    })
}

/// Renders the manifests to stdout or `--output-dir`.
pub fn run(args: &InstallArgs) -> Result<Exit, Failure> {
    if args.namespace.is_empty() || args.namespace == "kube-system" {
        return Err(Failure::usage(anyhow::anyhow!(
            "--namespace: the gateway needs a namespace of its own (not `{}`)",
            args.namespace
        )));
    }
    let options = options(args)?;
    match &args.output_dir {
        None => {
            let text = install::render_stream(&options, "kubectl suture install").or_exit(Exit::Failure)?;
            print!("{text}");
        }
        Some(dir) => {
            let documents = install::render(&options).or_exit(Exit::Failure)?;
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))
                .or_exit(Exit::Usage)?;
            for document in &documents {
                let path = dir.join(&document.file);
                std::fs::write(&path, document.text())
                    .with_context(|| format!("cannot write {}", path.display()))
                    .or_exit(Exit::Usage)?;
            }
            eprintln!("wrote {} manifests to {}", documents.len(), dir.display());
        }
    }
    Ok(Exit::Success)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::exit::EXIT_CODES_HELP;

    #[test]
    fn the_exit_codes_are_documented() {
        assert!(AFTER_HELP.ends_with(EXIT_CODES_HELP));
    }

    #[test]
    fn service_accounts_become_usernames() {
        assert_eq!(
            parse_service_account("ops/db-operator").unwrap(),
            "system:serviceaccount:ops:db-operator"
        );
        assert!(parse_service_account("db-operator").is_err());
        assert!(parse_service_account("ops/").is_err());
        assert!(parse_service_account("a/b/c").is_err());
    }

    #[test]
    fn issuers() {
        assert_eq!(parse_issuer("").unwrap(), None);
        assert_eq!(
            parse_issuer("letsencrypt").unwrap(),
            Some(IssuerRef {
                kind: "ClusterIssuer".into(),
                name: "letsencrypt".into()
            })
        );
        assert_eq!(parse_issuer("Issuer/ca").unwrap().unwrap().kind, "Issuer");
        assert!(parse_issuer("Foo/ca").is_err());
    }
}
