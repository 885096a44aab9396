//! What one route keeps of a platform's session, on loopback: its cookie jar stays within its
//! bounds whatever the platform sets, and nothing a route was given (a cookie, the CSRF token
//! built from one) is ever sent through another route, even when a lookup moves mid-request.

use std::sync::{Arc, Mutex};

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use profile_lookup::config::Settings;
use profile_lookup::registry::Platform;
use profile_lookup::upstream::cookies::{MAX_COOKIES, MAX_JAR_BYTES};
use profile_lookup::upstream::egress::Egress;
use stand_in::photo_share as ps;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::support::forward_proxy::{ForwardProxy, Mode, tag_of};
use crate::support::{PhotoShare, TestApp};

/// The `Cookie` header of one request as a raw upstream read it: its length and how many
/// cookies it named.
#[derive(Clone, Copy, Debug, Default)]
struct CookieLine {
    bytes: usize,
    cookies: usize,
}

/// A raw upstream that answers every request with 32 cookies of about 4 KB, all named `big`,
/// each on a new path that the request path falls under, and records each request's `Cookie`.
async fn cookie_flood(depth: usize) -> (std::net::SocketAddr, Arc<Mutex<Vec<CookieLine>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let lines: Arc<Mutex<Vec<CookieLine>>> = Arc::default();
    let record = lines.clone();
    tokio::spawn(async move {
        let mut round = 0usize;
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut head = Vec::new();
            let mut buf = vec![0u8; 64 * 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8 << 20 {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&head);
            let line = text
                .split("\r\n")
                .find_map(|l| l.strip_prefix("cookie: ").or(l.strip_prefix("Cookie: ")))
                .unwrap_or("");
            record.lock().unwrap().push(CookieLine {
                bytes: line.len(),
                cookies: line.split(';').filter(|c| !c.trim().is_empty()).count(),
            });
            let mut answer = String::from("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n");
            let value = "v".repeat(4_000);
            for i in 0..32 {
                // Paths /a, /a/a, … all lie above the request path: each cookie goes back.
                let level = (round * 32 + i) % depth + 1;
                let path = "/a".repeat(level);
                answer.push_str(&format!(
                    "set-cookie: big={value}; Path={path}; Max-Age=600\r\n"
                ));
            }
            answer.push_str("connection: close\r\n\r\n{}");
            round += 1;
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    });
    (addr, lines)
}

#[tokio::test]
async fn a_flood_of_one_cookie_name_on_many_paths_keeps_the_jar_within_its_bounds() {
    const DEPTH: usize = 400;
    let (addr, lines) = cookie_flood(DEPTH).await;
    let settings = Settings::default();
    let routes = Egress::new(
        "test-jar-flood",
        &settings,
        settings.platform(Platform::ShortVideo),
        &profile_lookup::fleet::Fleet::local(),
    )
    .unwrap();
    let lease = routes.lease(true).await.unwrap();
    let url = url::Url::parse(&format!("http://{addr}{}", "/a".repeat(DEPTH))).unwrap();
    for _ in 0..12 {
        let response = lease.get(url.clone(), Default::default()).await.unwrap();
        assert_eq!(response.status, 200);
    }
    let lines = lines.lock().unwrap().clone();
    assert_eq!(lines.len(), 12);
    for (at, line) in lines.iter().enumerate() {
        assert!(
            line.cookies <= MAX_COOKIES && line.bytes <= MAX_JAR_BYTES + 2 * MAX_COOKIES,
            "request {at} carried {line:?}: the jar outgrew its bounds"
        );
    }
    assert!(lines[11].cookies > 0, "the jar still sends what it keeps");
}

/// The photo-share stand-in, every answer setting `csrftoken=<the proxy's tag>`, as the platform
/// gives each address its own token.
fn token_per_proxy() -> axum::Router {
    ps::router().layer(axum::middleware::from_fn(
        |request: Request, next: axum::middleware::Next| async move {
            let via = tag_of(request.headers()).unwrap_or("").to_owned();
            let mut response = next.run(request).await;
            if let Ok(value) = HeaderValue::from_str(&format!("csrftoken={via}; Path=/")) {
                response.headers_mut().append(header::SET_COOKIE, value);
            }
            response
        },
    ))
}

#[tokio::test]
async fn a_lookup_that_moves_to_another_proxy_sends_none_of_the_first_routes_tokens() {
    let mut a = ForwardProxy::start("a", Mode::Forward, None).await;
    let b = ForwardProxy::start("b", Mode::Forward, None).await;
    let app = TestApp::on(token_per_proxy())
        .through([&a, &b])
        .start()
        .await;
    // One lookup on each proxy: each route now holds its own csrftoken.
    for _ in 0..2 {
        app.lookup(PhotoShare, "no.such.person")
            .await
            .expect_status(404);
    }
    // The next lookup starts on a, which now refuses connections: it moves to b mid-request.
    a.stop().await;
    app.lookup(PhotoShare, "no.such.person")
        .await
        .expect_status(404);
    let seen = app.upstream().seen();
    let through_b = seen.iter().filter(|s| s.via == "b").count();
    assert!(through_b >= 3, "{seen:?}");
    for request in &seen {
        let (csrf, cookie) = (request.header("x-csrftoken"), request.header("cookie"));
        let own = format!("csrftoken={}", request.via);
        assert!(
            csrf.is_empty() || csrf == request.via,
            "X-CSRFToken {csrf:?} went through proxy {}: {seen:?}",
            request.via
        );
        assert!(
            cookie.is_empty() || cookie == own,
            "cookie {cookie:?} went through proxy {}: {seen:?}",
            request.via
        );
    }
    assert!(
        seen.iter()
            .any(|s| s.via == "b" && s.header("x-csrftoken") == "b"),
        "b's own token is used on b: {seen:?}"
    );
}
