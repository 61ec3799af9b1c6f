//! Linking a chat account to a person, once: the person takes a one-time code in the profile and
//! types it in chat (`/klaxon link 123456`); the account acts as them until either side unlinks
//! it. An account links to one person; wrong codes are counted per chat account
//! (`throttle::LINK_CODES_PER_ACCOUNT`), so six digits living ten minutes cannot be guessed.
//! A link made in a private chat with a bot that pages people there (Telegram) makes that chat
//! the person's verified contact method, and unlinking removes it.

use crate::actor::{Actor, Via};
use crate::authz::require_human;
use crate::secrets::hash_token;
use crate::throttle::Attempt;
use crate::{Core, Error, Result};
use klaxon_domain::account::AccountKind;
use klaxon_domain::chat::{ChatLink, LinkCode, LINK_CODE_SECONDS};
use klaxon_domain::contact::{ContactKind, MAX_METHODS};
use klaxon_domain::Timestamp;
use rand::Rng;

#[derive(sqlx::FromRow)]
struct LinkRow {
    id: i64,
    platform: String,
    shown: String,
    created_at: i64,
}

impl From<LinkRow> for ChatLink {
    fn from(r: LinkRow) -> ChatLink {
        ChatLink {
            id: r.id,
            platform: r.platform,
            shown: r.shown,
            created_at: Timestamp(r.created_at),
        }
    }
}

impl Core {
    /// A new link code for the caller, replacing any earlier one; shown once.
    pub async fn new_chat_link_code(&self, actor: &Actor) -> Result<LinkCode> {
        require_human(actor)?;
        let now = self.now();
        let expires_at = now + LINK_CODE_SECONDS;
        // Six digits: no two live codes of different people may be alike.
        for _ in 0..10 {
            let code = format!("{:06}", rand::thread_rng().gen_range(0..1_000_000));
            let hash = hash_token(&code);
            let taken: Option<(i64,)> = sqlx::query_as(
                "SELECT user_id FROM chat_link_codes \
                 WHERE code_hash = $1 AND expires_at > $2 AND user_id <> $3",
            )
            .bind(&hash)
            .bind(now)
            .bind(actor.user_id)
            .fetch_optional(&self.db.pool)
            .await?;
            if taken.is_some() {
                continue;
            }
            sqlx::query(
                "INSERT INTO chat_link_codes (user_id, code_hash, expires_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (user_id) DO UPDATE SET code_hash = $2, expires_at = $3",
            )
            .bind(actor.user_id)
            .bind(&hash)
            .bind(expires_at)
            .execute(&self.db.pool)
            .await?;
            return Ok(LinkCode {
                code,
                expires_at: Timestamp(expires_at),
            });
        }
        Err(Error::Internal("no free link code".into()))
    }

    /// The caller's linked chat accounts.
    pub async fn list_chat_links(&self, actor: &Actor) -> Result<Vec<ChatLink>> {
        let rows: Vec<LinkRow> = sqlx::query_as(
            "SELECT id, platform, shown, created_at FROM chat_links WHERE user_id = $1 ORDER BY id",
        )
        .bind(actor.user_id)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().map(ChatLink::from).collect())
    }

    /// Unlinks one of the caller's chat accounts (404 for anyone else's).
    pub async fn unlink_chat(&self, actor: &Actor, id: i64) -> Result<()> {
        let gone: Option<(String, String)> = sqlx::query_as(
            "DELETE FROM chat_links WHERE id = $1 AND user_id = $2 RETURNING platform, account",
        )
        .bind(id)
        .bind(actor.user_id)
        .fetch_optional(&self.db.pool)
        .await?;
        let Some((platform, account)) = gone else {
            return Err(Error::NotFound);
        };
        self.forget_chat_method(actor.user_id, &platform, &account)
            .await
    }

    /// Links the chat `account` to the person whose live code `code` is; answers what to say
    /// back in chat. Only a database failure is an error.
    pub(crate) async fn link_chat(
        &self,
        platform: &str,
        account: &str,
        shown: &str,
        code: &str,
    ) -> Result<String> {
        let counted = match self
            .reserve(Attempt::ChatLinkCode, &format!("{platform}:{account}"))
            .await
        {
            Ok(r) => r,
            Err(Error::RateLimited { message, .. }) => {
                return Ok(format!("Not linked: {message}."))
            }
            Err(e) => return Err(e),
        };
        let owners: Vec<(i64, String)> = sqlx::query_as(
            "SELECT c.user_id, u.username FROM chat_link_codes c JOIN users u ON u.id = c.user_id \
             WHERE c.code_hash = $1 AND c.expires_at > $2 AND u.disabled = 0",
        )
        .bind(hash_token(code.trim()))
        .bind(self.now())
        .fetch_all(&self.db.pool)
        .await?;
        let [(user_id, username)] = owners.as_slice() else {
            return Ok("Not linked: that is not a live code. Get one under Chat accounts in your Klaxon profile; it works for ten minutes.".into());
        };
        self.give_back(&counted).await?;
        let holder: Option<(i64, String)> = sqlx::query_as(
            "SELECT l.user_id, u.username FROM chat_links l JOIN users u ON u.id = l.user_id \
             WHERE l.platform = $1 AND l.account = $2",
        )
        .bind(platform)
        .bind(account)
        .fetch_optional(&self.db.pool)
        .await?;
        match holder {
            Some((id, _)) if id == *user_id => {}
            Some((_, other)) => {
                return Ok(format!(
                    "Not linked: this account is linked to {other}. Unlink it first (`/klaxon unlink`)."
                ))
            }
            None => {
                sqlx::query(
                    "INSERT INTO chat_links (platform, account, shown, user_id, created_at) \
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(platform)
                .bind(account)
                .bind(shown)
                .bind(user_id)
                .bind(self.now())
                .execute(&self.db.pool)
                .await?;
            }
        }
        sqlx::query("DELETE FROM chat_link_codes WHERE user_id = $1")
            .bind(user_id)
            .execute(&self.db.pool)
            .await?;
        Ok(format!(
            "Linked: what you press or type here acts as {username} in Klaxon."
        ))
    }

    /// Unlinks the chat `account` from whomever it is linked to; answers what to say back.
    pub(crate) async fn unlink_account(&self, platform: &str, account: &str) -> Result<String> {
        let gone: Option<(i64,)> = sqlx::query_as(
            "DELETE FROM chat_links WHERE platform = $1 AND account = $2 RETURNING user_id",
        )
        .bind(platform)
        .bind(account)
        .fetch_optional(&self.db.pool)
        .await?;
        let Some((user_id,)) = gone else {
            return Ok("This account was not linked.".into());
        };
        self.forget_chat_method(user_id, platform, account).await?;
        Ok("Unlinked: this account no longer acts in Klaxon.".into())
    }

    /// Makes `target` the person's verified method of the chat road `platform` (their private
    /// chat with the install's bot, which linking the account proved theirs). `false` when it
    /// was already there or the person has no room for another method.
    pub(crate) async fn add_chat_method(
        &self,
        person: &Actor,
        platform: &str,
        target: &str,
    ) -> Result<bool> {
        let kind = ContactKind::parse(platform)
            .ok_or_else(|| Error::Internal(format!("{platform} is not a contact method kind")))?;
        let label = self.roads.label(kind.as_str()).to_string();
        let now = self.now();
        let mut tx = self.db.begin().await?;
        sqlx::query("UPDATE users SET id = id WHERE id = $1")
            .bind(person.user_id)
            .execute(&mut *tx)
            .await?;
        let added = sqlx::query(
            "INSERT INTO contact_methods (user_id, kind, name, target, verified_at, created_at) \
             SELECT $1, $2, $3, $4, $5, $5 WHERE (SELECT COUNT(*) FROM contact_methods WHERE user_id = $1) < $6 \
             ON CONFLICT (user_id, kind, target) DO NOTHING",
        )
        .bind(person.user_id)
        .bind(kind.as_str())
        .bind(&label)
        .bind(target)
        .bind(now)
        .bind(MAX_METHODS as i64)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(added.rows_affected() == 1)
    }

    /// Removes the method a chat account's link made (`add_chat_method`), when the account is
    /// unlinked: the chat is no longer proven to be the person's.
    pub(crate) async fn forget_chat_method(
        &self,
        user_id: i64,
        platform: &str,
        target: &str,
    ) -> Result<()> {
        if ContactKind::parse(platform).is_none() {
            return Ok(());
        }
        sqlx::query("DELETE FROM contact_methods WHERE user_id = $1 AND kind = $2 AND target = $3")
            .bind(user_id)
            .bind(platform)
            .bind(target)
            .execute(&self.db.pool)
            .await?;
        Ok(())
    }

    /// The enabled person the chat `account` is linked to, as the actor of its actions.
    pub(crate) async fn chat_person(&self, platform: &str, account: &str) -> Result<Option<Actor>> {
        let row: Option<(i64, i64, String, i64)> = sqlx::query_as(
            "SELECT l.id, u.id, u.username, u.is_admin FROM chat_links l \
             JOIN users u ON u.id = l.user_id \
             WHERE l.platform = $1 AND l.account = $2 AND u.disabled = 0 AND u.kind = $3",
        )
        .bind(platform)
        .bind(account)
        .bind(AccountKind::Human.as_str())
        .fetch_optional(&self.db.pool)
        .await?;
        Ok(row.map(|(link, user_id, username, is_admin)| Actor {
            user_id,
            username,
            is_admin: is_admin != 0,
            kind: AccountKind::Human,
            team_scope: None,
            via: Via::Chat(link),
            address: String::new(),
        }))
    }
}
