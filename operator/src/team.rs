//! A `KlaxonTeam`'s work on the server, apart from Kubernetes: create or adopt the team and its
//! team-scoped account, re-apply the name and group mapping, and keep an invite link fresh.

use crate::crd::{InviteRole, TeamOidc};
use crate::klaxon::{Klaxon, Result};
use klaxon_domain::invite::NewInvite;
use klaxon_domain::team::Team;

/// A stored invite is replaced this long before the server's 7-day expiry.
pub const INVITE_REFRESH_BEFORE: i64 = 86_400;

/// The team-scoped account the operator acts through (usernames are unique across the
/// install, team names too).
pub fn account_name(team_name: &str) -> String {
    format!("operator-{team_name}")
}

/// A team on the server with a fresh key of its team-scoped account.
#[derive(Debug)]
pub struct Provisioned {
    pub team: Team,
    pub account_id: i64,
    pub key: String,
}

/// Creates the team, or adopts it when the name is taken (409, then lookup by name); then
/// creates its team-scoped account, or adopts it by name, and mints a new key for it.
pub async fn provision(
    instance: &Klaxon,
    name: &str,
    display_name: Option<&str>,
) -> Result<Provisioned> {
    let team = match instance.create_team(name, display_name).await {
        Ok(team) => team,
        Err(e) if e.status() == Some(409) => match instance.team_by_name(name).await? {
            Some(team) => team,
            None => return Err(e),
        },
        Err(e) => return Err(e),
    };
    let username = account_name(name);
    let existing = instance
        .team_accounts(team.id)
        .await?
        .into_iter()
        .find(|a| a.username == username);
    let account = match existing {
        Some(account) => account,
        None => instance.create_team_account(team.id, &username).await?,
    };
    let key = instance.mint_key(account.id, "klaxon-operator").await?;
    Ok(Provisioned {
        team,
        account_id: account.id,
        key: key.key,
    })
}

/// Re-applied on every reconcile, whole: the display name, the group mapping and the on-call
/// day (zone and hand-off time; `UTC` and `00:00` when the spec leaves them out). Setting the
/// day the server already has changes nothing there.
pub async fn apply(
    team: &Klaxon,
    team_id: i64,
    display_name: &str,
    oidc: Option<&TeamOidc>,
    day: (Option<&str>, Option<&str>),
) -> Result<Team> {
    team.rename_team(team_id, display_name).await?;
    team.set_oncall_day(team_id, day.0.unwrap_or("UTC"), day.1.unwrap_or("00:00"))
        .await?;
    let oidc = oidc.cloned().unwrap_or_default();
    team.set_oidc_mapping(team_id, &oidc.member_groups, &oidc.owner_groups)
        .await
}

/// Whether an invite must be minted: none stored, or within a day of its expiry.
pub fn invite_due(stored_expires_at: Option<i64>, now: i64) -> bool {
    stored_expires_at.is_none_or(|at| at - INVITE_REFRESH_BEFORE <= now)
}

/// Mints the invite the spec asks for after revoking the one it replaces, so a reconcile that
/// fails half way never leaves a second usable link behind.
pub async fn refresh_invite(
    team: &Klaxon,
    team_id: i64,
    previous: Option<i64>,
    role: InviteRole,
    max_uses: i64,
) -> Result<NewInvite> {
    let role = match role {
        InviteRole::Member => "member",
        InviteRole::Owner => "owner",
    };
    if let Some(old) = previous {
        revoke_invite(team, team_id, old).await?;
    }
    team.create_invite(team_id, role, max_uses).await
}

/// Revokes an invite; one the server no longer has (404) or already revoked (409) is gone.
pub async fn revoke_invite(team: &Klaxon, team_id: i64, invite_id: i64) -> Result<()> {
    match team.revoke_invite(team_id, invite_id).await {
        Err(e) if matches!(e.status(), Some(404 | 409)) => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invites_are_refreshed_a_day_before_they_expire() {
        let now = 1_000_000;
        assert!(invite_due(None, now));
        assert!(!invite_due(Some(now + INVITE_REFRESH_BEFORE + 1), now));
        assert!(invite_due(Some(now + INVITE_REFRESH_BEFORE), now));
        assert!(invite_due(Some(now - 5), now));
    }
}
