//! The listeners: an accept loop on a tokio `TcpListener`, TLS handshakes under a timeout
//! (tokio-rustls), and warp routes served by hyper-util's HTTP/1.1 + HTTP/2 connection builder.
//! Shutdown stops accepting at once and lets in-flight requests finish within the grace period
//! (hyper-util's `GracefulShutdown`). Generic over the routes, so the webhook, the `--noop` floor
//! and the operations listener share one stack.
//!
//! What one client can hold is bounded: a connection at most [`HANDSHAKE_TIMEOUT`] in its TLS
//! handshake and [`HEADER_READ_TIMEOUT`] sending a request's headers (or idle between requests),
//! HTTP/2 streams and header lists capped, and at most `max_connections` connections open at once
//! (beyond them, new connections wait in the listen backlog while the connections already open,
//! kube-apiserver's kept-alive ones among them, are served as before).

use std::convert::Infallible;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use warp::Filter;
use warp::reply::Response;

/// How long a client may take to complete its TLS handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client may take to send a request's headers (slow-loris protection).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// HTTP/2 streams one connection may have open at once.
pub const MAX_CONCURRENT_STREAMS: u32 = 256;

/// The largest HTTP/2 header list a client may send (an AdmissionReview's headers are a few
/// hundred bytes).
pub const MAX_HEADER_LIST_SIZE: u32 = 64 << 10;

/// How connections are set up: TLS or plain.
#[derive(Clone)]
pub enum Transport {
    Tls(TlsAcceptor),
    Plain,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Tls(_) => "Tls",
            Self::Plain => "Plain",
        })
    }
}

/// Serves `routes` on `listener`, at most `max_connections` connections at once, until
/// `shutdown` is cancelled, then drains for up to `grace`.
pub async fn serve<F>(
    listener: TcpListener,
    transport: Transport,
    routes: F,
    max_connections: usize,
    shutdown: CancellationToken,
    grace: Duration,
) where
    F: Filter<Extract = (Response,), Error = Infallible> + Clone + Send + Sync + 'static,
{
    let graceful = GracefulShutdown::new();
    let builder = {
        let mut builder = Builder::new(TokioExecutor::new());
        builder
            .http1()
            .keep_alive(true)
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT);
        builder
            .http2()
            .max_concurrent_streams(MAX_CONCURRENT_STREAMS)
            .max_header_list_size(MAX_HEADER_LIST_SIZE);
        std::sync::Arc::new(builder)
    };
    let open = std::sync::Arc::new(Semaphore::new(max_connections.clamp(1, Semaphore::MAX_PERMITS)));
    loop {
        let slot = tokio::select! {
            biased;
            () = shutdown.cancelled() => break,
            slot = std::sync::Arc::clone(&open).acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break, // never closed
            },
        };
        let (tcp, peer) = tokio::select! {
            biased;
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(error) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Headers and body in one segment: no delayed-ACK stalls on the API server's side.
        let _ = tcp.set_nodelay(true);
        let transport = transport.clone();
        let routes = routes.clone();
        let builder = std::sync::Arc::clone(&builder);
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            // The connection's slot, given back when it closes.
            let _slot = slot;
            match transport {
                Transport::Plain => serve_connection(&builder, watcher, tcp, routes).await,
                Transport::Tls(acceptor) => match handshake(&acceptor, tcp).await {
                    Ok(tls) => serve_connection(&builder, watcher, tls, routes).await,
                    Err(error) => tracing::debug!(%peer, %error, "TLS handshake failed"),
                },
            }
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => tracing::debug!("all connections drained"),
        () = tokio::time::sleep(grace) => tracing::warn!(
            grace = ?grace,
            "shutdown grace period over; closing the remaining connections"
        ),
    }
}

async fn handshake(
    acceptor: &TlsAcceptor,
    tcp: TcpStream,
) -> std::io::Result<tokio_rustls::server::TlsStream<TcpStream>> {
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
        Ok(result) => result,
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "TLS handshake timed out",
        )),
    }
}

async fn serve_connection<I, F>(
    builder: &Builder<TokioExecutor>,
    watcher: hyper_util::server::graceful::Watcher,
    io: I,
    routes: F,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    F: Filter<Extract = (Response,), Error = Infallible> + Clone + Send + Sync + 'static,
{
    let service = TowerToHyperService::new(warp::service(routes));
    let connection = builder.serve_connection(TokioIo::new(io), service);
    if let Err(error) = watcher.watch(connection).await {
        tracing::debug!(%error, "connection ended with an error");
    }
}
