//! What a single sign-on grants, decided from the provider's answer at every sign-in: who the
//! person is (found by issuer and subject; created, or linked to a hand-made account by a
//! trusted email, on first sign-in), whether they may sign in at all, whether they administer
//! the install, and which teams they are in. Only rows with source `oidc` are added, changed or
//! removed, and the last-owner and last-administrator guards do not apply to them: the provider
//! decides.

use crate::accounts::lock_admins;
use crate::{Core, Error, Result};
use klaxon_domain::sso::{username_base, GrantSource, SsoRefusal};
use klaxon_domain::team::Role;
use klaxon_domain::text::Username;

/// The person as the verified ID token describes them.
pub(crate) struct Identity {
    pub issuer: String,
    pub subject: String,
    pub email: Option<String>,
    pub email_verified: bool,
    pub preferred_username: Option<String>,
    pub groups: Vec<String>,
}

impl Identity {
    fn in_any(&self, groups: &[String]) -> bool {
        self.groups.iter().any(|g| groups.contains(g))
    }
}

#[derive(sqlx::FromRow)]
struct MappedTeam {
    id: i64,
    oidc_member_groups: String,
    oidc_owner_groups: String,
}

#[derive(sqlx::FromRow)]
struct Membership {
    team_id: i64,
    #[sqlx(try_from = "String")]
    role: Role,
    #[sqlx(try_from = "String")]
    source: GrantSource,
}

/// Tried in turn after the bare name: `alice`, `alice-2`, … `alice-99`.
const USERNAME_TRIES: u32 = 99;

impl Core {
    /// Finds or makes the user, refuses who may not sign in, and syncs their grants, all in
    /// one transaction: a refusal leaves nothing behind.
    pub(crate) async fn sso_sign_in(&self, id: &Identity) -> Result<i64> {
        let config = &self.sso.as_deref().ok_or(Error::NotFound)?.config;
        if !config.allowed_groups.is_empty() && !id.in_any(&config.allowed_groups) {
            return Err(Error::Sso(SsoRefusal::NotAllowed));
        }
        let now = self.now();
        let mut tx = self.db.begin().await?;
        // The sync changes administrator flags: serialize with the guarded changes.
        lock_admins(&mut tx).await?;
        let known: Option<(i64,)> = sqlx::query_as(
            "SELECT user_id FROM user_identities WHERE issuer = $1 AND subject = $2",
        )
        .bind(&id.issuer)
        .bind(&id.subject)
        .fetch_optional(&mut *tx)
        .await?;
        let user_id = match known {
            Some((user_id,)) => {
                sqlx::query(
                    "UPDATE user_identities SET last_sign_in_at = $1 WHERE issuer = $2 AND subject = $3",
                )
                .bind(now)
                .bind(&id.issuer)
                .bind(&id.subject)
                .execute(&mut *tx)
                .await?;
                user_id
            }
            None => {
                let email = id
                    .email
                    .as_deref()
                    .filter(|e| e.contains('@'))
                    .ok_or(Error::Sso(SsoRefusal::NoEmail))?;
                let linked = if id.email_verified || config.trust_email {
                    linkable_user(&mut tx, email, &id.issuer).await?
                } else {
                    None
                };
                let user_id = match linked {
                    Some(user_id) => user_id,
                    None => create_user(&mut tx, id, email, now).await?,
                };
                sqlx::query(
                    "INSERT INTO user_identities (issuer, subject, user_id, created_at, last_sign_in_at) VALUES ($1, $2, $3, $4, $4)",
                )
                .bind(&id.issuer)
                .bind(&id.subject)
                .bind(user_id)
                .bind(now)
                .execute(&mut *tx)
                .await?;
                user_id
            }
        };
        let (disabled,): (i64,) = sqlx::query_as("SELECT disabled FROM users WHERE id = $1")
            .bind(user_id)
            .fetch_one(&mut *tx)
            .await?;
        if disabled != 0 {
            return Err(Error::Sso(SsoRefusal::Disabled));
        }
        sync_admin(&mut tx, user_id, id.in_any(&config.admin_groups)).await?;
        sync_teams(&mut tx, user_id, id, now).await?;
        tx.commit().await?;
        Ok(user_id)
    }
}

/// The one hand-made person with this email not yet linked to this provider, if there is
/// exactly one.
async fn linkable_user(tx: &mut crate::db::Tx, email: &str, issuer: &str) -> Result<Option<i64>> {
    let rows: Vec<(i64,)> = sqlx::query_as(
        "SELECT id FROM users WHERE email = $1 AND kind = 'human' AND NOT EXISTS \
         (SELECT 1 FROM user_identities i WHERE i.user_id = users.id AND i.issuer = $2) LIMIT 2",
    )
    .bind(email)
    .bind(issuer)
    .fetch_all(&mut **tx)
    .await?;
    Ok(match rows.as_slice() {
        [(id,)] => Some(*id),
        _ => None,
    })
}

/// A new person without a password, named after what the provider says, made unique.
async fn create_user(tx: &mut crate::db::Tx, id: &Identity, email: &str, now: i64) -> Result<i64> {
    let base = username_base(id.preferred_username.as_deref(), Some(email))
        .unwrap_or_else(|| "user".into());
    for n in 1..=USERNAME_TRIES {
        let candidate = if n == 1 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        let Ok(username) = Username::parse(&candidate).map(Username::into_string) else {
            break;
        };
        let taken: Option<(i64,)> = sqlx::query_as("SELECT id FROM users WHERE username = $1")
            .bind(&username)
            .fetch_optional(&mut **tx)
            .await?;
        if taken.is_none() {
            let (user_id,): (i64,) = sqlx::query_as(
                "INSERT INTO users (username, email, created_at) VALUES ($1, $2, $3) RETURNING id",
            )
            .bind(&username)
            .bind(email)
            .bind(now)
            .fetch_one(&mut **tx)
            .await
            // Taken between the check and the insert by a sign-in racing this one.
            .map_err(Error::unique("try signing in again"))?;
            return Ok(user_id);
        }
    }
    Err(Error::Conflict(format!(
        "no free username starting with \"{base}\""
    )))
}

/// The provider's administrator grant follows its groups; a hand-made administrator stays.
async fn sync_admin(tx: &mut crate::db::Tx, user_id: i64, in_admin_group: bool) -> Result<()> {
    let sql = if in_admin_group {
        "UPDATE users SET is_admin = 1, source = 'oidc' WHERE id = $1 AND is_admin = 0"
    } else {
        "UPDATE users SET is_admin = 0, source = 'manual' WHERE id = $1 AND source = 'oidc'"
    };
    sqlx::query(sql).bind(user_id).execute(&mut **tx).await?;
    Ok(())
}

/// Each team's mapping decides the provider's membership: owner groups first, then member
/// groups. Hand-made memberships are left as they are.
async fn sync_teams(tx: &mut crate::db::Tx, user_id: i64, id: &Identity, now: i64) -> Result<()> {
    let teams: Vec<MappedTeam> =
        sqlx::query_as("SELECT id, oidc_member_groups, oidc_owner_groups FROM teams")
            .fetch_all(&mut **tx)
            .await?;
    let held: Vec<Membership> =
        sqlx::query_as("SELECT team_id, role, source FROM team_members WHERE user_id = $1")
            .bind(user_id)
            .fetch_all(&mut **tx)
            .await?;
    for team in teams {
        let groups = |json: &str| serde_json::from_str::<Vec<String>>(json).unwrap_or_default();
        let wanted = if id.in_any(&groups(&team.oidc_owner_groups)) {
            Some(Role::Owner)
        } else if id.in_any(&groups(&team.oidc_member_groups)) {
            Some(Role::Member)
        } else {
            None
        };
        let current = held.iter().find(|m| m.team_id == team.id);
        let query = match (current, wanted) {
            (Some(m), _) if m.source == GrantSource::Manual => continue,
            (Some(m), Some(role)) if m.role == role => continue,
            (Some(_), Some(role)) => sqlx::query(
                "UPDATE team_members SET role = $1 WHERE team_id = $2 AND user_id = $3",
            )
            .bind(role.as_str())
            .bind(team.id)
            .bind(user_id),
            (Some(_), None) => {
                sqlx::query("DELETE FROM team_members WHERE team_id = $1 AND user_id = $2")
                    .bind(team.id)
                    .bind(user_id)
            }
            (None, Some(role)) => sqlx::query(
                "INSERT INTO team_members (team_id, user_id, role, source, created_at) VALUES ($1, $2, $3, 'oidc', $4)",
            )
            .bind(team.id)
            .bind(user_id)
            .bind(role.as_str())
            .bind(now),
            (None, None) => continue,
        };
        query.execute(&mut **tx).await?;
        if wanted.is_none() {
            crate::paging::left_team(tx, user_id, team.id).await?;
        }
        // A grant that no longer makes the person an owner there takes their links with it.
        if current.is_some() && wanted != Some(Role::Owner) {
            crate::accounts::revoke_links_of(tx, user_id, Some(team.id), now).await?;
        }
    }
    Ok(())
}
