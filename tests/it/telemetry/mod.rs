//! Logs and metrics (`src/telemetry`): upstream text cannot forge log lines.

mod log_injection;
