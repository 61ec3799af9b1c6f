//! A team's rota: rotations that fill the schedule, dates offered and taken, "take over now",
//! and the log of those changes.

#[cfg(feature = "ssr")]
use klaxon_domain::ids::{RotationId, TeamId};
use klaxon_domain::rotation::{Filling, Rota, Rotation};
use klaxon_domain::schedule::ScheduleEntry;
use leptos::prelude::*;

#[server(prefix = "/rpc")]
pub async fn get_rota(team_id: i64) -> Result<Rota, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.rota(&actor, team_id).await.map_err(fail)
}

/// Turns hand-off notices on (`enabled` is a checkbox: present when ticked) or off.
#[server(prefix = "/rpc")]
pub async fn set_handoff(
    team_id: i64,
    enabled: Option<String>,
) -> Result<klaxon_domain::handoff::HandoffSettings, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let settings = klaxon_domain::handoff::HandoffSettings {
        enabled: enabled.is_some(),
        at: None,
        time_zone: None,
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
    let (core, actor) = signed_in().await?;
    let members: Vec<&str> = members
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|n| !n.is_empty())
        .collect();
    let start_date = start_date.trim().to_string();
    core.create_rotation_by_names(&actor, team_id, name, &members, shift_days, start_date)
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
    core.fill_rotation(&actor, TeamId(team_id), RotationId(id), &req)
        .await
        .map_err(fail)
}
