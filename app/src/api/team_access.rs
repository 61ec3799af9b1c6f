//! Who may get into a team: its invite links and its service accounts.

use klaxon_domain::account::{NewApiKey, ServiceAccount, User};
#[cfg(feature = "ssr")]
use klaxon_domain::ids::{InviteId, KeyId, TeamId, UserId};
use klaxon_domain::invite::{Invite, NewInvite};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A link just made, with its QR code (an SVG drawn on the server) for a phone in the room.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedInvite {
    pub invite: NewInvite,
    pub qr_svg: String,
}

#[server(prefix = "/rpc")]
pub async fn list_invites(team_id: i64) -> Result<Vec<Invite>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.list_invites(&actor, team_id).await.map_err(fail)
}

/// `role` is `member` or `owner`; `max_uses` as typed (1 to 100).
#[server(prefix = "/rpc")]
pub async fn create_invite(
    team_id: i64,
    role: String,
    max_uses: String,
) -> Result<CreatedInvite, ServerFnError> {
    use crate::server::{fail, signed_in};
    use klaxon_domain::team::Role;
    let (core, actor) = signed_in().await?;
    let role =
        Role::parse(role.trim()).ok_or_else(|| ServerFnError::new("Choose member or owner."))?;
    let max_uses = max_uses.trim().parse::<i64>().map_err(|_| {
        ServerFnError::new("How many people may use the link? Give a number from 1 to 100.")
    })?;
    let invite = core
        .create_invite(&actor, team_id, Some(role), Some(max_uses))
        .await
        .map_err(fail)?;
    let qr_svg = crate::server::qr_svg(&invite.url);
    Ok(CreatedInvite { invite, qr_svg })
}

#[server(prefix = "/rpc")]
pub async fn revoke_invite(team_id: i64, id: i64) -> Result<Invite, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.revoke_invite(&actor, TeamId(team_id), InviteId(id))
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn list_service_accounts(team_id: i64) -> Result<Vec<ServiceAccount>, ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.team_service_accounts_with_keys(&actor, team_id)
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn create_service_account(team_id: i64, name: String) -> Result<User, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    let name = field("name", klaxon_domain::text::Username::parse(&name))?;
    let (core, actor) = signed_in().await?;
    core.create_team_service_account(&actor, team_id, &name)
        .await
        .map_err(fail)
}

/// Returns the raw key: the only time it is ever shown.
#[server(prefix = "/rpc")]
pub async fn create_service_key(user_id: i64, name: String) -> Result<NewApiKey, ServerFnError> {
    use crate::server::{fail, field, signed_in};
    use klaxon_domain::text::LabelOrBlank;
    let name = field("name", LabelOrBlank::parse(&name))?.label();
    let (core, actor) = signed_in().await?;
    core.create_service_key(&actor, user_id, name.as_ref())
        .await
        .map_err(fail)
}

#[server(prefix = "/rpc")]
pub async fn revoke_service_key(user_id: i64, key_id: i64) -> Result<(), ServerFnError> {
    use crate::server::{fail, signed_in};
    let (core, actor) = signed_in().await?;
    core.delete_service_key(&actor, UserId(user_id), KeyId(key_id))
        .await
        .map_err(fail)
}
