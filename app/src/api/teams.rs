//! Teams the signed-in user belongs to.

use klaxon_domain::team::{Member, Team};
use leptos::prelude::*;

/// Creates a team with the caller as owner; an empty display name falls back to the name.
#[server(prefix = "/rpc")]
pub async fn create_team(name: String, display_name: String) -> Result<Team, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    let display_name = Some(display_name.trim()).filter(|d| !d.is_empty());
    core.create_team(&actor, &name, display_name)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn get_team(id: i64) -> Result<Team, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.get_team(&actor, id).await.map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn list_members(team_id: i64) -> Result<Vec<Member>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.list_members(&actor, team_id).await.map_err(fail)
}
