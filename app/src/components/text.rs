//! Small text formatting for values from the API.

use klaxon_domain::Timestamp;

/// `2026-11-22 10:00 UTC`: short enough for a phone row, explicit about the zone.
pub fn when(t: Timestamp) -> String {
    let s = t.to_rfc3339();
    match (s.get(0..10), s.get(11..16)) {
        (Some(date), Some(time)) => format!("{date} {time} UTC"),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_minutes_in_utc() {
        assert_eq!(when(Timestamp(1_700_000_000)), "2023-11-14 22:13 UTC");
    }
}
