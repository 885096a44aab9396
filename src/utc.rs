//! Times as people and tools read them: RFC 3339 in UTC for `GET /status`, and a compact UTC
//! stamp that sorts as text for file names. One place, so every time the service shows reads
//! alike.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use time::macros::format_description;

/// `unix_secs` (seconds since the Unix epoch) as RFC 3339 in UTC: `2026-11-28T06:45:12Z`.
pub fn rfc3339(unix_secs: u64) -> String {
    let at = UNIX_EPOCH + Duration::from_secs(unix_secs);
    OffsetDateTime::from(at)
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        // Only a time past the year 9999 cannot be written; none is ever recorded.
        .unwrap_or_else(|| "9999-12-31T23:59:59Z".to_owned())
}

/// `at` as a compact UTC stamp to the millisecond that sorts as text and has no character a
/// file system refuses: `20261128T064512.123Z`.
pub fn file_stamp(at: SystemTime) -> String {
    let format =
        format_description!("[year][month][day]T[hour][minute][second].[subsecond digits:3]Z");
    OffsetDateTime::from(at)
        .format(&format)
        .unwrap_or_else(|_| "99991231T235959.999Z".to_owned())
}

/// Serde's writer of a Unix time in seconds as [`rfc3339`] (`#[serde(serialize_with)]`).
pub fn serialize_rfc3339<S: serde::Serializer>(unix_secs: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&rfc3339(*unix_secs))
}

/// [`serialize_rfc3339`] for an optional time: `null` when there is none.
pub fn serialize_rfc3339_opt<S: serde::Serializer>(
    unix_secs: &Option<u64>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match unix_secs {
        Some(secs) => s.serialize_str(&rfc3339(*secs)),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_seconds_read_as_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_800_000_000), "2027-01-15T08:00:00Z");
    }

    #[test]
    fn a_file_stamp_is_readable_utc_to_the_millisecond() {
        let at = UNIX_EPOCH + Duration::from_millis(1_800_000_000_123);
        assert_eq!(file_stamp(at), "20270115T080000.123Z");
        assert_eq!(file_stamp(UNIX_EPOCH), "19700101T000000.000Z");
    }
}
