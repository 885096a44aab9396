//! The accept loop: hyper with a timer, so the server's own limits actually fire.
//!
//! `axum::serve` installs no timer, so hyper's header-read timeout never fires there and a
//! client that trickles (or never sends) its headers holds a connection for good. Here every
//! connection gets: a header-read timeout (which also closes idle keep-alive connections), a cap
//! on the request head's size (431) and on the number of header fields, and graceful shutdown:
//! on the signal we mark the replica not ready, keep serving for `server.drain_delay_ms`, stop
//! accepting, let in-flight requests finish within `server.shutdown_grace_ms`, then return.
//!
//! Writes are bounded too (`write_stall`): a client that pipelines requests and never reads
//! the answers fills its socket's send buffer, and hyper would wait on it for good. Once no
//! response byte has gone out for `server.request_timeout_ms` (the same bound a caller gets for
//! a whole request), the connection is closed. What one connection can queue is bounded by
//! hyper's `max_buf_size` (read and write buffers) and the kernel's socket buffers, since hyper
//! reads the next pipelined request only once the previous answer is buffered.
//!
//! During shutdown, readiness flips first, and the listener stays open for the drain delay:
//! `/readyz` answers 503 `draining` and lookups are still served, so a load balancer that polls
//! `/readyz` sees the replica leave (a refused connection would tell it nothing it can act on
//! before its own timeouts) while traffic already routed here is answered. Then the listener
//! closes and new connections are refused.

mod write_stall;

use std::time::Duration;

use std::net::SocketAddr;

use axum::Router;
use axum::http::Request;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

use crate::config::ms;
use crate::http::client_addr::Peer;
use crate::state::AppState;

/// Serves `app` on `listener` until `shutdown` resolves, then drains: not ready at once,
/// still serving for the drain delay, then no new connections and the grace for those open.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    state: AppState,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let limits = &state.settings().server;
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(ms(limits.header_read_timeout_ms))
        .max_buf_size(limits.max_header_bytes.max(8192))
        .max_headers(limits.max_headers)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    let grace = ms(limits.shutdown_grace_ms);
    let drain_delay = ms(limits.drain_delay_ms);
    let stall_limit = ms(limits.request_timeout_ms);
    let mut serve_one = |stream: TcpStream, peer: SocketAddr| {
        let _ = stream.set_nodelay(true);
        // Each request knows its connection's peer, for the access log's client address.
        let service = app
            .clone()
            .map_request(move |mut request: Request<Incoming>| {
                request.extensions_mut().insert(Peer(peer));
                request
            });
        let service = TowerToHyperService::new(service);
        let stream = write_stall::StallLimit::new(stream, stall_limit);
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // Errors here are the client's (reset, timeout, bad request): nothing to do.
            let _ = connection.await;
        });
    };
    accept_until(&listener, shutdown, &mut serve_one).await;
    // Not ready first, while still serving: nothing can see `ready` once draining began.
    state.set_ready(false);
    if !drain_delay.is_zero() {
        tracing::info!(
            drain_delay_ms = limits.drain_delay_ms,
            "shutting down: /readyz answers 503, requests still served for the drain delay"
        );
        accept_until(&listener, tokio::time::sleep(drain_delay), &mut serve_one).await;
    }
    drop(listener);
    tracing::info!("shutting down: listener closed, draining in-flight requests");
    tokio::select! {
        () = graceful.shutdown() => tracing::info!("all connections closed"),
        () = tokio::time::sleep(grace) => tracing::warn!("shutdown grace period over; closing"),
    }
    Ok(())
}

/// Accepts connections on `listener` and hands each to `serve` until `until` resolves.
async fn accept_until(
    listener: &TcpListener,
    until: impl Future<Output = ()>,
    serve: &mut impl FnMut(TcpStream, SocketAddr),
) {
    tokio::pin!(until);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => serve(stream, peer),
                Err(err) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(error = %err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            () = &mut until => return,
        }
    }
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
