//! Teams the signed-in user belongs to.

use klaxon_domain::account::User;
use klaxon_domain::team::{Member, Team, TeamView};
use leptos::prelude::*;

/// Creates a team with the caller as owner.
#[server(prefix = "/rpc")]
pub async fn create_team(name: String, display_name: String) -> Result<Team, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    use klaxon_domain::text::{LabelOrBlank, TeamName};
    let name = field("name", TeamName::parse(&name))?;
    let display_name = field("display_name", LabelOrBlank::parse(&display_name))?.label();
    let (core, actor) = signed_in().await?;
    core.create_team(&actor, &name, display_name.as_ref())
        .await
        .map_err(fail)
}

/// The team with whether the caller may manage it, which decides the forms its pages offer.
#[server(prefix = "/rpc")]
pub async fn get_team(id: i64) -> Result<TeamView, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.team_view(&actor, id).await.map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn list_members(team_id: i64) -> Result<Vec<Member>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.list_members(&actor, team_id).await.map_err(fail)
}

/// People an owner may add, for the Members search (`query` as typed).
#[server(prefix = "/rpc")]
pub async fn find_people(team_id: i64, query: String) -> Result<Vec<User>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.people_to_add(&actor, team_id, &query)
        .await
        .map_err(fail)
}

/// Adds an existing person to the team; `role` is `member` or `owner`.
#[server(prefix = "/rpc")]
pub async fn add_member(team_id: i64, user_id: i64, role: String) -> Result<Member, ServerFnError> {
    use crate::server::{fail, signed_in};
    use klaxon_domain::ids::{TeamId, UserId};
    let role = parse_role(&role)?;
    let (core, actor) = signed_in().await?;
    core.add_member(&actor, TeamId(team_id), UserId(user_id), role)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn set_member_role(
    team_id: i64,
    user_id: i64,
    role: String,
) -> Result<Member, ServerFnError> {
    use crate::server::{fail, signed_in};
    use klaxon_domain::ids::{TeamId, UserId};
    let role = parse_role(&role)?;
    let (core, actor) = signed_in().await?;
    core.set_member_role(&actor, TeamId(team_id), UserId(user_id), role)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn remove_member(team_id: i64, user_id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    use klaxon_domain::ids::{TeamId, UserId};
    let (core, actor) = signed_in().await?;
    core.remove_member(&actor, TeamId(team_id), UserId(user_id))
        .await
        .map_err(fail)
}

#[cfg(feature = "ssr")]
fn parse_role(role: &str) -> Result<klaxon_domain::team::Role, ServerFnError> {
    klaxon_domain::team::Role::parse(role.trim())
        .ok_or_else(|| ServerFnError::new("Choose member or owner."))
}
