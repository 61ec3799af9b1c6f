//! A team's rota: rotations that fill the schedule, dates offered and taken, "take over now",
//! and the log of those changes.

#[cfg(feature = "ssr")]
use klaxon_domain::ids::{RotationId, TeamId};
use klaxon_domain::incident::ScheduleEntry;
use klaxon_domain::rotation::{OpenDate, Rotation, ScheduleChange};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// How many days ahead "your dates" lists, today included.
pub const MY_DAYS: usize = 60;
/// How many changes the page shows.
pub const RECENT_CHANGES: i64 = 10;

/// A rotation with its members' names in turn order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamedRotation {
    pub rotation: Rotation,
    pub names: Vec<String>,
}

/// One of the caller's coming dates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MyDate {
    pub date: String,
    pub offered: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rota {
    pub today: String,
    pub me: i64,
    /// Today's holder, if anyone.
    pub holder: Option<ScheduleEntry>,
    /// Dates anyone may take, the caller's own offers included.
    pub open: Vec<OpenDate>,
    pub mine: Vec<MyDate>,
    pub rotations: Vec<NamedRotation>,
    pub changes: Vec<ScheduleChange>,
    pub handoff: klaxon_domain::handoff::HandoffSettings,
}

#[server(prefix = "/rpc")]
pub async fn get_rota(team_id: i64) -> Result<Rota, ServerFnError> {
    use crate::server::{fail, signed_in};
    use klaxon_domain::calendar::days_from;
    use klaxon_domain::incident::utc_date;
    let (core, actor) = signed_in().await?;
    let today = utc_date(core.now());
    let days = days_from(&today, MY_DAYS);
    let shifts = core
        .list_shifts(&actor, team_id, Some(&days[0]), Some(&days[days.len() - 1]))
        .await
        .map_err(fail)?;
    let open = core.open_dates(&actor, team_id).await.map_err(fail)?;
    let members = core.list_members(&actor, team_id).await.map_err(fail)?;
    let name_of = |id: i64| {
        members
            .iter()
            .find(|m| m.user_id == id)
            .map(|m| m.username.clone())
            .unwrap_or_else(|| format!("user {id}"))
    };
    let rotations = core
        .list_rotations(&actor, team_id)
        .await
        .map_err(fail)?
        .into_iter()
        .map(|rotation| NamedRotation {
            names: rotation.user_ids.iter().map(|id| name_of(*id)).collect(),
            rotation,
        })
        .collect();
    let changes = core
        .schedule_changes(&actor, TeamId(team_id), RECENT_CHANGES)
        .await
        .map_err(fail)?;
    let handoff = core.handoff_settings(&actor, team_id).await.map_err(fail)?;
    let me = actor.user_id;
    Ok(Rota {
        handoff,
        holder: shifts.iter().find(|s| s.date == today).cloned(),
        mine: shifts
            .iter()
            .filter(|s| s.user_id == me)
            .map(|s| MyDate {
                date: s.date.clone(),
                offered: open.iter().any(|o| o.date == s.date && o.user_id == me),
            })
            .collect(),
        today,
        me,
        open,
        rotations,
        changes,
    })
}

/// Turns hand-off notices on (`enabled` is a checkbox: present when ticked) or off, at `at`.
#[server(prefix = "/rpc")]
pub async fn set_handoff(
    team_id: i64,
    enabled: Option<String>,
    at: String,
) -> Result<klaxon_domain::handoff::HandoffSettings, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let settings = klaxon_domain::handoff::HandoffSettings {
        enabled: enabled.is_some(),
        at: at.trim().to_string(),
    };
    core.set_handoff(&actor, team_id, settings)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn take_over_now(team_id: i64) -> Result<ScheduleEntry, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.take_over(&actor, team_id, &Default::default())
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn take_date(team_id: i64, date: String) -> Result<ScheduleEntry, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let date = crate::server::field("date", klaxon_domain::calendar::Day::parse(&date))?;
    core.take_date(&actor, team_id, date, &Default::default())
        .await
        .map_err(fail)
}

/// Offers the date to the team, or withdraws the offer.
#[server(prefix = "/rpc")]
pub async fn set_offer(
    team_id: i64,
    date: String,
    offered: bool,
) -> Result<ScheduleEntry, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let date = crate::server::field("date", klaxon_domain::calendar::Day::parse(&date))?;
    core.offer_date(&actor, team_id, date, offered)
        .await
        .map_err(fail)
}

/// Defines a rotation; `members` names the turns in order, separated by commas or spaces.
#[server(prefix = "/rpc")]
pub async fn create_rotation(
    team_id: i64,
    name: String,
    members: String,
    shift_days: i64,
    start_date: String,
) -> Result<Rotation, ServerFnError> {
    use crate::server::{fail, signed_in};
    use klaxon_core::Error;
    use klaxon_domain::rotation::NewRotation;
    let (core, actor) = signed_in().await?;
    let team = core.list_members(&actor, team_id).await.map_err(fail)?;
    let user_ids = members
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|n| !n.is_empty())
        .map(|n| {
            team.iter()
                .find(|m| m.username.eq_ignore_ascii_case(n))
                .map(|m| m.user_id)
                .ok_or_else(|| {
                    fail(Error::Invalid(format!(
                        "no member of the team is called \"{n}\""
                    )))
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let new = NewRotation {
        name,
        user_ids,
        shift_days,
        start_date: start_date.trim().to_string(),
    };
    core.create_rotation(&actor, team_id, &new)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn delete_rotation(team_id: i64, id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.delete_rotation(&actor, TeamId(team_id), RotationId(id))
        .await
        .map_err(fail)
}

/// What applying a rotation did, or would do for a preview, with the request that asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filling {
    pub rotation_id: i64,
    pub from: String,
    pub to: String,
    pub preview: bool,
    /// Date and holder, in date order.
    pub dates: Vec<(String, String)>,
    /// Dates kept as they were (given by hand or by another rotation).
    pub skipped: Vec<String>,
}

/// Applies a rotation from `from` through `to`, keeping dates given by hand; `preview` stores
/// nothing and answers what applying would do.
#[server(prefix = "/rpc")]
pub async fn apply_rotation(
    team_id: i64,
    id: i64,
    from: String,
    to: String,
    preview: bool,
) -> Result<Filling, ServerFnError> {
    use crate::server::{fail, signed_in};
    use klaxon_domain::rotation::ApplyRotation;
    let (core, actor) = signed_in().await?;
    let req = ApplyRotation {
        from: from.trim().to_string(),
        to: to.trim().to_string(),
        replace: true,
        dry_run: preview,
    };
    let done = core
        .apply_rotation(&actor, TeamId(team_id), RotationId(id), &req)
        .await
        .map_err(fail)?;
    let members = core.list_members(&actor, team_id).await.map_err(fail)?;
    Ok(Filling {
        rotation_id: id,
        from: req.from,
        to: req.to,
        preview,
        dates: done
            .dates
            .into_iter()
            .map(|d| {
                let name = members
                    .iter()
                    .find(|m| m.user_id == d.user_id)
                    .map_or_else(|| format!("user {}", d.user_id), |m| m.username.clone());
                (d.date, name)
            })
            .collect(),
        skipped: done.skipped,
    })
}
