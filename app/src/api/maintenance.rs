//! A team's maintenance windows.

#[cfg(feature = "ssr")]
use klaxon_domain::ids::{MaintenanceId, TeamId};
use klaxon_domain::maintenance::Maintenance;
use leptos::prelude::*;

/// A team's windows, and the zone the page shows them in (the team's).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Windows {
    pub time_zone: String,
    pub windows: Vec<Maintenance>,
}

#[server(prefix = "/rpc")]
pub async fn list_maintenance(team_id: i64) -> Result<Windows, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let windows = core.list_maintenance(&actor, team_id).await.map_err(fail)?;
    let day = core.oncall_day(&actor, team_id).await.map_err(fail)?;
    Ok(Windows {
        time_zone: day.time_zone,
        windows,
    })
}

/// Starts a window now, or at `starts_at` (`YYYY-MM-DDTHH:MM` on the team's clock, as a
/// `datetime-local` field sends it), lasting `duration` (`1h`, `30m`).
#[server(prefix = "/rpc")]
pub async fn start_maintenance(
    team_id: i64,
    duration: String,
    starts_at: Option<String>,
) -> Result<Maintenance, ServerFnError> {
    use crate::server::{fail, signed_in};
    use klaxon_core::Error;
    use klaxon_domain::maintenance::NewMaintenance;
    use klaxon_domain::Timestamp;
    let (core, actor) = signed_in().await?;
    let invalid = |m: String| fail(Error::Invalid(m));
    let starts_at = match starts_at
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        None => None,
        Some(s) => {
            let day = core.oncall_day(&actor, team_id).await.map_err(fail)?;
            let rule = klaxon_domain::oncall_day::HandOff::new(&day.time_zone, &day.handoff_time)
                .unwrap_or_default();
            Some(Timestamp(
                rule.wall_instant("starts_at", s).map_err(invalid)?,
            ))
        }
    };
    let new = NewMaintenance {
        starts_at,
        ends_at: None,
        duration: Some(
            duration
                .trim()
                .parse()
                .map_err(|e| invalid(format!("duration: {e}")))?,
        ),
    };
    core.create_maintenance(&actor, team_id, &new)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn end_maintenance(team_id: i64, id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.end_maintenance(&actor, TeamId(team_id), MaintenanceId(id))
        .await
        .map_err(fail)
}
