//! Sign-up: through a usable invite link in either mode, or without one when the install is
//! open. The link's use is counted inside the transaction that creates the account, and only
//! while uses remain, so the last use cannot be redeemed twice.

use super::{invalid, StartedSession};
use crate::authz::require_human;
use crate::credentials::Presented;
use crate::secrets::{hash_token, looks_like_token};
use crate::throttle::Attempt;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::account::MyTeam;
use klaxon_domain::invite::{InviteTeam, SignupCheck};
use klaxon_domain::settings::SignupMode;
use klaxon_domain::sso::GrantSource;
use klaxon_domain::team::Role;
use klaxon_domain::text::Username;
use klaxon_domain::validate;

/// An `invites` row (no alias) that can still be used at `$2`: the SQL side of
/// `InviteState::Usable`, shared by the public check and the redemption.
const USABLE: &str = "revoked_at IS NULL AND expires_at > $2 AND uses < max_uses";

/// The one answer for a link that cannot be used, whatever the reason.
fn unusable() -> Error {
    Error::InviteUnusable
}

/// The token of a link, when it has a token's shape (anything else is unusable unseen).
fn token(invite: Option<&str>) -> Option<Option<&str>> {
    match invite.map(str::trim).filter(|t| !t.is_empty()) {
        None => Some(None),
        Some(t) if looks_like_token(t) => Some(Some(t)),
        Some(_) => None,
    }
}

#[derive(sqlx::FromRow)]
struct Redeemed {
    team_id: i64,
    #[sqlx(try_from = "String")]
    role: Role,
}

impl Core {
    /// Someone signed in joins the link's team with its role, using one of its uses. Already a
    /// member: 409, and the use is not counted. The link is checked as at sign-up (one answer
    /// for every reason it cannot be used).
    pub async fn join_by_invite(&self, actor: &Actor, invite: &str) -> Result<MyTeam> {
        require_human(actor)?;
        let Some(Some(t)) = token(Some(invite)) else {
            return Err(unusable());
        };
        let now = self.now();
        let mut tx = self.db.begin().await?;
        let joins = sqlx::query_as::<_, Redeemed>(&format!(
            "UPDATE invites SET uses = uses + 1 WHERE token_hash = $1 AND {USABLE} \
             RETURNING team_id, role"
        ))
        .bind(hash_token(t))
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(unusable)?;
        let (name, display_name): (String, String) =
            sqlx::query_as("SELECT name, display_name FROM teams WHERE id = $1")
                .bind(joins.team_id)
                .fetch_one(&mut *tx)
                .await?;
        sqlx::query(
            "INSERT INTO team_members (team_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(joins.team_id)
        .bind(actor.user_id)
        .bind(joins.role.as_str())
        .bind(now)
        .execute(&mut *tx)
        .await
        .map_err(Error::unique(format!(
            "you are already a member of {display_name}; an owner can change your role"
        )))?;
        tx.commit().await?;
        Ok(MyTeam {
            id: joins.team_id,
            name,
            display_name,
            role: joins.role,
            source: GrantSource::Manual,
        })
    }

    /// `GET /api/signup`: the mode, and whether the link is usable and which team it joins. An
    /// expired, revoked, used-up or unknown link answers exactly like no usable link.
    pub async fn signup_check(&self, invite: Option<&str>) -> Result<SignupCheck> {
        let signup_mode = self.settings().await?.signup_mode;
        let team = match token(invite).flatten() {
            Some(t) => sqlx::query_as::<_, (i64, String, String, String)>(&format!(
                "SELECT t.id, t.name, t.display_name, invites.role FROM invites JOIN teams t ON t.id = invites.team_id \
                 WHERE invites.token_hash = $1 AND {USABLE}"
            ))
            .bind(hash_token(t))
            .bind(self.now())
            .fetch_optional(&self.db.pool)
            .await?
            .map(|(id, name, display_name, role)| {
                (
                    InviteTeam {
                        id,
                        name,
                        display_name,
                    },
                    Role::parse(&role),
                )
            }),
            None => None,
        };
        let (team, role) = match team {
            Some((team, role)) => (Some(team), role),
            None => (None, None),
        };
        Ok(SignupCheck {
            signup_mode,
            invite_usable: team.is_some(),
            team,
            role,
        })
    }

    /// Creates an account and signs it in. With a link: joins the link's team with its role
    /// (either mode); without one: only when sign-up is open, into no team. Counted per address
    /// by its own limiter (`throttle`), apart from sign-in failures.
    pub async fn signup(
        &self,
        request: &Presented<'_>,
        username: &Username,
        password: &str,
        invite: Option<&str>,
    ) -> Result<StartedSession> {
        if !self.config.password_login {
            return Err(Error::forbidden(
                "password sign-in is turned off; use single sign-on",
            ));
        }
        self.check_same_origin(request)?;
        self.reserve(Attempt::Signup, &self.client_address(request))
            .await?;
        validate::password(password).map_err(invalid)?;
        let invite = token(invite).ok_or_else(unusable)?;
        if invite.is_none() && self.settings().await?.signup_mode != SignupMode::Open {
            return Err(Error::forbidden(
                "sign-up needs an invite link; ask a team owner for one",
            ));
        }
        let hash = self.hasher.hash(password.to_string()).await?;
        let now = self.now();
        let mut tx = self.db.begin().await?;
        let joins = match invite {
            Some(t) => Some(
                sqlx::query_as::<_, Redeemed>(&format!(
                    "UPDATE invites SET uses = uses + 1 WHERE token_hash = $1 AND {USABLE} \
                     RETURNING team_id, role"
                ))
                .bind(hash_token(t))
                .bind(now)
                .fetch_optional(&mut *tx)
                .await?
                .ok_or_else(unusable)?,
            ),
            None => None,
        };
        // A taken username rolls the use back with everything else.
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO users (username, password_hash, created_at) VALUES ($1, $2, $3) RETURNING id",
        )
        .bind(username.as_str())
        .bind(hash)
        .bind(now)
        .fetch_one(&mut *tx)
        .await
        .map_err(Error::unique(format!("the username \"{username}\" is taken")))?;
        if let Some(j) = joins {
            sqlx::query(
                "INSERT INTO team_members (team_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)",
            )
            .bind(j.team_id)
            .bind(id)
            .bind(j.role.as_str())
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        self.start_session(id, None).await
    }
}
