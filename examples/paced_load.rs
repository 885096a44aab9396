//! An open-loop load client for `scripts/load.sh`: sends GET requests at a fixed rate over a
//! few keep-alive connections and prints latency percentiles. wrk sends as fast as answers come
//! (closed loop), so its latencies at peak are queueing; this measures a service at a chosen
//! rate, e.g. half its peak.
//!
//! ```text
//! cargo run --release --example paced_load -- URL RATE SECONDS CONNECTIONS [HEADER...]
//! ```
//!
//! Prints one line: `PACED rate=… sent=… ok=… bad=… late=… p50_ms=… p90_ms=… p99_ms=…
//! p999_ms=… max_ms=…`. Loopback HTTP/1.1 only (`http://127.0.0.1:PORT/path`), answers with a
//! `Content-Length` (the service's are).
//!
//! Connection `i` sends its `j`-th request at `start + (j × CONNECTIONS + i) / RATE`. A
//! request is timed from that intended moment when the connection was still busy with the
//! previous answer then (the service's delay, so it counts: no coordinated omission), and from
//! the moment it was sent otherwise (the client's timer is only millisecond-precise; its
//! lateness is not the service's). `late` counts requests sent behind schedule.

use std::time::{Duration, Instant};

use tokio::net::TcpStream;

mod support;

struct Outcome {
    latencies_us: Vec<u32>,
    ok: u64,
    bad: u64,
    late: u64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: paced_load URL RATE SECONDS CONNECTIONS [HEADER...]");
        std::process::exit(2);
    }
    let url = &args[0];
    let rate: f64 = args[1].parse().expect("RATE: requests per second");
    let seconds: f64 = args[2].parse().expect("SECONDS");
    let conns: usize = args[3].parse().expect("CONNECTIONS");
    let rest = url
        .strip_prefix("http://")
        .expect("an http:// URL on loopback");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\n");
    for header in &args[4..] {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    let request: &'static [u8] = Box::leak(request.into_bytes().into_boxed_slice());
    let authority = authority.to_owned();

    let runtime = support::runtime();
    let outcomes = runtime.block_on(async move {
        let start = Instant::now() + Duration::from_millis(50);
        let total = (rate * seconds) as u64;
        let mut tasks = Vec::new();
        for i in 0..conns as u64 {
            let authority = authority.clone();
            tasks.push(tokio::spawn(async move {
                connection(&authority, request, start, i, conns as u64, total, rate).await
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.push(t.await.expect("no panic"));
        }
        (all, start.elapsed())
    });
    let (outcomes, elapsed) = outcomes;
    let mut latencies: Vec<u32> = Vec::new();
    let (mut ok, mut bad, mut late) = (0, 0, 0);
    for o in outcomes {
        latencies.extend(o.latencies_us);
        ok += o.ok;
        bad += o.bad;
        late += o.late;
    }
    latencies.sort_unstable();
    let pct = |p: f64| -> f64 {
        if latencies.is_empty() {
            return f64::NAN;
        }
        let idx = ((latencies.len() as f64 - 1.0) * p).round() as usize;
        f64::from(latencies[idx]) / 1000.0
    };
    println!(
        "PACED rate={:.0} sent={} ok={ok} bad={bad} late={late} p50_ms={:.3} p90_ms={:.3} \
         p99_ms={:.3} p999_ms={:.3} max_ms={:.3}",
        latencies.len() as f64 / elapsed.as_secs_f64(),
        latencies.len(),
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(0.999),
        pct(1.0),
    );
}

async fn connection(
    authority: &str,
    request: &'static [u8],
    start: Instant,
    index: u64,
    conns: u64,
    total: u64,
    rate: f64,
) -> Outcome {
    let mut out = Outcome {
        latencies_us: Vec::with_capacity((total / conns + 1) as usize),
        ok: 0,
        bad: 0,
        late: 0,
    };
    let mut stream = match TcpStream::connect(authority).await {
        Ok(s) => s,
        Err(_) => {
            out.bad = total / conns;
            return out;
        }
    };
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut n = index;
    while n < total {
        let intended = start + Duration::from_secs_f64(n as f64 / rate);
        let now = Instant::now();
        let from = if now < intended {
            tokio::time::sleep_until(intended.into()).await;
            Instant::now()
        } else {
            // Still busy with the last answer at the intended moment: the wait counts.
            if now > intended + Duration::from_millis(1) {
                out.late += 1;
            }
            intended
        };
        let status = match support::exchange(&mut stream, request, &mut buf).await {
            Some((status, _)) => status,
            None => {
                out.bad += 1;
                match TcpStream::connect(authority).await {
                    Ok(s) => stream = s,
                    Err(_) => return out,
                }
                n += conns;
                continue;
            }
        };
        let us = u32::try_from(from.elapsed().as_micros()).unwrap_or(u32::MAX);
        out.latencies_us.push(us);
        if (200..300).contains(&status) {
            out.ok += 1;
        } else {
            out.bad += 1;
        }
        n += conns;
    }
    out
}
