//! One incident with what working it needs: the API's detail (`GET /api/incidents/{id}`), the
//! incident page's one read, the caller's rights on it and what Klaxon does next. Above
//! `incident`, which knows nothing of pages, teams or silences.

use crate::alerting::IncidentState;
use crate::incident::{Alert, Incident, Note, TimelineEntry};
use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// `GET /api/incidents/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IncidentDetail {
    #[serde(flatten)]
    pub incident: Incident,
    pub alerts: Vec<Alert>,
    pub notes: Vec<Note>,
    pub timeline: Vec<TimelineEntry>,
    /// Who was paged, when, and whether it was delivered.
    pub pages: Vec<crate::paging::Page>,
    /// The Alertmanager silence made from the incident, while it lasts.
    pub silence: Option<crate::silence::Silence>,
    /// The team's reported changes in the two hours before it began, newest first (at most 10).
    #[serde(default)]
    pub changes_before: Vec<crate::change::Change>,
}

/// A resolved incident like this one, with what fixed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SimilarIncident {
    #[serde(flatten)]
    pub incident: Incident,
    pub notes: Vec<Note>,
}

/// What the caller may do to an incident as it stands: decided by the server, so the phone
/// app offers exactly the actions the server would accept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IncidentRights {
    pub acknowledge: bool,
    pub resolve: bool,
    pub snooze: bool,
    pub unsnooze: bool,
    pub assign: bool,
    pub annotate: bool,
    pub archive: bool,
    pub unarchive: bool,
}

impl IncidentRights {
    /// A member of the incident's team (every member may work its incidents) at `now`: an
    /// open incident can be acknowledged (until it is), snoozed, woken while snoozed,
    /// assigned and resolved; a resolved one archived or brought back; notes go on any.
    pub fn of_member(incident: &Incident, now: Timestamp) -> IncidentRights {
        let open = incident.state.is_open();
        IncidentRights {
            acknowledge: incident.state == IncidentState::Triggered,
            resolve: open,
            snooze: open,
            unsnooze: open && incident.snoozed_until.is_some_and(|t| t.0 > now.0),
            assign: open,
            annotate: true,
            archive: !open && !incident.archived,
            unarchive: !open && incident.archived,
        }
    }
}

/// One incident with what working it needs: the incident page's one read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncidentView {
    /// The server's clock when it was read: ages are measured from it.
    pub now: Timestamp,
    pub me: i64,
    pub team_name: String,
    pub detail: IncidentDetail,
    pub similar: Vec<SimilarIncident>,
    /// Who it can be assigned to.
    pub assignable: Vec<crate::team::Member>,
    pub may: IncidentRights,
    /// What a silence made now would match, or why none can be made.
    pub silence: crate::silence::SilencePreview,
    /// What Klaxon does next unless someone acts; none once the incident is acknowledged or
    /// resolved.
    pub next: Option<NextStep>,
}

/// What Klaxon does next about an unacknowledged incident unless someone acts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum NextStep {
    /// The ladder's `level` (1-based) pages `names` at `at` (in the past while the notifier
    /// catches up). A level naming "on call" names today's holder, or `on call` with nobody.
    Escalates {
        level: u32,
        names: Vec<String>,
        at: Timestamp,
    },
    /// Past the ladder's last level: its fallback topic is paged at `at`.
    Fallback { topic: String, at: Timestamp },
    /// Without a ladder: whoever was paged first is paged again at `at`.
    Reminds { name: Option<String>, at: Timestamp },
    /// Snoozed: paging resumes at `at`.
    Wakes { at: Timestamp },
    /// Every level and repeat of the ladder has been paged; nothing more goes.
    LadderDone,
}
