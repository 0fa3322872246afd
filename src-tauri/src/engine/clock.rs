//! Wall-clock helpers: milliseconds since the Unix epoch and their ISO 8601 (RFC 3339, UTC)
//! rendering used on the wire (`createdAt`, `lastUpdatedAt`).

use time::{OffsetDateTime, format_description::well_known::Rfc3339};

/// Milliseconds since the Unix epoch, UTC.
pub fn now_ms() -> i64 {
    (OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}

/// Renders `ms` (milliseconds since the Unix epoch) as an RFC 3339 UTC timestamp with
/// millisecond precision, e.g. `2026-11-29T09:30:00.123Z`.
pub fn iso8601(ms: i64) -> String {
    let dt = OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let dt = dt
        .replace_nanosecond((ms.rem_euclid(1000) as u32) * 1_000_000)
        .unwrap_or(dt);
    dt.format(&Rfc3339).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn renders_utc_with_millis() {
        assert_eq!(
            super::iso8601(1_700_000_000_123),
            "2023-11-14T22:13:20.123Z"
        );
        assert_eq!(super::iso8601(0), "1970-01-01T00:00:00Z");
    }
}
