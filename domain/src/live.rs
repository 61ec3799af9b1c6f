//! Live updates (`GET /api/events`): what changed, never the change itself. A browser that hears
//! of an incident, team or schedule refetches what it shows of it.

use serde::{Deserialize, Serialize};

/// The SSE `event:` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum EventKind {
    /// An incident, its alerts, notes, timeline or pages changed; `id` is the incident.
    Incident,
    /// A team's name, members, integrations, switches or escalation policy changed; `id` is the team.
    Team,
    /// A team's on-call schedule changed; `id` is the team.
    Schedule,
}

crate::words!(EventKind, "event kind" {
    Incident => "incident",
    Team => "team",
    Schedule => "schedule",
});

/// The SSE `data:` of every event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventData {
    /// The incident for `incident` events, the team otherwise.
    pub id: i64,
    pub team_id: i64,
}

/// One stored event: the SSE `id:` is `seq`, monotonic, so `Last-Event-ID` resumes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveEvent {
    pub seq: i64,
    pub kind: EventKind,
    pub data: EventData,
}
