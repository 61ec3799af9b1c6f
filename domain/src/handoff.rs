//! Hand-off notices: at a time of day the team chooses (UTC), the person on call tomorrow is
//! told, and when a day ends its outgoing person is. Only when the holder changes: someone on
//! call all week hears once before and once after.

use serde::{Deserialize, Serialize};

/// `GET|PUT /api/teams/{team_id}/handoff`. Off by default, at 09:00 UTC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct HandoffSettings {
    pub enabled: bool,
    /// When tomorrow's person is told, `HH:MM` in UTC (00:00 to 23:59).
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = r"^([01][0-9]|2[0-3]):[0-5][0-9]$", example = "09:00")
    )]
    pub at: String,
}

/// The default time of the notice: 09:00 UTC.
pub const DEFAULT_AT_MINUTE: i64 = 9 * 60;

impl Default for HandoffSettings {
    fn default() -> Self {
        HandoffSettings {
            enabled: false,
            at: format_minute(DEFAULT_AT_MINUTE),
        }
    }
}

/// Minutes after 00:00 of `HH:MM`.
pub fn parse_minute(at: &str) -> Result<i64, String> {
    let bad = || format!("at must be a time of day HH:MM in UTC, 00:00 to 23:59, not `{at}`");
    let (h, m) = at.split_once(':').ok_or_else(bad)?;
    if h.len() != 2 || m.len() != 2 || !(h.bytes().chain(m.bytes())).all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let (h, m): (i64, i64) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if h > 23 || m > 59 {
        return Err(bad());
    }
    Ok(h * 60 + m)
}

pub fn format_minute(minute: i64) -> String {
    format!("{:02}:{:02}", minute / 60, minute % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_of_day_round_trip_and_bad_ones_are_refused() {
        for (text, minute) in [("00:00", 0), ("09:00", 540), ("23:59", 1439)] {
            assert_eq!(parse_minute(text), Ok(minute));
            assert_eq!(format_minute(minute), text);
        }
        for bad in [
            "24:00", "9:00", "09:60", "0900", "", "aa:bb", "+1:00", "09:00:00",
        ] {
            assert!(parse_minute(bad).is_err(), "{bad}");
        }
    }
}
