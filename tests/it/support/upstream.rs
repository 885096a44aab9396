//! A loopback upstream that keeps what it was asked: when each request came, through which
//! test proxy, its path and query, and its headers. Every suite counts and inspects the
//! platform's side through it instead of wrapping its router in a recorder of its own.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::Router;
use axum::http::HeaderMap;
use tokio::net::TcpListener;

use super::forward_proxy::tag_of;

/// One request as the upstream saw it, noted as it arrived (before the handler ran).
#[derive(Clone, Debug)]
pub struct Seen {
    /// When it arrived.
    pub at: Instant,
    /// The tag of the test proxy it came through ([`tag_of`]), `-` when it came straight.
    pub via: String,
    /// Its path and query (`/api/v1/users/web_profile_info/?username=x`).
    pub target: String,
    /// Its headers.
    pub headers: HeaderMap,
}

impl Seen {
    /// The path without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// The header `name` as text, "" when absent.
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// A running loopback upstream and what it has been asked so far. Clones share the record.
#[derive(Clone)]
pub struct Upstream {
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl Upstream {
    /// Serves `router` on `listener`, noting every request's arrival.
    pub(super) fn serve_on(listener: TcpListener, router: Router) -> Self {
        let addr = listener.local_addr().unwrap();
        let log: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let keep = log.clone();
        let router = router.layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let headers = request.headers();
                let via = tag_of(headers).unwrap_or("-").to_owned();
                let seen = Seen {
                    at: Instant::now(),
                    via,
                    target: request
                        .uri()
                        .path_and_query()
                        .map(|p| p.to_string())
                        .unwrap_or_default(),
                    headers: headers.clone(),
                };
                // One lock, held for a push.
                keep.lock().unwrap_or_else(|p| p.into_inner()).push(seen);
                next.run(request)
            },
        ));
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Upstream { addr, log }
    }

    /// Requests received so far.
    pub fn hits(&self) -> usize {
        self.lock().len()
    }

    /// When each request so far arrived, in order.
    pub fn arrivals(&self) -> Vec<Instant> {
        self.lock().iter().map(|s| s.at).collect()
    }

    /// Every request so far, in order.
    pub fn seen(&self) -> Vec<Seen> {
        self.lock().clone()
    }

    /// The path (without the query) of every request so far.
    pub fn paths(&self) -> Vec<String> {
        self.lock().iter().map(|s| s.path().to_owned()).collect()
    }

    /// The path and query of every request so far.
    pub fn targets(&self) -> Vec<String> {
        self.lock().iter().map(|s| s.target.clone()).collect()
    }

    /// The proxy tag of every request so far (`-` for those that came straight).
    pub fn via(&self) -> Vec<String> {
        self.lock().iter().map(|s| s.via.clone()).collect()
    }

    /// Waits until `n` requests came, then a while longer to see no more come; asserts `n`.
    pub async fn settles_at(&self, n: usize) {
        super::eventually(std::time::Duration::from_secs(5), || self.hits() >= n).await;
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        assert_eq!(self.hits(), n, "upstream requests");
    }

    /// Forgets what was asked so far.
    pub fn forget(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Seen>> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl AsRef<Upstream> for Upstream {
    fn as_ref(&self) -> &Upstream {
        self
    }
}

/// Serves `router` on 127.0.0.1:0, noting every request.
pub async fn spawn_upstream(router: Router) -> Upstream {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    Upstream::serve_on(listener, router)
}

/// An upstream that holds every request for `delay`, then answers 404: a lookup that stays in
/// flight for a known time (shedding, hang-ups, shutdown, deadlines).
pub async fn spawn_slow_not_found(delay: std::time::Duration) -> Upstream {
    spawn_upstream(Router::new().fallback(move || async move {
        tokio::time::sleep(delay).await;
        axum::http::StatusCode::NOT_FOUND
    }))
    .await
}

/// A port on loopback where nothing listens.
pub async fn closed_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    addr
}
