//! Bootstrap, password sign-in, sessions and API-key authentication.

use super::invalid;
use crate::credentials::{Presented, SESSION_COOKIE};
use crate::secrets::{hash_token, looks_like_token, new_token};
use crate::{Actor, Core, Error, Result, Via};
use klaxon_domain::account::{AccountKind, AuthConfig, Bootstrapped, User};
use klaxon_domain::text::Username;
use klaxon_domain::validate;

/// Sessions live 30 days and slide forward while in use.
pub const SESSION_TTL: i64 = 30 * 86_400;
/// A session's expiry is pushed forward at most this often, to keep reads cheap.
const SLIDE_EVERY: i64 = 3_600;

/// A session just started: the user, the raw token for the cookie (never stored) and how long
/// the cookie should last (to the ceiling of a single sign-on session).
pub struct StartedSession {
    pub user: User,
    pub token: String,
    pub max_age: i64,
}

impl Core {
    /// The `Set-Cookie` value for a new session.
    pub fn session_cookie(&self, started: &StartedSession) -> String {
        let secure = if self.secure_cookies() {
            "; Secure"
        } else {
            ""
        };
        format!(
            "{SESSION_COOKIE}={}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
            started.token, started.max_age
        )
    }

    /// The `Set-Cookie` value that removes the session cookie.
    pub fn clear_session_cookie(&self) -> String {
        let secure = if self.secure_cookies() {
            "; Secure"
        } else {
            ""
        };
        format!("{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{secure}")
    }

    pub async fn auth_config(&self) -> Result<AuthConfig> {
        let (users,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM users")
            .fetch_one(&self.db.pool)
            .await?;
        Ok(AuthConfig {
            password_login: self.config.password_login,
            oidc: self.sso.is_some(),
            oidc_available: self.sso.as_ref().is_some_and(|s| s.available()),
            oidc_name: self.sso.as_ref().map(|s| s.config.name()),
            signup_mode: self.settings().await?.signup_mode,
            needs_bootstrap: users == 0,
        })
    }

    /// Creates the first user, an administrator, with an API key shown once. Refused with 409
    /// once any user exists; a marker row makes two racing calls produce exactly one user.
    pub async fn bootstrap(
        &self,
        username: &Username,
        password: Option<&str>,
    ) -> Result<Bootstrapped> {
        if let Some(p) = password {
            validate::password(p).map_err(invalid)?;
        }
        let hash = match password {
            Some(p) => Some(self.hasher.hash(p.to_string()).await?),
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
        .bind(username.as_str())
        .bind(hash)
        .bind(now)
        .fetch_one(&mut *tx)
        .await?;
        super::profile::insert_api_key(&mut tx, id, "bootstrap", &key, now).await?;
        tx.commit().await?;
        Ok(Bootstrapped {
            user: self.user_by_id(id).await?,
            api_key: key,
        })
    }

    /// Password sign-in. Unknown user, wrong password and disabled account get one identical
    /// answer; the attempt is counted (and refused past the limits) before the password is
    /// even checked. A browser's sign-in
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
        let attempt = self.reserve_password_check(&username, address).await?;
        let row: Option<(i64, Option<String>, i64)> =
            sqlx::query_as("SELECT id, password_hash, disabled FROM users WHERE username = $1")
                .bind(&username)
                .fetch_optional(&self.db.pool)
                .await?;
        let hash = row.as_ref().and_then(|(_, h, _)| h.clone());
        let ok = self.hasher.verify(password.to_string(), hash).await?;
        match row {
            Some((id, _, 0)) if ok => {
                self.password_check_passed(&attempt).await?;
                self.start_session(id, None).await
            }
            _ => Err(unauthorized_login()),
        }
    }

    /// Starts a session. `ceiling` caps sliding (single sign-on).
    pub async fn start_session(
        &self,
        user_id: i64,
        ceiling: Option<i64>,
    ) -> Result<StartedSession> {
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
        Ok(StartedSession {
            user: self.user_by_id(user_id).await?,
            token,
            max_age: ceiling.map_or(SESSION_TTL, |c| (c - now).clamp(0, SESSION_TTL)),
        })
    }

    /// Ends the caller's session (any signed-in caller; an API key has none to end).
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
}

impl Core {
    /// The person a calendar feed's link reads as, and its team; an unknown link, or one whose
    /// person was disabled, is not found.
    pub(crate) async fn authenticate_calendar_feed(&self, token: &str) -> Result<(Actor, i64)> {
        if !looks_like_token(token) {
            return Err(Error::NotFound);
        }
        #[derive(sqlx::FromRow)]
        struct FeedRow {
            feed_id: i64,
            feed_team: i64,
            #[sqlx(flatten)]
            user: UserRowForActor,
        }
        let row: FeedRow = sqlx::query_as(
            "SELECT f.id AS feed_id, f.team_id AS feed_team, u.id, u.username, u.is_admin, u.kind, u.team_id \
             FROM calendar_feeds f JOIN users u ON u.id = f.user_id \
             WHERE f.token_hash = $1 AND u.disabled = 0",
        )
        .bind(hash_token(token))
        .fetch_optional(&self.db.pool)
        .await?
        .ok_or(Error::NotFound)?;
        Ok((
            row.user.into_actor(Via::CalendarFeed(row.feed_id)),
            row.feed_team,
        ))
    }
}

fn unauthorized_login() -> Error {
    Error::Unauthorized
}

fn expiry(now: i64, ceiling: Option<i64>) -> i64 {
    let sliding = now + SESSION_TTL;
    ceiling.map_or(sliding, |c| sliding.min(c))
}

#[derive(sqlx::FromRow)]
struct UserRowForActor {
    id: i64,
    username: String,
    is_admin: i64,
    #[sqlx(try_from = "String")]
    kind: AccountKind,
    team_id: Option<i64>,
}

impl UserRowForActor {
    fn into_actor(self, via: Via) -> Actor {
        let kind = self.kind;
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
