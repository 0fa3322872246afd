//! Wall-clock helpers: milliseconds since the Unix epoch and their ISO 8601 (RFC 3339, UTC)
//! rendering used on the wire (`createdAt`, `lastUpdatedAt`).

use chrono::{DateTime, SecondsFormat, Utc};

/// Milliseconds since the Unix epoch, UTC.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// Renders `ms` (milliseconds since the Unix epoch) as an RFC 3339 UTC timestamp with exactly
/// three fraction digits, e.g. `2026-11-29T09:30:00.120Z`: one width, so the strings sort as
/// the times do. A time chrono cannot represent renders as the epoch.
pub fn iso8601(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Milliseconds since the Unix epoch of an RFC 3339 timestamp such as [`iso8601`] renders
/// (any offset); `None` when `s` is not one.
pub fn parse_iso8601(s: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp_millis())
}

#[cfg(test)]
mod tests {
    #[test]
    fn renders_utc_with_millis() {
        assert_eq!(
            super::iso8601(1_700_000_000_123),
            "2023-11-14T22:13:20.123Z"
        );
        assert_eq!(
            super::iso8601(1_700_000_000_120),
            "2023-11-14T22:13:20.120Z"
        );
        assert_eq!(super::iso8601(0), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn parses_what_it_renders() {
        assert_eq!(
            super::parse_iso8601("2023-11-14T22:13:20.123Z"),
            Some(1_700_000_000_123)
        );
        assert_eq!(super::parse_iso8601("yesterday"), None);
    }

    #[test]
    fn now_is_after_2026() {
        assert!(super::now_ms() > 1_767_225_600_000);
    }
}
