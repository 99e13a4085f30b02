//! The attack driver of `bench/attack/run.sh`: while a prober sends the gateway an ordinary
//! review over a kept-alive connection (as kube-apiserver does) and, now and then, over a new
//! connection, phases of hostile clients run one after the other:
//!
//! - `slowloris`: connections that never start their TLS handshake, that send their headers a
//!   byte at a time, and that trickle a body; each reopened when the gateway closes it;
//! - `bodies`: clients posting maximum-size reviews back to back, and bodies over the limit;
//! - `exhausting`: clients posting a review that policies with budget-exhausting expressions
//!   judge;
//! - `all`: the three at once.
//!
//! Per phase it reports the prober's latency (median, p99, max, median over the baseline's),
//! the prober's failures (transport errors, non-200 answers, answers that differ from the
//! baseline's verdict), what the attackers' requests got, and the gateway's resident memory
//! (VmRSS of `--pid`, sampled every 250 ms). Markdown on stdout.
//!
//! `cargo run --release -p suture-gateway --example attack -- --url URL --ca CA_PEM --review FILE
//!  --exhausting FILE --pid PID [--seconds 20] [--slow 600] [--flooders 16] [--max-body N]`

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// The command line.
struct Args {
    url: String,
    ca: Vec<u8>,
    review: Vec<u8>,
    exhausting: Vec<u8>,
    pid: u32,
    seconds: u64,
    slow: usize,
    flooders: usize,
    max_body: usize,
}

fn args() -> anyhow::Result<Args> {
    let mut map = BTreeMap::new();
    let mut argv = std::env::args().skip(1);
    while let Some(flag) = argv.next() {
        let value = argv.next().with_context(|| format!("{flag} needs a value"))?;
        map.insert(flag.trim_start_matches("--").to_owned(), value);
    }
    let get = |name: &str| {
        map.get(name)
            .cloned()
            .with_context(|| format!("--{name} is required"))
    };
    let number = |name: &str, default: u64| -> anyhow::Result<u64> {
        map.get(name)
            .map_or(Ok(default), |v| v.parse().with_context(|| format!("--{name}")))
    };
    Ok(Args {
        url: get("url")?,
        ca: std::fs::read(get("ca")?).context("--ca")?,
        review: std::fs::read(get("review")?).context("--review")?,
        exhausting: std::fs::read(get("exhausting")?).context("--exhausting")?,
        pid: u32::try_from(number("pid", 0)?)?,
        seconds: number("seconds", 20)?,
        slow: usize::try_from(number("slow", 600)?)?,
        flooders: usize::try_from(number("flooders", 16)?)?,
        max_body: usize::try_from(number("max-body", 6_291_456)?)?,
    })
}

/// What the attackers' requests got, by answer ("200", "413", "transport error"...).
#[derive(Default)]
struct Tally(Mutex<BTreeMap<String, u64>>);

impl Tally {
    fn count(&self, what: impl Into<String>) {
        if let Ok(mut map) = self.0.lock() {
            *map.entry(what.into()).or_default() += 1;
        }
    }

    fn render(&self) -> String {
        let map = self.0.lock().map(|m| m.clone()).unwrap_or_default();
        if map.is_empty() {
            return "—".into();
        }
        map.iter()
            .map(|(k, v)| format!("{v} × {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One phase's figures.
struct Figures {
    kept: Vec<Duration>,
    fresh: Vec<Duration>,
    failures: u64,
    attackers: Arc<Tally>,
    rss_kib: Vec<u64>,
}

fn client(ca: &[u8], fresh: bool) -> anyhow::Result<reqwest::Client> {
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca)?)
        .http1_only()
        .timeout(Duration::from_secs(30));
    if fresh {
        builder = builder.pool_max_idle_per_host(0);
    }
    Ok(builder.build()?)
}

/// The verdict of an answer: `allowed` and the denial's message.
fn verdict(body: &[u8]) -> Option<String> {
    let review: serde_json::Value = serde_json::from_slice(body).ok()?;
    let response = review.get("response")?;
    Some(format!(
        "{} {}",
        response.get("allowed")?,
        response["status"]["message"]
    ))
}

async fn post(client: &reqwest::Client, url: &str, body: Vec<u8>) -> Result<(u16, Vec<u8>), String> {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let bytes = response.bytes().await.map_err(|e| e.to_string())?;
    Ok((status, bytes.to_vec()))
}

fn vm_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn tls_config(ca: &[u8]) -> anyhow::Result<Arc<rustls::ClientConfig>> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca) {
        roots.add(cert?)?;
    }
    let config =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The slow clients' three ways of holding a connection.
#[derive(Clone, Copy)]
enum Slow {
    NoHandshake,
    ByteByByteHeaders,
    TrickledBody,
}

/// Holds one slow connection open, reopening it whenever the gateway closes it, until `stop`.
async fn slow_client(
    kind: Slow,
    addr: std::net::SocketAddr,
    tls: Arc<rustls::ClientConfig>,
    stop: Arc<AtomicBool>,
    closed: Arc<AtomicU64>,
) {
    while !stop.load(Ordering::Relaxed) {
        let Ok(tcp) = TcpStream::connect(addr).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        match kind {
            Slow::NoHandshake => {
                // Wait for the gateway to give up on the handshake.
                let mut tcp = tcp;
                let mut buf = [0u8; 1];
                let _ = tokio::select! {
                    read = tokio::io::AsyncReadExt::read(&mut tcp, &mut buf) => read.ok(),
                    () = wait_for(&stop) => None,
                };
            }
            Slow::ByteByByteHeaders | Slow::TrickledBody => {
                let name = ServerName::try_from("127.0.0.1").map(|n| n.to_owned());
                let (Ok(name), connector) = (name, TlsConnector::from(Arc::clone(&tls))) else {
                    return;
                };
                let Ok(mut stream) = connector.connect(name, tcp).await else {
                    closed.fetch_add(1, Ordering::Relaxed);
                    continue;
                };
                let (prefix, drip): (Vec<u8>, &[u8]) = match kind {
                    Slow::ByteByByteHeaders => (Vec::new(), b"POST /validate HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
                    _ => (
                        b"POST /validate HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n".to_vec(),
                        &[b' '; 100_000],
                    ),
                };
                if stream.write_all(&prefix).await.is_err() {
                    closed.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                for byte in drip {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let sent = async {
                        stream.write_all(std::slice::from_ref(byte)).await?;
                        stream.flush().await
                    };
                    if sent.await.is_err() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
        closed.fetch_add(1, Ordering::Relaxed);
    }
}

async fn wait_for(stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A maximum-size review: the prober's review with an annotation that fills it to `size` bytes.
fn padded_review(review: &[u8], size: usize) -> anyhow::Result<Vec<u8>> {
    let mut value: serde_json::Value = serde_json::from_slice(review)?;
    let base = serde_json::to_vec(&value)?.len();
    let field = if value["request"]["object"].is_object() {
        "object"
    } else {
        "oldObject"
    };
    let Some(object) = value["request"].get_mut(field).filter(|o| o.is_object()) else {
        bail!("the review has no object to pad");
    };
    let pad = size.saturating_sub(base + 64);
    object["metadata"]["annotations"]["attack.suture.dev/padding"] =
        serde_json::Value::String("x".repeat(pad));
    Ok(serde_json::to_vec(&value)?)
}

/// Posts `body` back to back until `stop`, counting what each answer was.
async fn flooder(
    client: reqwest::Client,
    url: String,
    body: Arc<Vec<u8>>,
    stop: Arc<AtomicBool>,
    tally: Arc<Tally>,
) {
    while !stop.load(Ordering::Relaxed) {
        match post(&client, &url, body.to_vec()).await {
            Ok((status, _)) => tally.count(status.to_string()),
            Err(_) => tally.count("transport error"),
        }
    }
}

async fn phase(args: &Args, name: &str, expected: &str) -> anyhow::Result<Figures> {
    let stop = Arc::new(AtomicBool::new(false));
    let attackers = Arc::new(Tally::default());
    let closed = Arc::new(AtomicU64::new(0));
    let addr: std::net::SocketAddr = {
        let authority = args.url.trim_start_matches("https://");
        let authority = authority.split('/').next().unwrap_or(authority);
        authority
            .parse()
            .context("--url must be https://IP:PORT/validate")?
    };
    let tls = tls_config(&args.ca)?;
    let mut tasks = Vec::new();
    let slowloris = matches!(name, "slowloris" | "all");
    let bodies = matches!(name, "bodies" | "all");
    let exhausting = matches!(name, "exhausting" | "all");
    if slowloris {
        for i in 0..args.slow {
            let kind = [Slow::NoHandshake, Slow::ByteByByteHeaders, Slow::TrickledBody][i % 3];
            tasks.push(tokio::spawn(slow_client(
                kind,
                addr,
                Arc::clone(&tls),
                Arc::clone(&stop),
                Arc::clone(&closed),
            )));
        }
    }
    if bodies {
        let max = Arc::new(padded_review(&args.review, args.max_body)?);
        let over = Arc::new(vec![b' '; args.max_body + (1 << 20)]);
        for i in 0..args.flooders {
            let body = if i % 2 == 0 {
                Arc::clone(&max)
            } else {
                Arc::clone(&over)
            };
            tasks.push(tokio::spawn(flooder(
                client(&args.ca, false)?,
                args.url.clone(),
                body,
                Arc::clone(&stop),
                Arc::clone(&attackers),
            )));
        }
    }
    if exhausting {
        let body = Arc::new(args.exhausting.clone());
        for _ in 0..args.flooders {
            tasks.push(tokio::spawn(flooder(
                client(&args.ca, false)?,
                args.url.clone(),
                Arc::clone(&body),
                Arc::clone(&stop),
                Arc::clone(&attackers),
            )));
        }
    }

    // The prober: a kept-alive client, one request every 50 ms; a new connection every 500 ms.
    let kept_client = client(&args.ca, false)?;
    let fresh_client = client(&args.ca, true)?;
    let mut kept = Vec::new();
    let mut fresh = Vec::new();
    let mut failures = 0;
    let mut rss_kib = Vec::new();
    let started = Instant::now();
    let mut round = 0u64;
    while started.elapsed() < Duration::from_secs(args.seconds) {
        let use_fresh = round % 10 == 9;
        round += 1;
        let sent = Instant::now();
        let client = if use_fresh { &fresh_client } else { &kept_client };
        match post(client, &args.url, args.review.clone()).await {
            Ok((200, body)) if verdict(&body).as_deref() == Some(expected) => {
                if use_fresh {
                    fresh.push(sent.elapsed())
                } else {
                    kept.push(sent.elapsed())
                }
            }
            _ => failures += 1,
        }
        if round.is_multiple_of(5) {
            rss_kib.extend(vm_rss_kib(args.pid));
        }
        tokio::time::sleep(Duration::from_millis(50).saturating_sub(sent.elapsed())).await;
    }
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.abort();
    }
    if slowloris {
        attackers.count(format!(
            "slow connection closed by the gateway ({} in all)",
            closed.load(Ordering::Relaxed)
        ));
    }
    // Let the gateway drop what the attackers left before the next phase.
    tokio::time::sleep(Duration::from_secs(3)).await;
    Ok(Figures {
        kept,
        fresh,
        failures,
        attackers,
        rss_kib,
    })
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let at = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = args()?;
    let expected = {
        let (status, body) = post(&client(&args.ca, false)?, &args.url, args.review.clone())
            .await
            .map_err(|e| anyhow::anyhow!("the gateway does not answer: {e}"))?;
        if status != 200 {
            bail!("the probe review got HTTP {status}");
        }
        verdict(&body).context("the probe review's answer is not a review")?
    };
    println!(
        "| phase | probe p50 ms (kept-alive) | p99 | max | p50 / baseline | new-connection p50 / max ms | probe failures | attackers' requests | gateway VmRSS max MiB |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---|---:|");
    let mut baseline = None;
    for name in ["baseline", "slowloris", "bodies", "exhausting", "all"] {
        let mut figures = phase(&args, name, &expected).await?;
        figures.kept.sort();
        figures.fresh.sort();
        let p50 = quantile(&figures.kept, 0.5);
        let base = *baseline.get_or_insert(p50);
        println!(
            "| {name} | {} | {} | {} | {:.2}× | {} / {} | {} of {} | {} | {:.1} |",
            ms(p50),
            ms(quantile(&figures.kept, 0.99)),
            ms(quantile(&figures.kept, 1.0)),
            p50.as_secs_f64() / base.as_secs_f64().max(1e-9),
            ms(quantile(&figures.fresh, 0.5)),
            ms(quantile(&figures.fresh, 1.0)),
            figures.failures,
            figures.kept.len() + figures.fresh.len() + figures.failures as usize,
            figures.attackers.render(),
            figures.rss_kib.iter().max().copied().unwrap_or(0) as f64 / 1024.0,
        );
    }
    if let Some(rss) = vm_rss_kib(args.pid) {
        println!("\nGateway VmRSS after the phases: {:.1} MiB", rss as f64 / 1024.0);
    }
    Ok(())
}
