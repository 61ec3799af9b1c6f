//! The schedule page's shapes: today's holder of each of the caller's teams and the coming days.

use crate::incident::ScheduleEntry;
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

/// The schedule page: today's holders and the next days of every team, read in one core call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleOverview {
    pub me: i64,
    /// The dates shown, today first.
    pub days: Vec<String>,
    pub holders: Vec<Holder>,
    pub teams: Vec<TeamDays>,
}

/// How many days, today included, the schedule page looks ahead.
pub const LOOK_AHEAD_DAYS: usize = 14;
