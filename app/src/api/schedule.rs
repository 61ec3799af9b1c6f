//! Who is on call: a team's shifts by month, today's holders, the next two weeks.

#[cfg(feature = "ssr")]
use klaxon_domain::ids::{TeamId, UserId};
use klaxon_domain::incident::ScheduleEntry;
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

/// The schedule page: today's holders and the next days of every team.
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

/// The shifts of `month` (`YYYY-MM`; empty means this month).
#[server(prefix = "/rpc")]
pub async fn get_month_schedule(
    team_id: i64,
    month: String,
) -> Result<MonthSchedule, ServerFnError> {
    use crate::server::{fail, signed_in};
    use klaxon_domain::calendar::{month_range, this_month};
    use klaxon_domain::incident::utc_date;
    let (core, actor) = signed_in().await?;
    let today = utc_date(core.now());
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
    use klaxon_domain::calendar::days_from;
    use klaxon_domain::incident::utc_date;
    let (core, actor) = signed_in().await?;
    let me = core.me(&actor).await.map_err(fail)?;
    let days = days_from(&utc_date(core.now()), LOOK_AHEAD_DAYS);
    let (first, last) = (days[0].clone(), days[days.len() - 1].clone());
    let holders = core
        .current_holders(&actor)
        .await
        .map_err(fail)?
        .into_iter()
        .map(|h| Holder {
            team_id: h.team_id,
            team_name: me
                .teams
                .iter()
                .find(|t| t.id == h.team_id)
                .map(|t| t.display_name.clone())
                .unwrap_or(h.team_name),
            user_id: h.user_id,
            username: h.username,
        })
        .collect();
    let mut teams = Vec::with_capacity(me.teams.len());
    for t in &me.teams {
        let shifts = core
            .list_shifts(&actor, t.id, Some(&first), Some(&last))
            .await
            .map_err(fail)?;
        teams.push(TeamDays {
            team_id: t.id,
            display_name: t.display_name.clone(),
            shifts,
        });
    }
    Ok(ScheduleOverview {
        me: me.user.id,
        days,
        holders,
        teams,
    })
}
