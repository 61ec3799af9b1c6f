//! Hand-off notices: at each of the team's hand-offs (the start of an on-call day, in the team's
//! zone) the incoming person is told they are on call and the outgoing one that their day has
//! ended; a partial-day cover's start and end tell the person covering and the one covered.
//! Only when the holder changes: someone on call all week hears once when it starts and once
//! when it ends.

use crate::text::ClockTime;
use serde::{Deserialize, Serialize};

/// `GET|PUT /api/teams/{team_id}/handoff`. Off by default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct HandoffSettings {
    pub enabled: bool,
    /// When the notices go: the team's hand-off time (`HH:MM` in `time_zone`), which
    /// `PUT /api/teams/{team_id}/on-call-day` sets. Answers always carry it; a PUT may leave it
    /// out, and one that names another time is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<ClockTime>,
    /// The team's time zone (answers only; ignored in a PUT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
}

/// A notice later than this after its moment is not sent (a replica that was down, notices
/// just turned on): a stale "you are on call now" is noise.
pub const LATE_NOTICE_SECONDS: i64 = 3600;
