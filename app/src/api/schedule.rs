//! Who is on call: a team's shifts by month, today's holders, the next two weeks.

#[cfg(feature = "ssr")]
use klaxon_domain::ids::{TeamId, UserId};
use klaxon_domain::oncall_day::{Cover, OncallDay};
use klaxon_domain::schedule::ScheduleEntry;
use klaxon_domain::schedule::ScheduleOverview;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// One month of a team's schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonthSchedule {
    /// `YYYY-MM`.
    pub month: String,
    /// The date of the team's on-call day in progress, `YYYY-MM-DD`.
    pub today: String,
    pub shifts: Vec<ScheduleEntry>,
    /// The team's zone and hand-off time, and how its days run.
    pub day: OncallDay,
    /// Covers in force or to come.
    pub covers: Vec<CoverRow>,
    /// Dates of the month with a cover, and what to write on them ("bob 14:00–18:00").
    pub marks: Vec<(String, String)>,
}

/// A cover as the schedule page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverRow {
    pub id: i64,
    /// "bob covers for alice, Sunday 22 November 14:00 to 18:00 (America/New_York)".
    pub text: String,
    /// The viewer is one of its people or an owner, so may end it.
    pub may_end: bool,
    /// Under way, so ending it hands the pager back now.
    pub started: bool,
    pub starts_at: klaxon_domain::Timestamp,
    pub ends_at: klaxon_domain::Timestamp,
}

#[cfg(feature = "ssr")]
fn cover_rows(
    covers: &[Cover],
    rule: &klaxon_domain::oncall_day::HandOff,
    me: i64,
    owner: bool,
    now: i64,
) -> (Vec<CoverRow>, Vec<(String, String)>) {
    let mut rows = Vec::new();
    let mut marks = Vec::new();
    for c in covers {
        let (from, to) = (c.starts_at.0, c.ends_at.0);
        let same_day = rule.local_date(from) == rule.local_date(to - 1);
        let end = if same_day {
            rule.local_time(to)
        } else {
            rule.local_words(to)
        };
        let whom = c
            .covered_username
            .as_deref()
            .map(|n| format!(" for {n}"))
            .unwrap_or_default();
        rows.push(CoverRow {
            id: c.id,
            text: format!(
                "{} covers{whom}, {} to {end} ({})",
                c.username,
                rule.local_words(from),
                rule.zone_name()
            ),
            may_end: owner || c.user_id == me || c.covered_user_id == Some(me),
            started: from <= now,
            starts_at: c.starts_at,
            ends_at: c.ends_at,
        });
        let mut date = rule.local_date(from);
        let last = rule.local_date(to - 1);
        while date <= last {
            let text = if same_day {
                format!(
                    "{} {}–{}",
                    c.username,
                    rule.local_time(from),
                    rule.local_time(to)
                )
            } else {
                format!("{} covers", c.username)
            };
            marks.push((date.to_string(), text));
            match date.tomorrow() {
                Ok(next) => date = next,
                Err(_) => break,
            }
        }
    }
    (rows, marks)
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
    let day = core.oncall_day(&actor, team_id).await.map_err(fail)?;
    let rule = klaxon_domain::oncall_day::HandOff::new(&day.time_zone, &day.handoff_time)
        .unwrap_or_default();
    let owner = core
        .team_access(&actor, team_id)
        .await
        .map_err(fail)?
        .is_owner();
    let covers = core.list_covers(&actor, team_id).await.map_err(fail)?;
    let (covers, marks) = cover_rows(&covers, &rule, actor.user_id, owner, core.now());
    Ok(MonthSchedule {
        month,
        today,
        shifts,
        day,
        covers,
        marks,
    })
}

/// What a change of the team's zone and hand-off time would do, stored only when `save` is
/// given (the preview's "Save" button).
#[server(prefix = "/rpc")]
pub async fn change_oncall_day(
    team_id: i64,
    time_zone: String,
    handoff_time: String,
    save: Option<String>,
) -> Result<OncallDay, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    use klaxon_domain::oncall_day::OncallDayChange;
    use klaxon_domain::text::{ClockTime, ZoneName};
    let (core, actor) = signed_in().await?;
    let change = OncallDayChange {
        time_zone: field("time_zone", ZoneName::parse(&time_zone))?,
        handoff_time: field("handoff_time", ClockTime::parse(&handoff_time))?,
        dry_run: save.is_none(),
    };
    core.set_oncall_day(&actor, team_id, change)
        .await
        .map_err(fail)
}

/// A cover from the calendar: `from` and `to` are wall-clock times in the team's zone
/// (`datetime-local` fields); no `covered_user_id` means whoever holds the pager at `from`.
#[server(prefix = "/rpc")]
pub async fn make_cover(
    team_id: i64,
    user_id: i64,
    covered_user_id: Option<String>,
    from: String,
    to: String,
) -> Result<Cover, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    use klaxon_domain::oncall_day::{HandOff, NewCover};
    use klaxon_domain::Timestamp;
    let (core, actor) = signed_in().await?;
    let invalid = |why: String| fail(klaxon_core::Error::Invalid(why));
    let day = core.oncall_day(&actor, team_id).await.map_err(fail)?;
    let rule = HandOff::new(&day.time_zone, &day.handoff_time).unwrap_or_default();
    let covered_user_id = match covered_user_id.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(id) => Some(field(
            "covered_user_id",
            id.parse::<i64>()
                .map_err(|_| "must be a member".to_string()),
        )?),
    };
    let new = NewCover {
        user_id,
        covered_user_id,
        starts_at: Timestamp(rule.wall_instant("from", &from).map_err(invalid)?),
        ends_at: Timestamp(rule.wall_instant("to", &to).map_err(invalid)?),
    };
    core.create_cover(&actor, team_id, new).await.map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn end_cover(team_id: i64, cover_id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.end_cover(&actor, team_id, cover_id)
        .await
        .map_err(fail)
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

/// The caller's calendar link of the team, if they made one (its URL was shown once).
#[server(prefix = "/rpc")]
pub async fn get_calendar_feed(
    team_id: i64,
) -> Result<Option<klaxon_domain::schedule::CalendarFeed>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.calendar_feed(&actor, team_id).await.map_err(fail)
}

/// A new calendar link for the caller, replacing theirs: its URL, this once.
#[server(prefix = "/rpc")]
pub async fn make_calendar_feed(
    team_id: i64,
) -> Result<klaxon_domain::schedule::NewCalendarFeed, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.make_calendar_feed(&actor, team_id).await.map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn stop_calendar_feed(team_id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.stop_calendar_feed(&actor, team_id).await.map_err(fail)
}
