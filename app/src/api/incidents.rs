//! Incidents: the list, one incident with everything needed to work it, and the actions on it.

use klaxon_domain::board::IncidentBoard;
#[cfg(feature = "ssr")]
use klaxon_domain::ids::{IncidentId, NoteId, UserId};
use klaxon_domain::incident::Incident;
use klaxon_domain::incident_page::IncidentView;
use leptos::prelude::*;

/// The home page's list, narrowed by the list's filters (`show`: mine, teams or all;
/// `severity`; `state`: open, triggered or acknowledged; each empty for its default); `bundle`
/// adds the incidents of the summary push it was opened from.
#[server(prefix = "/rpc")]
pub async fn get_incident_board(
    bundle: Option<i64>,
    show: Option<String>,
    severity: Option<String>,
    state: Option<String>,
) -> Result<IncidentBoard, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    use klaxon_domain::alerting::Severity;
    use klaxon_domain::board::{BoardFilter, BoardScope, BoardState};
    fn word<T>(
        name: &str,
        v: Option<String>,
        parse: fn(&str) -> Option<T>,
    ) -> Result<Option<T>, ServerFnError> {
        match v.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            None => Ok(None),
            Some(s) => field(
                name,
                parse(s)
                    .map(Some)
                    .ok_or_else(|| format!("unknown {name} {s:?}")),
            ),
        }
    }
    let filter = BoardFilter {
        scope: word("show", show, BoardScope::parse)?.unwrap_or_default(),
        severity: word("severity", severity, Severity::parse)?,
        state: word("state", state, BoardState::parse)?.unwrap_or_default(),
    };
    let (core, actor) = signed_in().await?;
    core.incident_board(&actor, bundle, filter)
        .await
        .map_err(fail)
}

/// "Acknowledge all N shown": `ids` is the shown incidents' ids, comma-separated (a plain
/// form's hidden field). Returns the ids acknowledged.
#[server(prefix = "/rpc")]
pub async fn acknowledge_shown(ids: String) -> Result<Vec<i64>, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    let ids = field(
        "ids",
        ids.split(',')
            .map(|s| s.trim().parse::<i64>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| "must be incident numbers separated by commas".to_string()),
    )?;
    let (core, actor) = signed_in().await?;
    core.acknowledge_many(&actor, &ids).await.map_err(fail)
}

/// One incident with everything the incident page needs, including what the caller may do.
#[server(prefix = "/rpc")]
pub async fn incident_page(id: i64) -> Result<IncidentView, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.incident_view(&actor, id).await.map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn acknowledge(id: i64) -> Result<Incident, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.acknowledge(&actor, id).await.map_err(fail)
}

/// Resolves; a non-empty `resolution` is kept as the note saying what fixed it.
#[server(prefix = "/rpc")]
pub async fn resolve(id: i64, resolution: Option<String>) -> Result<Incident, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.resolve(&actor, id, resolution.as_deref())
        .await
        .map_err(fail)
}

/// `duration` as written by people: `30m`, `1h`, `4h`.
#[server(prefix = "/rpc")]
pub async fn snooze(id: i64, duration: String) -> Result<Incident, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let duration = duration
        .trim()
        .parse::<klaxon_domain::Duration>()
        .map_err(|_| ServerFnError::new("Choose how long to snooze, such as 30m, 1h or 4h."))?;
    core.snooze(&actor, id, duration).await.map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn unsnooze(id: i64) -> Result<Incident, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.unsnooze(&actor, id).await.map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn assign(id: i64, user_id: i64) -> Result<Incident, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.assign(&actor, IncidentId(id), UserId(user_id))
        .await
        .map_err(fail)
}

/// `resolution` is a checkbox: present (any value) when ticked.
#[server(prefix = "/rpc")]
pub async fn add_note(
    id: i64,
    text: String,
    resolution: Option<String>,
) -> Result<Incident, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.add_note(&actor, id, &text, resolution.is_some())
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn pin_resolution_note(id: i64, note_id: i64) -> Result<Incident, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.pin_resolution_note(&actor, IncidentId(id), NoteId(note_id))
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn set_archived(id: i64, archived: bool) -> Result<Incident, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.set_archived(&actor, id, archived).await.map_err(fail)
}

/// Silences the incident's alerts in Alertmanager for `duration` (`1h`, `4h`, `1d`).
#[server(prefix = "/rpc")]
pub async fn silence_incident(
    id: i64,
    duration: String,
) -> Result<klaxon_domain::silence::Silence, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let duration = duration
        .trim()
        .parse::<klaxon_domain::Duration>()
        .map_err(|_| ServerFnError::new("Choose how long to silence, such as 1h, 4h or 1d."))?;
    core.silence_incident(&actor, id, duration)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn expire_silence(id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.expire_silence(&actor, id).await.map_err(fail)
}

/// The team's last twelve weeks of incidents and response times, for its charts.
#[server(prefix = "/rpc")]
pub async fn weekly_stats(
    team_id: i64,
) -> Result<Vec<klaxon_domain::incident::WeeklyStats>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.weekly_incident_stats(&actor, Some(team_id), None)
        .await
        .map_err(fail)
}
