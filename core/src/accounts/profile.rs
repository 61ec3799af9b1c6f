//! What a user changes of their own, or an administrator for them: password, push topic and
//! API keys.

use super::invalid;
use crate::authz::require_self_or_admin;
use crate::secrets::{hash_token, new_token};
use crate::{Actor, Core, Error, Result};
use klaxon_domain::account::{ApiKeyInfo, NewApiKey, User};
use klaxon_domain::ids::{KeyId, UserId};
use klaxon_domain::push_setup::{self, PushSetup};
use klaxon_domain::text::{Label, Topic};
use klaxon_domain::{validate, Timestamp};

impl Core {
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
        self.person(id).await?;
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
            let attempt = self
                .reserve_password_check(&actor.username, &actor.address)
                .await?;
            let ok = match stored {
                Some(h) => self.hasher.verify(current.to_string(), Some(h)).await?,
                None => false,
            };
            if !ok {
                return Err(Error::Invalid(
                    "current_password: that is not your current password".into(),
                ));
            }
            self.password_check_passed(&attempt).await?;
        }
        let hash = self.hasher.hash(password.to_string()).await?;
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

    pub async fn set_push_topic(&self, actor: &Actor, id: i64, topic: &Topic) -> Result<User> {
        require_self_or_admin(actor, id)?;
        let topic = topic.get();
        self.person(id).await?;
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

    /// "Use a private topic": the caller's topic becomes a new one nobody can guess, so a
    /// newcomer on a public ntfy server is one tap from being paged.
    pub async fn choose_private_topic(&self, actor: &Actor) -> Result<User> {
        use rand::Rng;
        let random: String = rand::thread_rng()
            .sample_iter(&rand::distributions::Alphanumeric)
            .map(|c| (c as char).to_ascii_lowercase())
            .take(klaxon_domain::push_setup::PRIVATE_TOPIC_RANDOM)
            .collect();
        let topic = Topic::parse(&klaxon_domain::push_setup::private_topic(&random))
            .map_err(Error::Invalid)?;
        self.set_push_topic(actor, actor.user_id, &topic).await
    }

    /// The profile's push card: the ntfy server, the caller's topic and the links that subscribe
    /// a phone to it, and when a test page last reached them.
    pub async fn push_setup(&self, actor: &Actor) -> Result<PushSetup> {
        require_self_or_admin(actor, actor.user_id)?;
        let (topic, tested): (Option<String>, Option<i64>) =
            sqlx::query_as("SELECT push_topic, test_page_at FROM users WHERE id = $1")
                .bind(actor.user_id)
                .fetch_one(&self.db.pool)
                .await?;
        let server = self.config.roads.ntfy_url.clone();
        let both = server.as_deref().zip(topic.as_deref());
        Ok(PushSetup {
            subscribe_link: both.and_then(|(s, t)| push_setup::subscribe_link(s, t)),
            web_link: both.map(|(s, t)| push_setup::web_link(s, t)),
            server,
            topic,
            test_page_at: tested.map(Timestamp),
        })
    }

    pub async fn list_api_keys(&self, actor: &Actor, user_id: i64) -> Result<Vec<ApiKeyInfo>> {
        require_self_or_admin(actor, user_id)?;
        self.person(user_id).await?;
        self.keys_of(user_id).await
    }

    /// The user `id`, refused when it is a service account: a person's settings are not its.
    pub(super) async fn person(&self, id: i64) -> Result<User> {
        let user = self.user_by_id(id).await?;
        if user.kind == klaxon_domain::account::AccountKind::Service {
            return Err(Error::forbidden(
                "a service account has no password or push topic; its keys are managed under /api/service-accounts",
            ));
        }
        Ok(user)
    }

    /// The user's keys, newest first; the caller has checked the right to see them.
    pub(super) async fn keys_of(&self, user_id: i64) -> Result<Vec<ApiKeyInfo>> {
        #[derive(sqlx::FromRow)]
        struct KeyRow {
            id: i64,
            name: String,
            prefix: String,
            created_at: i64,
            last_used_at: Option<i64>,
        }
        let rows: Vec<KeyRow> = sqlx::query_as(
            "SELECT id, name, prefix, created_at, last_used_at FROM api_keys WHERE user_id = $1 ORDER BY id DESC",
        )
        .bind(user_id)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|k| ApiKeyInfo {
                id: k.id,
                name: k.name,
                prefix: k.prefix,
                created_at: Timestamp(k.created_at),
                last_used_at: k.last_used_at.map(Timestamp),
            })
            .collect())
    }

    /// Mints a key carrying exactly its owner's rights; the raw key is returned only here.
    pub async fn create_api_key(
        &self,
        actor: &Actor,
        user_id: i64,
        name: &Label,
    ) -> Result<NewApiKey> {
        require_self_or_admin(actor, user_id)?;
        self.person(user_id).await?;
        self.mint_key(user_id, name).await
    }

    pub async fn delete_api_key(
        &self,
        actor: &Actor,
        user_id: UserId,
        key_id: KeyId,
    ) -> Result<()> {
        require_self_or_admin(actor, user_id.0)?;
        self.person(user_id.0).await?;
        self.revoke_key(user_id, key_id).await
    }

    /// A new key for `user_id`; the caller has checked the right to mint it.
    pub(super) async fn mint_key(&self, user_id: i64, name: &Label) -> Result<NewApiKey> {
        let name = name.to_string();
        let key = new_token();
        let mut tx = self.db.begin().await?;
        let id = insert_api_key(&mut tx, user_id, &name, &key, self.now()).await?;
        tx.commit().await?;
        Ok(NewApiKey { id, name, key })
    }

    /// Deletes one of `user_id`'s keys (404 when it has no such key); the caller has checked
    /// the right.
    pub(super) async fn revoke_key(&self, user_id: UserId, key_id: KeyId) -> Result<()> {
        let (UserId(user_id), KeyId(key_id)) = (user_id, key_id);
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

pub(super) async fn insert_api_key(
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
