//! The process's log, read back: a JSON subscriber installed once, process-wide, at DEBUG,
//! writing into memory. Process-wide, so the tests that use it run in a process of their own
//! ([`super::own_process`]).

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

/// Everything logged in this process so far, installing the subscriber on first use.
fn buffer() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let sink = buffer.clone();
        let _ = tracing_subscriber::fmt()
            .json()
            .flatten_event(true)
            .with_max_level(tracing::Level::DEBUG)
            .with_writer(move || Sink(sink.clone()))
            .try_init();
        buffer
    })
}

/// Starts capturing (call before the app is built, so its first lines are kept).
pub fn capture() {
    let _ = buffer();
}

/// Every line logged so far, as JSON.
pub fn lines() -> Vec<serde_json::Value> {
    let bytes = buffer().lock().unwrap().clone();
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The lines whose message is `message`.
pub fn with_message(message: &str) -> Vec<serde_json::Value> {
    lines()
        .into_iter()
        .filter(|l| l["message"] == message)
        .collect()
}

/// The sum of the series of `name` whose labels include each of `labels` (`key="value"`); with
/// no labels, every series of it (an unlabelled gauge's one).
pub fn metric(name: &str, labels: &[&str]) -> f64 {
    let text = profile_lookup::telemetry::metrics_handle()
        .expect("the recorder")
        .render();
    text.lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with([' ', '{']))
        })
        .filter(|l| labels.iter().all(|w| l.contains(w)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
