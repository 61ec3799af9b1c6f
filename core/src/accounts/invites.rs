//! Invite links: a team's owners (or its team-scoped service account) make them; anyone with a
//! usable link may sign up into the team with the link's role.

use crate::secrets::{hash_token, new_token};
use crate::{Actor, Core, Error, Result};
use klaxon_domain::ids::{InviteId, TeamId};
use klaxon_domain::invite::{
    Invite, InviteState, NewInvite, INVITE_TTL, MAX_USES_MAX, MAX_USES_MIN,
};
use klaxon_domain::team::Role;
use klaxon_domain::Timestamp;

#[derive(sqlx::FromRow)]
struct InviteRow {
    id: i64,
    team_id: i64,
    #[sqlx(try_from = "String")]
    role: Role,
    max_uses: i64,
    uses: i64,
    expires_at: i64,
    revoked_at: Option<i64>,
    created_by: Option<String>,
    created_at: i64,
}

const INVITE_COLUMNS: &str =
    "i.id, i.team_id, i.role, i.max_uses, i.uses, i.expires_at, i.revoked_at, \
     (SELECT username FROM users WHERE id = i.created_by) AS created_by, i.created_at";

impl InviteRow {
    fn into_invite(self, now: i64) -> Invite {
        Invite {
            id: self.id,
            team_id: self.team_id,
            role: self.role,
            max_uses: self.max_uses,
            uses: self.uses,
            expires_at: Timestamp(self.expires_at),
            created_by: self.created_by,
            created_at: Timestamp(self.created_at),
            state: InviteState::derive(
                self.revoked_at.is_some(),
                self.uses,
                self.max_uses,
                self.expires_at,
                now,
            ),
        }
    }
}

impl Core {
    /// `{public_url}/signup?invite={token}`.
    pub fn invite_url(&self, token: &str) -> String {
        format!("{}/signup?invite={token}", self.config.public_url)
    }

    /// A new link into the team (owner): `role` member by default, `max_uses` 1 by default
    /// (1–100), a week to live. The token is returned only here.
    pub async fn create_invite(
        &self,
        actor: &Actor,
        team_id: i64,
        role: Option<Role>,
        max_uses: Option<i64>,
    ) -> Result<NewInvite> {
        self.require_team_owner(actor, team_id).await?;
        let max_uses = max_uses.unwrap_or(MAX_USES_MIN);
        if !(MAX_USES_MIN..=MAX_USES_MAX).contains(&max_uses) {
            return Err(Error::Invalid(format!(
                "max_uses must be between {MAX_USES_MIN} and {MAX_USES_MAX}"
            )));
        }
        let role = role.unwrap_or(Role::Member);
        let token = new_token();
        let now = self.now();
        // A service account's links are nobody's: `created_by` stays null.
        let creator = actor.is_human().then_some(actor.user_id);
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO invites (team_id, token_hash, role, max_uses, expires_at, created_by, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(team_id)
        .bind(hash_token(&token))
        .bind(role.as_str())
        .bind(max_uses)
        .bind(now + INVITE_TTL)
        .bind(creator)
        .bind(now)
        .fetch_one(&self.db.pool)
        .await?;
        Ok(NewInvite {
            invite: self.invite_by_id(team_id, id).await?,
            url: self.invite_url(&token),
            token,
        })
    }

    /// Every link of the team, newest first, with its state (owner).
    pub async fn list_invites(&self, actor: &Actor, team_id: i64) -> Result<Vec<Invite>> {
        self.require_team_owner(actor, team_id).await?;
        let rows: Vec<InviteRow> = sqlx::query_as(&format!(
            "SELECT {INVITE_COLUMNS} FROM invites i WHERE i.team_id = $1 ORDER BY i.id DESC"
        ))
        .bind(team_id)
        .fetch_all(&self.db.pool)
        .await?;
        let now = self.now();
        Ok(rows.into_iter().map(|r| r.into_invite(now)).collect())
    }

    /// Revokes a link (owner); a link revoked already is a 409, another team's a 404.
    pub async fn revoke_invite(
        &self,
        actor: &Actor,
        team_id: TeamId,
        id: InviteId,
    ) -> Result<Invite> {
        let (TeamId(team_id), InviteId(id)) = (team_id, id);
        self.require_team_owner(actor, team_id).await?;
        let done = sqlx::query(
            "UPDATE invites SET revoked_at = $1 WHERE id = $2 AND team_id = $3 AND revoked_at IS NULL",
        )
        .bind(self.now())
        .bind(id)
        .bind(team_id)
        .execute(&self.db.pool)
        .await?;
        let invite = self.invite_by_id(team_id, id).await?;
        if done.rows_affected() == 0 {
            return Err(Error::Conflict("the invite link is already revoked".into()));
        }
        Ok(invite)
    }

    async fn invite_by_id(&self, team_id: i64, id: i64) -> Result<Invite> {
        let row: InviteRow = sqlx::query_as(&format!(
            "SELECT {INVITE_COLUMNS} FROM invites i WHERE i.id = $1 AND i.team_id = $2"
        ))
        .bind(id)
        .bind(team_id)
        .fetch_optional(&self.db.pool)
        .await?
        .ok_or(Error::NotFound)?;
        Ok(row.into_invite(self.now()))
    }
}

/// Revokes the usable links `user_id` made, in `team_id` or (`None`) in every team. Called in
/// the transaction that takes the owner role away, removes the person from the team, or
/// disables or deletes them, so a link never outlives its maker's right to make it.
pub(crate) async fn revoke_links_of(
    tx: &mut crate::db::Tx,
    user_id: i64,
    team_id: Option<i64>,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "UPDATE invites SET revoked_at = $1 \
         WHERE created_by = $2 AND ($3 IS NULL OR team_id = $3) AND revoked_at IS NULL",
    )
    .bind(now)
    .bind(user_id)
    .bind(team_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
