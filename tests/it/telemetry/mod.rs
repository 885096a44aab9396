//! Logs, metrics and traces (`src/telemetry`): upstream text cannot forge log lines; traces
//! reach an OTLP collector (a loopback one here) with the span tree of each lookup, and a
//! collector in trouble never slows one.

mod collector;
mod log_injection;
mod traces;
