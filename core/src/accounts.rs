//! Accounts: bootstrap, password sign-in, sessions, API keys, and user administration.

use crate::authz::{
    may_see_private_fields, require_admin, require_human, require_human_admin,
    require_self_or_admin,
};
use crate::credentials::Presented;
use crate::secrets::{self, hash_token, looks_like_token, new_token};
use crate::{Actor, Core, Error, Result, Via};
use klaxon_domain::account::{
    AccountKind, ApiKeyInfo, AuthConfig, Bootstrapped, Me, MyTeam, NewApiKey, User,
};
use klaxon_domain::team::Role;
use klaxon_domain::{validate, Timestamp};
use serde::Deserialize;

/// Sessions live 30 days and slide forward while in use.
pub const SESSION_TTL: i64 = 30 * 86_400;
/// A session's expiry is pushed forward at most this often, to keep reads cheap.
const SLIDE_EVERY: i64 = 3_600;

const USER_COLUMNS: &str =
    "id, username, is_admin, disabled, kind, team_id, source, push_topic, created_at";

#[derive(sqlx::FromRow)]
struct UserRow {
    id: i64,
    username: String,
    is_admin: i64,
    disabled: i64,
    kind: String,
    team_id: Option<i64>,
    source: String,
    push_topic: Option<String>,
    created_at: i64,
}

impl From<UserRow> for User {
    fn from(r: UserRow) -> User {
        User {
            id: r.id,
            username: r.username,
            is_admin: r.is_admin != 0,
            disabled: r.disabled != 0,
            kind: AccountKind::parse(&r.kind),
            team_id: r.team_id,
            source: r.source,
            push_topic: r.push_topic,
            created_at: Timestamp(r.created_at),
        }
    }
}

/// `POST /api/users` body.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewUser {
    pub username: String,
    pub password: Option<String>,
    #[serde(default)]
    pub is_admin: bool,
    pub push_topic: Option<String>,
}

/// A session just started: the user and the raw token for the cookie (never stored).
pub struct StartedSession {
    pub user: User,
    pub token: String,
}

/// The user as `actor` may see them.
fn redacted_for(actor: &Actor, mut user: User) -> User {
    if !may_see_private_fields(actor, user.id) {
        user.push_topic = None;
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

    /// The roster, open to every authenticated caller; `username` filters to an exact name.
    /// Push topics are left out except the caller's own (all of them for an administrator).
    pub async fn list_users(&self, actor: &Actor, username: Option<&str>) -> Result<Vec<User>> {
        let rows: Vec<UserRow> = match username {
            Some(u) => {
                let sql = format!("SELECT {USER_COLUMNS} FROM users WHERE username = $1");
                sqlx::query_as(&sql)
                    .bind(u.trim().to_lowercase())
                    .fetch_all(&self.db.pool)
                    .await?
            }
            None => {
                let sql = format!("SELECT {USER_COLUMNS} FROM users ORDER BY username");
                sqlx::query_as(&sql).fetch_all(&self.db.pool).await?
            }
        };
        Ok(rows
            .into_iter()
            .map(|row| redacted_for(actor, row.into()))
            .collect())
    }

    pub async fn get_user(&self, actor: &Actor, id: i64) -> Result<User> {
        Ok(redacted_for(actor, self.user_by_id(id).await?))
    }

    /// The administrator's user listing (same rows, administrator only).
    pub async fn admin_list_users(&self, actor: &Actor) -> Result<Vec<User>> {
        require_admin(actor)?;
        self.list_users(actor, None).await
    }

    // ---- bootstrap and sign-in ---------------------------------------------------------------

    pub async fn auth_config(&self) -> Result<AuthConfig> {
        let (users,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM users")
            .fetch_one(&self.db.pool)
            .await?;
        Ok(AuthConfig {
            password_login: self.config.password_login,
            oidc: self.config.oidc_configured,
            signup_mode: self.settings().await?.signup_mode,
            needs_bootstrap: users == 0,
        })
    }

    /// Creates the first user, an administrator, with an API key shown once. Refused with 409
    /// once any user exists; a marker row makes two racing calls produce exactly one user.
    pub async fn bootstrap(&self, username: &str, password: Option<&str>) -> Result<Bootstrapped> {
        let username = validate::username(username).map_err(invalid)?;
        if let Some(p) = password {
            validate::password(p).map_err(invalid)?;
        }
        let hash = match password {
            Some(p) => Some(secrets::hash_password_async(p.to_string()).await),
            None => None,
        };
        let now = self.now();
        let key = new_token();
        let mut tx = self.db.begin().await?;
        let (users,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM users")
            .fetch_one(&mut *tx)
            .await?;
        let already = Error::Conflict("Klaxon is already bootstrapped".into());
        if users > 0 {
            return Err(already);
        }
        sqlx::query("INSERT INTO settings (key, value) VALUES ('bootstrapped_at', $1)")
            .bind(now.to_string())
            .execute(&mut *tx)
            .await
            .map_err(Error::unique("Klaxon is already bootstrapped"))?;
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO users (username, password_hash, is_admin, created_at) VALUES ($1, $2, 1, $3) RETURNING id",
        )
        .bind(&username)
        .bind(hash)
        .bind(now)
        .fetch_one(&mut *tx)
        .await?;
        insert_api_key(&mut tx, id, "bootstrap", &key, now).await?;
        tx.commit().await?;
        Ok(Bootstrapped {
            user: self.user_by_id(id).await?,
            api_key: key,
        })
    }

    /// Password sign-in. Unknown user, wrong password and disabled account get one identical
    /// answer; the throttle refuses before the password is even checked. A browser's sign-in
    /// must come from our own pages (no login CSRF), and the address the throttle counts is
    /// read from the request as `client_address` says.
    pub async fn login(
        &self,
        request: &Presented<'_>,
        username: &str,
        password: &str,
    ) -> Result<StartedSession> {
        if !self.config.password_login {
            return Err(Error::forbidden(
                "password sign-in is turned off; use single sign-on",
            ));
        }
        self.check_same_origin(request)?;
        let address = self.client_address(request);
        let address = address.as_str();
        let username = username.trim().to_lowercase();
        if username.is_empty()
            || username.len() > 64
            || username.contains('\0')
            || password.len() > validate::MAX_PASSWORD
        {
            return Err(unauthorized_login());
        }
        self.check_login_throttle(&username, address).await?;
        let row: Option<(i64, Option<String>, i64)> =
            sqlx::query_as("SELECT id, password_hash, disabled FROM users WHERE username = $1")
                .bind(&username)
                .fetch_optional(&self.db.pool)
                .await?;
        let hash = row.as_ref().and_then(|(_, h, _)| h.clone());
        let ok = secrets::verify_password_async(password.to_string(), hash).await;
        match row {
            Some((id, _, 0)) if ok => {
                let token = self.start_session(id, None).await?;
                Ok(StartedSession {
                    user: self.user_by_id(id).await?,
                    token,
                })
            }
            _ => {
                self.record_login_failure(&username, address).await?;
                Err(unauthorized_login())
            }
        }
    }

    /// Starts a session and returns its raw token. `ceiling` caps sliding (single sign-on).
    pub async fn start_session(&self, user_id: i64, ceiling: Option<i64>) -> Result<String> {
        let now = self.now();
        let token = new_token();
        sqlx::query(
            "INSERT INTO sessions (token_hash, user_id, created_at, expires_at, max_expires_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(hash_token(&token))
        .bind(user_id)
        .bind(now)
        .bind(expiry(now, ceiling))
        .bind(ceiling)
        .execute(&self.db.pool)
        .await?;
        Ok(token)
    }

    pub async fn logout(&self, actor: &Actor) -> Result<()> {
        if let Via::Session(id) = actor.via {
            sqlx::query("DELETE FROM sessions WHERE id = $1")
                .bind(id)
                .execute(&self.db.pool)
                .await?;
        }
        Ok(())
    }

    /// Judges a session cookie. The disabled check is part of the lookup itself.
    pub async fn authenticate_session(&self, token: &str) -> Result<Actor> {
        if !looks_like_token(token) {
            return Err(Error::Unauthorized);
        }
        let now = self.now();
        let row: Option<(i64, i64, Option<i64>, UserRowForActor)> = sqlx::query_as::<_, SessionRow>(
            "SELECT s.id AS session_id, s.expires_at, s.max_expires_at, u.id, u.username, u.is_admin, u.kind, u.team_id \
             FROM sessions s JOIN users u ON u.id = s.user_id \
             WHERE s.token_hash = $1 AND s.expires_at > $2 AND u.disabled = 0",
        )
        .bind(hash_token(token))
        .bind(now)
        .fetch_optional(&self.db.pool)
        .await?
        .map(|r| (r.session_id, r.expires_at, r.max_expires_at, r.user));
        let (session_id, expires_at, ceiling, user) = row.ok_or(Error::Unauthorized)?;
        let next = expiry(now, ceiling);
        if next - expires_at >= SLIDE_EVERY {
            sqlx::query("UPDATE sessions SET expires_at = $1 WHERE id = $2")
                .bind(next)
                .bind(session_id)
                .execute(&self.db.pool)
                .await?;
        }
        Ok(user.into_actor(Via::Session(session_id)))
    }

    /// Judges a bearer API key and records its last use.
    pub async fn authenticate_api_key(&self, key: &str) -> Result<Actor> {
        if !looks_like_token(key) {
            return Err(Error::Unauthorized);
        }
        let row: Option<KeyRow> = sqlx::query_as(
            "SELECT k.id AS key_id, u.id, u.username, u.is_admin, u.kind, u.team_id \
             FROM api_keys k JOIN users u ON u.id = k.user_id \
             WHERE k.token_hash = $1 AND u.disabled = 0",
        )
        .bind(hash_token(key))
        .fetch_optional(&self.db.pool)
        .await?;
        let row = row.ok_or(Error::Unauthorized)?;
        sqlx::query("UPDATE api_keys SET last_used_at = $1 WHERE id = $2")
            .bind(self.now())
            .bind(row.key_id)
            .execute(&self.db.pool)
            .await?;
        Ok(row.user.into_actor(Via::ApiKey(row.key_id)))
    }

    // ---- the signed-in user ------------------------------------------------------------------

    pub async fn me(&self, actor: &Actor) -> Result<Me> {
        require_human(actor)?;
        let user = self.user_by_id(actor.user_id).await?;
        let teams: Vec<(i64, String, String, String)> = sqlx::query_as(
            "SELECT t.id, t.name, t.display_name, m.role FROM teams t JOIN team_members m ON m.team_id = t.id \
             WHERE m.user_id = $1 ORDER BY t.display_name",
        )
        .bind(actor.user_id)
        .fetch_all(&self.db.pool)
        .await?;
        let (dismissed,): (Option<i64>,) =
            sqlx::query_as("SELECT onboarding_dismissed_at FROM users WHERE id = $1")
                .bind(actor.user_id)
                .fetch_one(&self.db.pool)
                .await?;
        Ok(Me {
            user,
            teams: teams
                .into_iter()
                .map(|(id, name, display_name, role)| MyTeam {
                    id,
                    name,
                    display_name,
                    role: Role::parse(&role).unwrap_or(Role::Member),
                })
                .collect(),
            onboarding_dismissed_at: dismissed.map(Timestamp),
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

    // ---- user administration -----------------------------------------------------------------

    pub async fn create_user(&self, actor: &Actor, new: NewUser) -> Result<User> {
        require_human_admin(actor)?;
        let username = validate::username(&new.username).map_err(invalid)?;
        if let Some(p) = &new.password {
            validate::password(p).map_err(invalid)?;
        }
        let topic = match &new.push_topic {
            Some(t) => validate::push_topic(t).map_err(invalid)?,
            None => None,
        };
        let hash = match new.password {
            Some(p) => Some(secrets::hash_password_async(p).await),
            None => None,
        };
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO users (username, password_hash, is_admin, push_topic, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(&username)
        .bind(hash)
        .bind(new.is_admin as i64)
        .bind(topic)
        .bind(self.now())
        .fetch_one(&self.db.pool)
        .await
        .map_err(Error::unique(format!("the username \"{username}\" is taken")))?;
        self.user_by_id(id).await
    }

    /// Deletes a human or service account. Never oneself, never the last administrator.
    pub async fn delete_user(&self, actor: &Actor, id: i64) -> Result<()> {
        require_human_admin(actor)?;
        if id == actor.user_id {
            return Err(Error::Conflict("you cannot delete your own account".into()));
        }
        self.user_by_id(id).await?;
        let mut tx = self.db.begin().await?;
        lock_admins(&mut tx).await?;
        let done = sqlx::query(&format!(
            "DELETE FROM users WHERE id = $1 AND {NOT_LAST_ADMIN}"
        ))
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(last_admin());
        }
        // What the foreign keys' actions did before migration 0005: the history keeps the
        // pages and entries without their person, the acknowledge tokens go.
        for sql in [
            "UPDATE pages SET user_id = NULL WHERE user_id = $1",
            "UPDATE timeline SET actor_id = NULL WHERE actor_id = $1",
            "DELETE FROM ack_tokens WHERE user_id = $1",
        ] {
            sqlx::query(sql).bind(id).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Disabling ends every session at once; keys stay but are refused by the lookup.
    pub async fn set_disabled(&self, actor: &Actor, id: i64, disabled: bool) -> Result<User> {
        require_human_admin(actor)?;
        if id == actor.user_id {
            return Err(Error::Conflict(
                "you cannot disable your own account".into(),
            ));
        }
        self.user_by_id(id).await?;
        let mut tx = self.db.begin().await?;
        lock_admins(&mut tx).await?;
        let guard = if disabled { NOT_LAST_ADMIN } else { "TRUE" };
        let done = sqlx::query(&format!(
            "UPDATE users SET disabled = $1 WHERE id = $2 AND {guard}"
        ))
        .bind(disabled as i64)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(last_admin());
        }
        if disabled {
            sqlx::query("DELETE FROM sessions WHERE user_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        self.user_by_id(id).await
    }

    pub async fn set_admin(&self, actor: &Actor, id: i64, is_admin: bool) -> Result<User> {
        require_human_admin(actor)?;
        if id == actor.user_id {
            return Err(Error::Conflict(
                "you cannot change your own administrator flag".into(),
            ));
        }
        let target = self.user_by_id(id).await?;
        if is_admin && target.kind != AccountKind::Human {
            return Err(Error::Invalid(
                "is_admin: only human accounts can be administrators".into(),
            ));
        }
        let guard = if is_admin { "TRUE" } else { NOT_LAST_ADMIN };
        let mut tx = self.db.begin().await?;
        lock_admins(&mut tx).await?;
        let done = sqlx::query(&format!(
            "UPDATE users SET is_admin = $1 WHERE id = $2 AND {guard}"
        ))
        .bind(is_admin as i64)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            return Err(last_admin());
        }
        tx.commit().await?;
        self.user_by_id(id).await
    }

    /// Changing one's own password needs the current one. Every other session of the user
    /// ends; the session making the change survives.
    pub async fn change_password(
        &self,
        actor: &Actor,
        id: i64,
        password: &str,
        current: Option<&str>,
    ) -> Result<()> {
        require_self_or_admin(actor, id)?;
        validate::password(password).map_err(invalid)?;
        let (stored,): (Option<String>,) =
            sqlx::query_as("SELECT password_hash FROM users WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.db.pool)
                .await?
                .ok_or(Error::NotFound)?;
        if id == actor.user_id {
            let current = current.ok_or_else(|| {
                Error::Invalid("current_password: required to change your own password".into())
            })?;
            // Guesses at the current password count with the sign-in failures of the username,
            // so a stolen session cannot try passwords faster than the sign-in page allows.
            self.check_login_throttle(&actor.username, &actor.address)
                .await?;
            let ok = match stored {
                Some(h) => secrets::verify_password_async(current.to_string(), Some(h)).await,
                None => false,
            };
            if !ok {
                self.record_login_failure(&actor.username, &actor.address)
                    .await?;
                return Err(Error::Invalid(
                    "current_password: that is not your current password".into(),
                ));
            }
        }
        let hash = secrets::hash_password_async(password.to_string()).await;
        let keep = if id == actor.user_id {
            actor.session_id().unwrap_or(-1)
        } else {
            -1
        };
        let mut tx = self.db.begin().await?;
        sqlx::query("UPDATE users SET password_hash = $1 WHERE id = $2")
            .bind(hash)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM sessions WHERE user_id = $1 AND id <> $2")
            .bind(id)
            .bind(keep)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn set_push_topic(&self, actor: &Actor, id: i64, topic: &str) -> Result<User> {
        require_self_or_admin(actor, id)?;
        let topic = validate::push_topic(topic).map_err(invalid)?;
        let done = sqlx::query("UPDATE users SET push_topic = $1 WHERE id = $2")
            .bind(topic)
            .bind(id)
            .execute(&self.db.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(Error::NotFound);
        }
        self.user_by_id(id).await
    }

    // ---- API keys ----------------------------------------------------------------------------

    pub async fn list_api_keys(&self, actor: &Actor, user_id: i64) -> Result<Vec<ApiKeyInfo>> {
        require_self_or_admin(actor, user_id)?;
        self.user_by_id(user_id).await?;
        let rows: Vec<(i64, String, String, i64, Option<i64>)> = sqlx::query_as(
            "SELECT id, name, prefix, created_at, last_used_at FROM api_keys WHERE user_id = $1 ORDER BY id DESC",
        )
        .bind(user_id)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(id, name, prefix, created, used)| ApiKeyInfo {
                id,
                name,
                prefix,
                created_at: Timestamp(created),
                last_used_at: used.map(Timestamp),
            })
            .collect())
    }

    /// Mints a key carrying exactly its owner's rights; the raw key is returned only here.
    pub async fn create_api_key(
        &self,
        actor: &Actor,
        user_id: i64,
        name: &str,
    ) -> Result<NewApiKey> {
        require_self_or_admin(actor, user_id)?;
        let name = validate::label("name", name).map_err(invalid)?;
        self.user_by_id(user_id).await?;
        let key = new_token();
        let mut tx = self.db.begin().await?;
        let id = insert_api_key(&mut tx, user_id, &name, &key, self.now()).await?;
        tx.commit().await?;
        Ok(NewApiKey { id, name, key })
    }

    pub async fn delete_api_key(&self, actor: &Actor, user_id: i64, key_id: i64) -> Result<()> {
        require_self_or_admin(actor, user_id)?;
        let done = sqlx::query("DELETE FROM api_keys WHERE id = $1 AND user_id = $2")
            .bind(key_id)
            .bind(user_id)
            .execute(&self.db.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(Error::NotFound);
        }
        Ok(())
    }
}

/// SQL condition: the row is not an enabled administrator, or other enabled administrators remain.
const NOT_LAST_ADMIN: &str = "(is_admin = 0 OR disabled = 1 OR \
     (SELECT COUNT(*) FROM users WHERE is_admin = 1 AND disabled = 0) > 1)";

/// Taken first in every transaction that checks the administrator count, so two of them
/// cannot both see "another administrator remains" and remove the last two.
async fn lock_admins(tx: &mut crate::db::Tx) -> Result<()> {
    sqlx::query("UPDATE guard_locks SET name = name WHERE name = 'admins'")
        .execute(&mut **tx)
        .await?;
    Ok(())
}

fn last_admin() -> Error {
    Error::Conflict("the last administrator cannot be removed, disabled or demoted".into())
}

fn unauthorized_login() -> Error {
    Error::Unauthorized
}

fn expiry(now: i64, ceiling: Option<i64>) -> i64 {
    let sliding = now + SESSION_TTL;
    ceiling.map_or(sliding, |c| sliding.min(c))
}

async fn insert_api_key(
    tx: &mut crate::db::Tx,
    user_id: i64,
    name: &str,
    key: &str,
    now: i64,
) -> Result<i64> {
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO api_keys (user_id, name, token_hash, prefix, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(user_id)
    .bind(name)
    .bind(hash_token(key))
    .bind(&key[..8])
    .bind(now)
    .fetch_one(&mut **tx)
    .await?;
    Ok(id)
}

#[derive(sqlx::FromRow)]
struct UserRowForActor {
    id: i64,
    username: String,
    is_admin: i64,
    kind: String,
    team_id: Option<i64>,
}

impl UserRowForActor {
    fn into_actor(self, via: Via) -> Actor {
        let kind = AccountKind::parse(&self.kind);
        Actor {
            user_id: self.id,
            username: self.username,
            is_admin: self.is_admin != 0,
            kind,
            team_scope: if kind == AccountKind::Service {
                self.team_id
            } else {
                None
            },
            via,
            address: String::new(),
        }
    }
}

#[derive(sqlx::FromRow)]
struct SessionRow {
    session_id: i64,
    expires_at: i64,
    max_expires_at: Option<i64>,
    #[sqlx(flatten)]
    user: UserRowForActor,
}

#[derive(sqlx::FromRow)]
struct KeyRow {
    key_id: i64,
    #[sqlx(flatten)]
    user: UserRowForActor,
}
