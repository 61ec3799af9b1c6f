//! Teams the signed-in user belongs to.

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
