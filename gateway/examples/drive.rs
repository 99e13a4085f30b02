//! A small HTTPS keep-alive load driver for quick comparisons of the gateway with its `--noop`
//! floor (the repository's benchmark script uses a real load tool; this is for a sanity check).
//!
//! `cargo run --release -p suture-gateway --example drive -- URL CA_PEM BODY [CONCURRENCY] [SECONDS]`

use std::sync::Arc;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, ca, body, rest @ ..] = args.as_slice() else {
        anyhow::bail!("usage: drive URL CA_PEM BODY [CONCURRENCY] [SECONDS]");
    };
    let concurrency: usize = rest.first().map_or(Ok(64), |c| c.parse())?;
    let seconds: u64 = rest.get(1).map_or(Ok(10), |s| s.parse())?;
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(ca)?)?)
        .http1_only()
        .pool_max_idle_per_host(concurrency)
        .build()?;
    let body = Arc::new(std::fs::read(body)?);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (client, url, body) = (client.clone(), url.clone(), Arc::clone(&body));
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < deadline {
                let started = Instant::now();
                let response = client.post(&url).body(body.to_vec()).send().await?;
                let _ = response.bytes().await?;
                latencies.push(started.elapsed());
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await??);
    }
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    println!(
        "{} requests in {seconds}s: {:.0} req/s, p50 {:?}, p99 {:?}",
        latencies.len(),
        latencies.len() as f64 / seconds as f64,
        at(0.5),
        at(0.99)
    );
    Ok(())
}
