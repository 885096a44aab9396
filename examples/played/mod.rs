//! What the loads that play a platform themselves share (`sources_load`, `guest_load`,
//! `blame_load`): its loopback ports and the line the scripts wait for, the samples' names, the
//! client their lookups go through, and the text they sample.

use std::sync::Mutex;
use std::time::Duration;

/// Serves each router on a loopback port the OS picks, prints `LISTENING <port> …` in the
/// routers' order (the line `rig_upstream` in scripts/lib/rig.sh waits for), and serves until
/// the process is killed.
pub async fn serve_listening(routers: Vec<axum::Router>) {
    let mut ports = Vec::with_capacity(routers.len());
    for router in routers {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        ports.push(listener.local_addr().expect("bound").port().to_string());
        tokio::spawn(async move { axum::serve(listener, router).await.expect("serves") });
    }
    println!("LISTENING {}", ports.join(" "));
    std::future::pending::<()>().await;
}

/// `name` for the life of the process, leaked once per distinct name: the samples' names are
/// `&'static str`, and a run asks a few thousand names at most.
pub fn leaked(name: &str) -> &'static str {
    static NAMES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().expect("not poisoned");
    match names.iter().find(|n| **n == name) {
        Some(n) => n,
        None => {
            let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
            names.push(leaked);
            leaked
        }
    }
}

/// The client a load's lookups go through: connections kept alive for a whole run's
/// concurrency, each lookup bounded by `timeout`.
pub fn lookup_client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .timeout(timeout)
        .build()
        .expect("a client")
}

/// The body of `GET url` as text, or empty when it did not answer: what a load's sampler reads
/// of the upstream's counts and the service's `/metrics` and `/status`.
pub async fn text(client: &reqwest::Client, url: String) -> String {
    match client.get(url).send().await {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}
