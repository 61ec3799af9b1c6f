//! Accounts: the users and the signed-in user's own view. Signing in and sessions are in
//! `signin`, administering users in `admin`, what users change of their own in `profile`.

mod admin;
mod contacts;
mod device;
mod invites;
mod profile;
mod rules;
mod service;
mod signin;
mod signup;

pub(crate) use admin::lock_admins;
pub(crate) use invites::revoke_links_of;
pub use signin::{StartedSession, SESSION_TTL};

use crate::authz::{
    self, may_see_private_fields, require_admin, require_human, signed_in, SignedIn,
};
use crate::{Actor, Core, Error, Result};
use klaxon_domain::account::{AccountKind, Me, MyTeam, Scope, User};
use klaxon_domain::sso::GrantSource;
use klaxon_domain::team::Role;
use klaxon_domain::text::{Email, Topic, Username};
use klaxon_domain::Timestamp;
use serde::Deserialize;

/// Read from `users` unaliased (the `sso` subquery names it).
const USER_COLUMNS: &str = "id, username, is_admin, disabled, kind, team_id, source, push_topic, email, created_at, \
     CASE WHEN EXISTS (SELECT 1 FROM user_identities i WHERE i.user_id = users.id) THEN 1 ELSE 0 END AS sso";

#[derive(sqlx::FromRow)]
struct UserRow {
    id: i64,
    username: String,
    is_admin: i64,
    disabled: i64,
    #[sqlx(try_from = "String")]
    kind: AccountKind,
    team_id: Option<i64>,
    #[sqlx(try_from = "String")]
    source: GrantSource,
    push_topic: Option<String>,
    email: Option<String>,
    created_at: i64,
    sso: i64,
}

impl From<UserRow> for User {
    fn from(r: UserRow) -> User {
        User {
            id: r.id,
            username: r.username,
            is_admin: r.is_admin != 0,
            disabled: r.disabled != 0,
            kind: r.kind,
            scope: Scope::of(r.kind, r.team_id),
            team_id: r.team_id,
            source: r.source,
            sso: r.sso != 0,
            email: r.email,
            push_topic: r.push_topic,
            created_at: Timestamp(r.created_at),
        }
    }
}

/// `POST /api/users` body.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewUser {
    pub username: Username,
    /// At least 8 characters, at most 1024 bytes.
    #[schema(min_length = 8, max_length = 1024)]
    pub password: Option<String>,
    #[serde(default)]
    pub is_admin: bool,
    pub push_topic: Option<Topic>,
    /// Lets the person's first single sign-on link to this account (see `KLAXON_OIDC_TRUST_EMAIL`).
    pub email: Option<Email>,
}

/// Which accounts the caller sees (see `list_users`). Parameters: $1 the exact username asked
/// for or NULL, $2 1 when the caller sees every account, $3 the caller's id, $4 the caller's
/// team scope or NULL.
const VISIBLE: &str = "$2 = 1 OR users.id = $3 \
     OR (users.kind = 'human' AND $1 IS NOT NULL) \
     OR (users.kind = 'human' AND users.id IN (SELECT b.user_id FROM team_members b WHERE b.team_id IN \
         (SELECT a.team_id FROM team_members a WHERE a.user_id = $3) OR b.team_id = $4)) \
     OR (users.kind = 'service' AND (users.team_id = $4 OR users.team_id IN \
         (SELECT a.team_id FROM team_members a WHERE a.user_id = $3)))";

/// The most people one search of `people_to_add` answers.
const MAX_FOUND: usize = 10;

/// The user as `actor` may see them.
fn redacted_for(actor: &Actor, mut user: User) -> User {
    if !may_see_private_fields(actor, user.id) {
        user.push_topic = None;
        user.email = None;
    }
    user
}

fn invalid(e: String) -> Error {
    Error::Invalid(e)
}

impl Core {
    // ---- reading users -------------------------------------------------------------------

    pub(crate) async fn user_by_id(&self, id: i64) -> Result<User> {
        let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1");
        let row: UserRow = sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(&self.db.pool)
            .await?
            .ok_or(Error::NotFound)?;
        Ok(row.into())
    }

    /// The roster as the caller may see it; `username` filters to an exact name. Administrators
    /// and instance-scoped service accounts see every account. Anyone else sees themselves,
    /// the people and service accounts of their teams, and, by exact name only, any person (so
    /// an owner can add someone by name), never another team's service accounts.
    pub async fn list_users(&self, actor: &Actor, username: Option<&str>) -> Result<Vec<User>> {
        let SignedIn = signed_in(actor);
        let username = username.map(|u| u.trim().to_lowercase());
        let sql = format!(
            "SELECT {USER_COLUMNS} FROM users WHERE ($1 IS NULL OR username = $1) AND ({VISIBLE}) \
             ORDER BY username"
        );
        let rows: Vec<UserRow> = sqlx::query_as(&sql)
            .bind(username.as_deref())
            .bind(authz::sees_every_account(actor) as i64)
            .bind(actor.user_id)
            .bind(actor.team_scope)
            .fetch_all(&self.db.pool)
            .await?;
        Ok(rows
            .into_iter()
            .map(|row| redacted_for(actor, row.into()))
            .collect())
    }

    /// People an owner of `team_id` may add to it, for the Members list's search: enabled
    /// people not in the team whose username starts with `query` among those the caller's roster
    /// shows (everyone, for an administrator), and anyone whose username is exactly `query`, as
    /// the roster's exact lookup finds them. At most `MAX_FOUND`, by username.
    pub async fn people_to_add(
        &self,
        actor: &Actor,
        team_id: i64,
        query: &str,
    ) -> Result<Vec<User>> {
        self.require_team_owner(actor, team_id).await?;
        let query = query.trim().to_lowercase();
        if query.is_empty() || query.chars().count() > 64 {
            return Ok(Vec::new());
        }
        let prefix = format!(
            "{}%",
            query
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        let sql = format!(
            "SELECT {USER_COLUMNS} FROM users WHERE users.kind = 'human' AND users.disabled = 0 \
             AND users.id NOT IN (SELECT user_id FROM team_members WHERE team_id = $5) \
             AND (users.username = $7 OR (users.username LIKE $6 ESCAPE '\\' AND ({VISIBLE}))) \
             ORDER BY users.username LIMIT {MAX_FOUND}"
        );
        let rows: Vec<UserRow> = sqlx::query_as(&sql)
            .bind(None::<String>)
            .bind(authz::sees_every_account(actor) as i64)
            .bind(actor.user_id)
            .bind(actor.team_scope)
            .bind(team_id)
            .bind(prefix)
            .bind(&query)
            .fetch_all(&self.db.pool)
            .await?;
        Ok(rows
            .into_iter()
            .map(|row| redacted_for(actor, row.into()))
            .collect())
    }

    /// One account, when the roster would show it to the caller (by its name); else 404.
    pub async fn get_user(&self, actor: &Actor, id: i64) -> Result<User> {
        let SignedIn = signed_in(actor);
        let sql = format!(
            "SELECT {USER_COLUMNS} FROM users WHERE id = $5 AND (($1 IS NULL OR username = $1) AND ({VISIBLE}))"
        );
        let row: UserRow = sqlx::query_as(&sql)
            .bind(None::<String>)
            .bind(authz::sees_every_account(actor) as i64)
            .bind(actor.user_id)
            .bind(actor.team_scope)
            .bind(id)
            .fetch_optional(&self.db.pool)
            .await?
            .ok_or(Error::NotFound)?;
        Ok(redacted_for(actor, row.into()))
    }

    /// The administrator's user listing (same rows, administrator only).
    pub async fn admin_list_users(&self, actor: &Actor) -> Result<Vec<User>> {
        require_admin(actor)?;
        self.list_users(actor, None).await
    }

    pub async fn me(&self, actor: &Actor) -> Result<Me> {
        require_human(actor)?;
        let user = self.user_by_id(actor.user_id).await?;
        #[derive(sqlx::FromRow)]
        struct MyTeamRow {
            id: i64,
            name: String,
            display_name: String,
            #[sqlx(try_from = "String")]
            role: Role,
            #[sqlx(try_from = "String")]
            source: GrantSource,
        }
        let teams: Vec<MyTeamRow> = sqlx::query_as(
            "SELECT t.id, t.name, t.display_name, m.role, m.source FROM teams t JOIN team_members m ON m.team_id = t.id \
             WHERE m.user_id = $1 ORDER BY t.display_name",
        )
        .bind(actor.user_id)
        .fetch_all(&self.db.pool)
        .await?;
        let (dismissed, time_zone, test_page_at, phone): (
            Option<i64>,
            Option<String>,
            Option<i64>,
            i64,
        ) = sqlx::query_as(
            "SELECT onboarding_dismissed_at, time_zone, test_page_at, \
             CASE WHEN push_topic IS NOT NULL OR EXISTS (SELECT 1 FROM contact_methods c WHERE c.user_id = users.id \
               AND c.kind IN ('ntfy', 'webpush') AND c.verified_at IS NOT NULL) THEN 1 ELSE 0 END \
             FROM users WHERE id = $1",
        )
        .bind(actor.user_id)
        .fetch_one(&self.db.pool)
        .await?;
        Ok(Me {
            user,
            teams: teams
                .into_iter()
                .map(|t| MyTeam {
                    id: t.id,
                    name: t.name,
                    display_name: t.display_name,
                    role: t.role,
                    source: t.source,
                })
                .collect(),
            onboarding_dismissed_at: dismissed.map(Timestamp),
            time_zone,
            test_page_at: test_page_at.map(Timestamp),
            pages_reach_phone: phone == 1,
        })
    }

    pub async fn dismiss_onboarding(&self, actor: &Actor) -> Result<()> {
        require_human(actor)?;
        sqlx::query("UPDATE users SET onboarding_dismissed_at = $1 WHERE id = $2")
            .bind(self.now())
            .bind(actor.user_id)
            .execute(&self.db.pool)
            .await?;
        Ok(())
    }
}
