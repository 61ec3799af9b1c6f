//! User administration by administrators, with the self and last-administrator guards.

use super::{invalid, NewUser};
use crate::authz::require_human_admin;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::account::{AccountKind, AdminView, ConsoleUser, User};
use klaxon_domain::sso::GrantSource;
use klaxon_domain::text::Topic;
use klaxon_domain::validate;

impl Core {
    pub async fn create_user(&self, actor: &Actor, new: NewUser) -> Result<User> {
        require_human_admin(actor)?;
        let username = new.username.as_str();
        if let Some(p) = &new.password {
            validate::password(p).map_err(invalid)?;
        }
        let email = new.email.map(String::from);
        let topic = new.push_topic.and_then(Topic::into_option);
        let hash = match new.password {
            Some(p) => Some(self.hasher.hash(p).await?),
            None => None,
        };
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO users (username, password_hash, is_admin, push_topic, email, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        )
        .bind(username)
        .bind(hash)
        .bind(new.is_admin as i64)
        .bind(topic)
        .bind(email)
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
        super::revoke_links_of(&mut tx, id, None, self.now()).await?;
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
            super::revoke_links_of(&mut tx, id, None, self.now()).await?;
        }
        tx.commit().await?;
        self.user_by_id(id).await
    }

    /// The administrator's console in one read, with what it may offer for each account.
    pub async fn admin_console(&self, actor: &Actor) -> Result<AdminView> {
        let users = self
            .admin_list_users(actor)
            .await?
            .into_iter()
            .map(|user| ConsoleUser {
                you: user.id == actor.user_id,
                may_change_admin: admin_flag_refusal(actor, &user).is_none()
                    && user.kind == AccountKind::Human,
                user,
            })
            .collect();
        Ok(AdminView {
            users,
            teams: self.admin_list_teams(actor).await?,
            settings: self.admin_settings(actor).await?,
        })
    }

    pub async fn set_admin(&self, actor: &Actor, id: i64, is_admin: bool) -> Result<User> {
        require_human_admin(actor)?;
        let target = self.user_by_id(id).await?;
        if let Some(why) = admin_flag_refusal(actor, &target) {
            return Err(Error::Conflict(why.into()));
        }
        if is_admin && target.kind != AccountKind::Human {
            return Err(Error::Conflict(
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
}

/// Why `actor` may not change `target`'s administrator flag at all, if so.
fn admin_flag_refusal(actor: &Actor, target: &User) -> Option<&'static str> {
    if target.id == actor.user_id {
        Some("you cannot change your own administrator flag")
    } else if target.source == GrantSource::Oidc {
        Some("the identity provider grants this administrator flag; change the person's groups there")
    } else {
        None
    }
}

/// SQL condition: the row is not an enabled administrator, or other enabled administrators remain.
const NOT_LAST_ADMIN: &str = "(is_admin = 0 OR disabled = 1 OR \
     (SELECT COUNT(*) FROM users WHERE is_admin = 1 AND disabled = 0) > 1)";

/// Taken first in every transaction that checks the administrator count, so two of them
/// cannot both see "another administrator remains" and remove the last two.
pub(crate) async fn lock_admins(tx: &mut crate::db::Tx) -> Result<()> {
    sqlx::query("UPDATE guard_locks SET name = name WHERE name = 'admins'")
        .execute(&mut **tx)
        .await?;
    Ok(())
}

fn last_admin() -> Error {
    Error::Conflict("the last administrator cannot be removed, disabled or demoted".into())
}
