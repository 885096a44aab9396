//! Series exported at zero from the start: what a dashboard panel or an alert asks about before
//! it has happened.
//!
//! A series appears when it is first counted, so until a platform first sheds a lookup or meets
//! a WAF challenge, "how many" has no answer at all: a panel shows "No data" instead of 0, and
//! a rule over `rate(...)` or a ratio of two such series sees nothing (`absent()` pitfalls).
//! The label sets here are few and closed (platforms × outcomes, and one series per platform),
//! so they are registered once, when the recorder is installed. Open label sets (routes ×
//! statuses, block reasons, Redis operations) still appear with their first count.

use metrics::{counter, gauge};

use crate::registry::Platform;

/// The `outcome` labels of [`super::UPSTREAM_LOOKUPS`]: what a lookup can end with (the
/// labels `Lookup::label` gives).
pub const OUTCOMES: [&str; 8] = [
    "ok",
    "private",
    "not_found",
    "blocked",
    "region_locked",
    "extraction_failed",
    "unavailable",
    "overloaded",
];

/// Registers every closed label set at zero. Called once, right after the recorder is installed
/// (so not through [`super::metrics_handle`], which is still initialising); adding zero leaves a
/// series that already counts unchanged.
pub(super) fn register() {
    gauge!(super::HTTP_IN_FLIGHT).increment(0.0);
    counter!(super::TRACE_SPANS_DROPPED).increment(0);
    for platform in Platform::ALL.iter().map(|p| p.as_str()) {
        for outcome in OUTCOMES {
            counter!(super::UPSTREAM_LOOKUPS, "platform" => platform, "outcome" => outcome)
                .increment(0);
        }
        for result in super::CACHE_RESULTS {
            counter!(super::CACHE_LOOKUPS, "platform" => platform, "result" => result).increment(0);
        }
        counter!(super::UPSTREAM_REQUESTS, "platform" => platform).increment(0);
        for cause in super::FAILURE_CAUSES {
            counter!(super::UPSTREAM_FAILURES, "platform" => platform, "cause" => cause)
                .increment(0);
        }
        counter!(super::UPSTREAM_CHALLENGES, "platform" => platform).increment(0);
        // Every breaker starts closed (0).
        gauge!(super::BREAKER_STATE, "platform" => platform).increment(0.0);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_closed_label_sets_are_exported_before_anything_happens() {
        let text = super::super::metrics_handle()
            .expect("the recorder of this test process")
            .render();
        for platform in crate::registry::Platform::ALL.iter().map(|p| p.as_str()) {
            for outcome in super::OUTCOMES {
                let series = format!(
                    "profile_lookup_upstream_lookups_total{{platform=\"{platform}\",outcome=\"{outcome}\"}}"
                );
                assert!(text.contains(&series), "missing {series} in\n{text}");
            }
            for cause in super::super::FAILURE_CAUSES {
                let series = format!(
                    "profile_lookup_upstream_failures_total{{platform=\"{platform}\",cause=\"{cause}\"}}"
                );
                assert!(text.contains(&series), "missing {series} in\n{text}");
            }
            for needle in [
                format!("profile_lookup_upstream_challenges_total{{platform=\"{platform}\"}}"),
                format!("profile_lookup_upstream_requests_total{{platform=\"{platform}\"}}"),
                format!("profile_lookup_breaker_state{{platform=\"{platform}\"}}"),
                format!(
                    "profile_lookup_cache_lookups_total{{platform=\"{platform}\",result=\"stale\"}}"
                ),
            ] {
                assert!(text.contains(&needle), "missing {needle} in\n{text}");
            }
        }
        assert!(
            text.contains("profile_lookup_http_requests_in_flight "),
            "{text}"
        );
    }
}
