//! Maintenance windows: a team's time-boxed stretch in which incidents still open but nothing is
//! paged; what would have been paged waits for the window's end.

use crate::{Duration, Timestamp};
use serde::{Deserialize, Serialize};

pub const MIN_LENGTH: Duration = Duration::minutes(5);
pub const MAX_LENGTH: Duration = Duration::hours(24);
/// How far ahead a window may be planned.
pub const MAX_AHEAD: Duration = Duration::days(365);
/// A start this little in the past (a client's clock) is read as "now".
const SKEW: i64 = 300;

/// `GET|POST /api/teams/{team_id}/maintenance`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Maintenance {
    pub id: i64,
    pub team_id: i64,
    pub starts_at: Timestamp,
    pub ends_at: Timestamp,
}

/// A window as an owner asks for it: `ends_at` or `duration` (exactly one), from `starts_at`
/// (default now).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewMaintenance {
    /// Now or later (at most a year ahead); now when left out.
    pub starts_at: Option<Timestamp>,
    /// 5 minutes to 24 hours after the start. Give this or `duration`.
    pub ends_at: Option<Timestamp>,
    /// `5m` to `24h`. Give this or `ends_at`.
    pub duration: Option<Duration>,
}

impl NewMaintenance {
    /// The window's start and end, or why not.
    pub fn bounds(&self, now: Timestamp) -> Result<(Timestamp, Timestamp), String> {
        let start = match self.starts_at {
            None => now,
            Some(t) if t.0 < now.0 - SKEW => {
                return Err("starts_at: a window cannot start in the past".into())
            }
            Some(t) if t.0 - now.0 > MAX_AHEAD.0 => {
                return Err("starts_at: at most a year ahead".into())
            }
            Some(t) => Timestamp(t.0.max(now.0)),
        };
        let end = match (self.ends_at, self.duration) {
            (Some(end), None) => end,
            (None, Some(d)) => Timestamp(start.0 + d.0),
            _ => return Err("give either ends_at or duration".into()),
        };
        let length = end.0 - start.0;
        if !(MIN_LENGTH.0..=MAX_LENGTH.0).contains(&length) {
            return Err(format!(
                "a window lasts {MIN_LENGTH} to {MAX_LENGTH} (this one: {})",
                Duration(length.max(0))
            ));
        }
        Ok((start, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Timestamp = Timestamp(1_800_000_000);

    fn ask(
        starts: Option<i64>,
        ends: Option<i64>,
        duration: Option<i64>,
    ) -> Result<(i64, i64), String> {
        NewMaintenance {
            starts_at: starts.map(|s| Timestamp(NOW.0 + s)),
            ends_at: ends.map(|e| Timestamp(NOW.0 + e)),
            duration: duration.map(Duration),
        }
        .bounds(NOW)
        .map(|(s, e)| (s.0 - NOW.0, e.0 - NOW.0))
    }

    #[test]
    fn five_minutes_to_a_day_from_now_or_later() {
        assert_eq!(ask(None, None, Some(300)), Ok((0, 300)));
        assert_eq!(ask(None, Some(86_400), None), Ok((0, 86_400)));
        assert_eq!(ask(Some(3_600), None, Some(3_600)), Ok((3_600, 7_200)));
        // A start a little in the past is now; the end stays where it was asked.
        assert_eq!(ask(Some(-60), Some(600), None), Ok((0, 600)));
        assert!(ask(None, None, Some(299)).is_err());
        assert!(ask(None, None, Some(86_401)).is_err());
        assert!(ask(None, Some(-10), None).is_err());
        assert!(ask(Some(-3_600), None, Some(600)).is_err());
        assert!(ask(Some(400 * 86_400), None, Some(600)).is_err());
        assert!(ask(None, None, None).is_err());
        assert!(ask(None, Some(600), Some(600)).is_err());
    }
}
