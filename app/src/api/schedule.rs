//! Who is on call: a team's shifts by month, today's holders, the next two weeks.

#[cfg(feature = "ssr")]
use klaxon_domain::ids::{TeamId, UserId};
use klaxon_domain::incident::ScheduleEntry;
use klaxon_domain::schedule::ScheduleOverview;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// One month of a team's schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonthSchedule {
    /// `YYYY-MM`.
    pub month: String,
    /// Today's UTC date, `YYYY-MM-DD`.
    pub today: String,
    pub shifts: Vec<ScheduleEntry>,
}

/// The shifts of `month` (`YYYY-MM`; empty means this month).
#[server(prefix = "/rpc")]
pub async fn get_month_schedule(
    team_id: i64,
    month: String,
) -> Result<MonthSchedule, ServerFnError> {
    use crate::server::{fail, signed_in};
    use klaxon_domain::calendar::{month_range, this_month};
    let (core, actor) = signed_in().await?;
    let today = core.team_today(team_id).await.map_err(fail)?;
    let month = Some(month.trim())
        .filter(|m| month_range(m).is_some())
        .map(str::to_string)
        .unwrap_or_else(|| this_month(&today));
    let (first, last) = month_range(&month).unwrap_or_default();
    let shifts = core
        .list_shifts(&actor, team_id, Some(&first), Some(&last))
        .await
        .map_err(fail)?;
    Ok(MonthSchedule {
        month,
        today,
        shifts,
    })
}

/// Gives `user_id` every day from `first` through `last` (or just `first`), all or nothing.
#[server(prefix = "/rpc")]
pub async fn give_shifts(
    team_id: i64,
    user_id: i64,
    first: String,
    last: Option<String>,
) -> Result<Vec<ScheduleEntry>, ServerFnError> {
    use crate::server::{fail, signed_in};
    use klaxon_domain::calendar::date_span;
    let (core, actor) = signed_in().await?;
    let last = last.filter(|l| !l.trim().is_empty());
    let dates = date_span(
        first.trim(),
        last.as_deref().map(str::trim).unwrap_or(first.trim()),
    )
    .map_err(ServerFnError::new)?;
    core.create_shifts(&actor, TeamId(team_id), UserId(user_id), &dates)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn remove_shift(team_id: i64, date: String) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let date = crate::server::field("date", klaxon_domain::calendar::Day::parse(&date))?;
    core.delete_shift(&actor, team_id, date).await.map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn get_schedule_overview() -> Result<ScheduleOverview, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.schedule_overview(&actor).await.map_err(fail)
}
