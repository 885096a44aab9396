//! What the demo prints at start: where it listens, its key, the lookups to try on every
//! platform, and how to make a stand-in drift.

use std::net::SocketAddr;
use std::time::Duration;

use super::settings::CANARY_INTERVAL_SECONDS;
use super::stand_ins::StandIns;
use crate::platform::Platform;

/// The response headers a lookup's comment may name; a lookup whose comment names one is
/// printed with `curl -si`, so that the header shows.
const HEADERS_NAMED: [&str; 5] = [
    "x-source",
    "profile-withheld",
    "retry-after",
    "cache-status",
    "ratelimit",
];

/// `-si` when `shows` (a lookup's comment) names a response header, else `-s`.
fn curl_flags(shows: &str) -> &'static str {
    let shows = shows.to_ascii_lowercase();
    if HEADERS_NAMED.iter().any(|h| shows.contains(h)) {
        "-si"
    } else {
        "-s"
    }
}

/// Prints the banner on stdout (a closed stdout is ignored). The key is exported once, as
/// `KEY`, and every lookup line uses `$KEY`: pasted after the export, each works as it is.
pub(super) fn print_banner(
    addr: SocketAddr,
    taken: Option<SocketAddr>,
    key: &str,
    stand_ins: &StandIns,
    drift_after: Option<Duration>,
) {
    let base = format!("http://{addr}");
    let mut lines = vec![
        "profile-lookup demo: the real service against a built-in sample upstream (no network)."
            .to_owned(),
    ];
    if let Some(taken) = taken {
        lines.push(format!(
            "{taken} is in use by another process, so the demo took a free port: {addr}"
        ));
    }
    lines.push(format!("Listening on {base}   API key: {key}"));
    lines.push("Paste this first; the lookups below use it:".to_owned());
    lines.push(format!("  export KEY={key}"));
    for &platform in Platform::ALL {
        lines.push(String::new());
        lines.push(format!("{platform}:"));
        for call in stand_ins.plays(platform).demo_calls() {
            lines.push(format!(
                "  curl {} -H \"Authorization: Bearer $KEY\" {base}/{platform}/profile/{}   # {}",
                curl_flags(call.shows),
                call.username,
                call.shows
            ));
        }
    }
    lines.extend([
        String::new(),
        format!(
            "Canary: every {CANARY_INTERVAL_SECONDS} s each sample account goes through each source; \
             the verdicts: {base}/status (a browser gets a page)."
        ),
        "Make a stand-in serve a moved page shape (the canary finds it changed; lookups then ask \
         the other source first), and undo it with .../off:"
            .to_owned(),
    ]);
    for &platform in Platform::ALL {
        // Not a `curl` line of its own: those call the service, this one a stand-in.
        lines.push(format!(
            "  {platform} {} moves: curl -s -X POST http://{}{}/on",
            stand_ins.plays(platform).drifted_source(),
            stand_ins.addr(platform),
            stand_in::drift::CONTROL_PATH,
        ));
    }
    if let Some(after) = drift_after {
        lines.push(format!(
            "Drift: every stand-in switches to its moved shape in {} s, and back {} s later.",
            after.as_secs_f64(),
            after.as_secs_f64()
        ));
    }
    lines.extend([
        String::new(),
        format!("Operations: {base}/healthz  {base}/readyz  {base}/metrics  {base}/status  {base}/openapi.json"),
        format!(
            "The API in a browser (Authorize with the key above, then Try it out): {base}/docs/"
        ),
        "Ctrl-C stops.".into(),
    ]);
    // A closed stdout (a piped reader that went away) must not stop the service.
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{}", lines.join("\n"));
}
