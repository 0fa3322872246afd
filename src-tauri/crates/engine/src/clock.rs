//! Wall-clock helpers: milliseconds since the Unix epoch and their ISO 8601 (RFC 3339, UTC)
//! rendering used on the wire (`createdAt`, `lastUpdatedAt`).

use time::OffsetDateTime;

/// Milliseconds since the Unix epoch, UTC.
pub fn now_ms() -> i64 {
    (OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64
}

/// Renders `ms` (milliseconds since the Unix epoch) as an RFC 3339 UTC timestamp with exactly
/// three fraction digits, e.g. `2026-11-29T09:30:00.120Z`: one width, so the strings sort as
/// the times do.
pub fn iso8601(ms: i64) -> String {
    let dt = OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        dt.year(),
        u8::from(dt.month()),
        dt.day(),
        dt.hour(),
        dt.minute(),
        dt.second(),
        dt.millisecond()
    )
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
}
