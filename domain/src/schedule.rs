//! The schedule page's shapes: today's holder of each of the caller's teams and the coming days.

use serde::{Deserialize, Serialize};

/// Today's holder of one team.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    pub team_id: i64,
    pub team_name: String,
    pub user_id: i64,
    pub username: String,
}

/// One of the caller's teams with its shifts over the coming days.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamDays {
    pub team_id: i64,
    pub display_name: String,
    pub shifts: Vec<ScheduleEntry>,
}

/// The first date in the look-ahead (today included, the team's today) on which nobody holds
/// one of the caller's teams' pager.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverageGap {
    pub team_id: i64,
    pub team_name: String,
    /// `YYYY-MM-DD`.
    pub from: String,
    /// `from` is the team's today.
    pub today: bool,
}

impl CoverageGap {
    /// "Nobody is on call for payments from Tuesday 23 December" ("… today").
    pub fn words(&self) -> String {
        match self.today {
            true => format!("Nobody is on call for {} today", self.team_name),
            false => format!(
                "Nobody is on call for {} from {}",
                self.team_name,
                crate::calendar::long_day(&self.from)
            ),
        }
    }
}

/// The schedule page: today's holders and the next days of every team, read in one core call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleOverview {
    pub me: i64,
    /// The dates shown, today first.
    pub days: Vec<String>,
    pub holders: Vec<Holder>,
    pub teams: Vec<TeamDays>,
    pub gaps: Vec<CoverageGap>,
}

/// How many days, today included, the schedule page looks ahead.
pub const LOOK_AHEAD_DAYS: usize = 14;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScheduleEntry {
    pub team_id: i64,
    /// UTC calendar date, `YYYY-MM-DD`.
    pub date: String,
    pub user_id: i64,
    pub username: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_says_from_when_nobody_is_on_call() {
        let gap = |from: &str, today| CoverageGap {
            team_id: 1,
            team_name: "payments".into(),
            from: from.into(),
            today,
        };
        assert_eq!(
            gap("2026-12-22", false).words(),
            "Nobody is on call for payments from Tuesday 22 December"
        );
        assert_eq!(
            gap("2026-11-28", true).words(),
            "Nobody is on call for payments today"
        );
    }
}

/// A person's calendar feed link of a team, as listed: never its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalendarFeed {
    pub created_at: crate::Timestamp,
}

/// A calendar feed link just made: the only time its URL is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewCalendarFeed {
    /// `{public_url}/api/calendar/{token}/schedule.ics`.
    pub url: String,
    pub created_at: crate::Timestamp,
}
