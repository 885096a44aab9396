//! `[telemetry]`: where traces go (OTLP over HTTP), and how much may wait to be sent.
//!
//! Off by default: with no endpoint here and no `OTEL_EXPORTER_OTLP_ENDPOINT`, nothing is
//! exported and the trace spans are never even built.

use serde::{Deserialize, Serialize};

use super::Section;
use super::limits::{self, range};

/// `[telemetry]`
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetryConfig {
    /// The collector's OTLP/HTTP base URL (`http://collector:4318`; `/v1/traces` is added), as
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` means it; empty: that variable, and without it no traces.
    pub otlp_endpoint: String,
    /// Finished spans that may wait to be sent; past it spans are dropped and counted, so a
    /// collector that is down or slow never grows memory.
    pub max_queued_spans: u64,
    /// How long one export (its retries included) may take before its spans are given up.
    pub export_timeout_ms: u64,
}

/// The most spans that may wait: about 1 KB each, so a few tens of MB at worst.
pub const MAX_QUEUED_SPANS: u64 = 65_536;

impl Section for TelemetryConfig {
    fn check(&self) -> Result<(), String> {
        if !self.otlp_endpoint.is_empty() {
            let url = url::Url::parse(&self.otlp_endpoint).map_err(|e| {
                format!("telemetry.otlp_endpoint is not a URL ({e}); e.g. http://collector:4318")
            })?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(format!(
                    "telemetry.otlp_endpoint must be an http:// or https:// URL, not {}:",
                    url.scheme()
                ));
            }
        }
        limits::check(&[
            range(
                "telemetry.max_queued_spans",
                self.max_queued_spans,
                1,
                MAX_QUEUED_SPANS,
                "65536 spans",
            ),
            range(
                "telemetry.export_timeout_ms",
                self.export_timeout_ms,
                100,
                60_000,
                "1 minute",
            ),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(endpoint: &str) -> TelemetryConfig {
        TelemetryConfig {
            otlp_endpoint: endpoint.into(),
            max_queued_spans: 2048,
            export_timeout_ms: 5000,
        }
    }

    #[test]
    fn an_endpoint_is_an_http_url_or_nothing() {
        assert!(with("").check().is_ok());
        assert!(with("http://collector:4318").check().is_ok());
        assert!(with("collector:4318").check().is_err());
        assert!(with("not a url").check().is_err());
        let queue = TelemetryConfig {
            max_queued_spans: 0,
            ..with("")
        };
        assert!(queue.check().unwrap_err().contains("max_queued_spans"));
    }
}
