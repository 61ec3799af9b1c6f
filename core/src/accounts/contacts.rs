//! A person's contact methods (`domain::contact`): listed, added and removed by that person or an
//! administrator. An email address, a Matrix account and a webhook are verified by a code sent
//! by that road. The seed's push topic stays on the user row and is paged as before.

use crate::authz::require_self_or_admin;
use crate::mail::{escape_html, Mail};
use crate::outbound::Outcome;
use crate::paging::personal::{Note, PersonalRoad};
use crate::secrets::{hash_token, new_token};
use crate::throttle::Attempt;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::contact::{
    mailbox_key, normalize_code, push_origin, webhook_url, ContactKind, ContactMethod,
    NewContactMethod, Road, CODE_ATTEMPTS, CODE_DIGITS, CODE_RESEND_AFTER, CODE_TTL, MAX_METHODS,
};
use klaxon_domain::Timestamp;
use rand::Rng;

#[derive(sqlx::FromRow)]
struct MethodRow {
    id: i64,
    user_id: i64,
    #[sqlx(try_from = "String")]
    kind: ContactKind,
    name: String,
    target: String,
    verified_at: Option<i64>,
    created_at: i64,
}

const COLUMNS: &str = "id, user_id, kind, name, target, verified_at, created_at";

/// An address's outstanding code.
#[derive(sqlx::FromRow)]
struct Pending {
    code_hash: Option<String>,
    code_expires_at: Option<i64>,
    code_attempts: i64,
    code_sent_at: Option<i64>,
}

#[derive(sqlx::FromRow)]
struct Awaiting {
    #[sqlx(flatten)]
    row: MethodRow,
    #[sqlx(flatten)]
    pending: Pending,
}

/// What is stored of a code: its hash, bound to the method it was sent for.
fn code_hash(method_id: i64, code: &str) -> String {
    hash_token(&format!("{method_id}:{code}"))
}

impl From<MethodRow> for ContactMethod {
    fn from(r: MethodRow) -> ContactMethod {
        // A subscription's endpoint and a webhook's URL are capabilities: only their origin is
        // shown.
        let target = match r.kind {
            ContactKind::Webpush => push_origin(&r.target).unwrap_or_default(),
            ContactKind::Webhook => klaxon_domain::channel::shown_target(
                klaxon_domain::channel::ChannelKind::Webhook,
                &r.target,
            ),
            _ => r.target,
        };
        ContactMethod {
            id: r.id,
            user_id: r.user_id,
            kind: r.kind,
            name: r.name,
            target,
            verified: r.verified_at.is_some(),
            created_at: Timestamp(r.created_at),
            signing_secret: None,
        }
    }
}

impl Core {
    /// The one check of every operation here: the person themselves or an administrator, acting
    /// on a person (never a service account).
    pub(super) async fn acting_for(&self, actor: &Actor, user_id: i64) -> Result<()> {
        require_self_or_admin(actor, user_id)?;
        self.person(user_id).await.map(drop)
    }

    /// The user's contact methods, oldest first.
    pub async fn list_contact_methods(
        &self,
        actor: &Actor,
        user_id: i64,
    ) -> Result<Vec<ContactMethod>> {
        self.acting_for(actor, user_id).await?;
        let rows: Vec<MethodRow> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM contact_methods WHERE user_id = $1 ORDER BY id"
        ))
        .bind(user_id)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    /// Adds a method. A topic and a subscription are verified as added (the person chose the
    /// topic; the browser made the subscription); an email address, a Matrix account or a URL
    /// could be anyone's, so it waits for the code sent by that road, and is not offered without
    /// mail settings or a Matrix bot. When the code cannot be sent, the method is not kept and
    /// what failed is the error. A webhook's signing secret is in this answer only.
    pub async fn add_contact_method(
        &self,
        actor: &Actor,
        user_id: i64,
        new: NewContactMethod,
    ) -> Result<ContactMethod> {
        self.acting_for(actor, user_id).await?;
        let (target, keys) = match &new.road {
            Road::Ntfy { topic } => (
                topic
                    .get()
                    .ok_or_else(|| Error::Invalid("topic: must not be empty".into()))?
                    .to_string(),
                None,
            ),
            Road::Webpush { subscription } => {
                let checked = subscription.check().map_err(Error::Invalid)?;
                let keys = (
                    subscription.keys.p256dh.trim_end_matches('=').to_string(),
                    subscription.keys.auth.trim_end_matches('=').to_string(),
                );
                (checked.endpoint, Some(keys))
            }
            Road::Email { address } => {
                if self.mail.is_none() {
                    return Err(Error::Conflict(
                        "kind: email is not offered: this server has no mail settings (KLAXON_SMTP_URL)"
                            .into(),
                    ));
                }
                (address.to_string(), None)
            }
            Road::Matrix { user } => {
                if self.matrix.is_none() {
                    return Err(Error::Conflict(
                        "kind: matrix is not offered: this server has no Matrix bot (KLAXON_MATRIX_HOMESERVER)"
                            .into(),
                    ));
                }
                (user.to_string(), None)
            }
            Road::Webhook { url } => {
                let url = webhook_url(url).map_err(Error::Invalid)?;
                self.personal_outbound
                    .check_url(&url)
                    .map_err(|why| Error::Invalid(format!("url: {why}")))?;
                (url, None)
            }
        };
        let needs_code = new.road.kind().needs_code();
        let secret = (new.road.kind() == ContactKind::Webhook).then(new_token);
        let now = self.now();
        let mut tx = self.db.begin().await?;
        // Holds the user's row, so two additions at once cannot both find room for one.
        sqlx::query("UPDATE users SET id = id WHERE id = $1")
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        let (count,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM contact_methods WHERE user_id = $1")
                .bind(user_id)
                .fetch_one(&mut *tx)
                .await?;
        if count >= MAX_METHODS as i64 {
            return Err(Error::Conflict(format!(
                "a person has at most {MAX_METHODS} contact methods; remove one first"
            )));
        }
        let (p256dh, auth) = keys.unzip();
        let row: MethodRow = sqlx::query_as(&format!(
            "INSERT INTO contact_methods (user_id, kind, name, target, p256dh, auth, verified_at, created_at, signing_secret) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING {COLUMNS}"
        ))
        .bind(user_id)
        .bind(new.road.kind().as_str())
        .bind(new.name.as_str())
        .bind(&target)
        .bind(p256dh)
        .bind(auth)
        .bind((!needs_code).then_some(now))
        .bind(now)
        .bind(&secret)
        .fetch_one(&mut *tx)
        .await
        .map_err(Error::unique("this contact method is already added"))?;
        tx.commit().await?;
        if needs_code {
            if let Err(e) = self.send_code(user_id, row.id).await {
                sqlx::query("DELETE FROM contact_methods WHERE id = $1")
                    .bind(row.id)
                    .execute(&self.db.pool)
                    .await?;
                // A webhook's URL is the caller's own input: one that does not take the code
                // is refused as input (400), not reported as Klaxon's upstream failing (502).
                return Err(match e {
                    Error::PushFailed(why) if new.road.kind() == ContactKind::Webhook => {
                        Error::Invalid(format!("url: {why}"))
                    }
                    e => e,
                });
            }
        }
        Ok(ContactMethod {
            signing_secret: secret,
            ..row.into()
        })
    }

    /// Removes a method; 404 when the user has no such method.
    pub async fn delete_contact_method(
        &self,
        actor: &Actor,
        user_id: i64,
        method_id: i64,
    ) -> Result<()> {
        self.acting_for(actor, user_id).await?;
        let done = sqlx::query("DELETE FROM contact_methods WHERE id = $1 AND user_id = $2")
            .bind(method_id)
            .bind(user_id)
            .execute(&self.db.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(Error::NotFound);
        }
        Ok(())
    }

    /// Sends a test message by the method, straight away and not through the outbox, so what the
    /// road's service answers is the answer. An address must be verified first.
    pub async fn test_contact_method(
        &self,
        actor: &Actor,
        user_id: i64,
        method_id: i64,
    ) -> Result<()> {
        self.acting_for(actor, user_id).await?;
        let row: MethodRow = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM contact_methods WHERE id = $1 AND user_id = $2"
        ))
        .bind(method_id)
        .bind(user_id)
        .fetch_optional(&self.db.pool)
        .await?
        .ok_or(Error::NotFound)?;
        if row.verified_at.is_none() {
            return Err(Error::Conflict(
                "verify this contact method with the code sent to it first".into(),
            ));
        }
        let target = match row.kind {
            ContactKind::Email => mailbox_key(&row.target),
            _ => row.target.clone(),
        };
        self.reserve_test(actor.user_id, &format!("{}:{target}", row.kind.as_str()))
            .await?;
        let sent = match row.kind {
            ContactKind::Ntfy => self.publish_test_page(row.target).await,
            ContactKind::Email => {
                let mail = self.mail.as_ref().ok_or_else(|| {
                    Error::Conflict("this server has no mail settings (KLAXON_SMTP_URL)".into())
                })?;
                let profile = format!("{}/me", self.config.public_url);
                mail.send(Mail {
                    to: row.target,
                    subject: "Klaxon test page".into(),
                    text: format!(
                        "Pages reach this address. Klaxon sends them from {}.\n\n{profile}\n",
                        mail.from()
                    ),
                    html: format!(
                        "<p>Pages reach this address. Klaxon sends them from {}.</p><p><a href=\"{link}\">{link}</a></p>",
                        escape_html(&mail.from()),
                        link = escape_html(&profile)
                    ),
                })
                .await
                .map_err(|e| Error::PushFailed(e.reason))
            }
            ContactKind::Matrix | ContactKind::Webhook => {
                let note = Note {
                    event: "test",
                    kind: None,
                    title: "Klaxon test page".into(),
                    message: "Pages reach you here.".into(),
                    url: Some(format!("{}/me", self.config.public_url)),
                    ack_page: None,
                    ack_post: None,
                    code: None,
                };
                let delivery = format!("test-{method_id}-{}", self.now());
                self.note_now(method_id, &note, &delivery).await
            }
            ContactKind::Webpush => {
                let keys: (Option<String>, Option<String>) =
                    sqlx::query_as("SELECT p256dh, auth FROM contact_methods WHERE id = $1")
                        .bind(method_id)
                        .fetch_one(&self.db.pool)
                        .await?;
                let to = crate::paging::webpush::Subscription {
                    endpoint: &row.target,
                    p256dh: keys.0.as_deref().unwrap_or_default(),
                    auth: keys.1.as_deref().unwrap_or_default(),
                };
                let payload = serde_json::json!({
                    "title": "Klaxon test page",
                    "body": "Pages reach this device. Keep notifications allowed for Klaxon.",
                    "url": format!("{}/me", self.config.public_url),
                    "tag": "klaxon-test",
                    "kind": "test",
                });
                let sent = crate::paging::webpush::send(
                    &self.personal_outbound,
                    &self.vapid,
                    &self.config.public_url,
                    &to,
                    payload.to_string().as_bytes(),
                )
                .await;
                match sent {
                    Ok(()) => Ok(()),
                    Err(e) => {
                        if e.gone {
                            self.delete_contact_method(actor, user_id, method_id)
                                .await?;
                        }
                        Err(Error::PushFailed(e.reason))
                    }
                }
            }
        };
        sent?;
        self.mark_test_page(user_id).await
    }

    /// Mails a new code to an address still unverified (at most one a minute); the earlier code
    /// and its wrong guesses are forgotten.
    pub async fn resend_contact_code(
        &self,
        actor: &Actor,
        user_id: i64,
        method_id: i64,
    ) -> Result<()> {
        let Awaiting { row, pending } = self.awaiting_code(actor, user_id, method_id).await?;
        if let Some(sent) = pending.code_sent_at {
            let wait = sent + CODE_RESEND_AFTER - self.now();
            if wait > 0 {
                return Err(Error::RateLimited {
                    retry_after: wait,
                    message: format!(
                        "a code was sent less than a minute ago; ask again in {wait} s"
                    ),
                });
            }
        }
        self.send_code(user_id, row.id).await
    }

    /// Checks the code mailed to an address. Right, the method is verified; wrong, one of
    /// `CODE_ATTEMPTS` guesses is used up; after the last, or once the code lapsed, only a new
    /// code can verify it.
    pub async fn verify_contact_method(
        &self,
        actor: &Actor,
        user_id: i64,
        method_id: i64,
        code: &str,
    ) -> Result<ContactMethod> {
        let Awaiting { pending, .. } = self.awaiting_code(actor, user_id, method_id).await?;
        let now = self.now();
        if pending.code_hash.is_none()
            || pending.code_expires_at.is_none_or(|t| t <= now)
            || pending.code_attempts >= CODE_ATTEMPTS
        {
            return Err(Error::Conflict(
                "the code has lapsed or was guessed wrong too often; send a new one".into(),
            ));
        }
        let Some(code) = normalize_code(code) else {
            return Err(Error::Invalid(format!(
                "code: must be the {CODE_DIGITS} digits sent to the contact method"
            )));
        };
        // The attempt is taken before the code is compared, in one statement, so guesses sent
        // at once are counted like guesses sent one after another: the sixth finds none left.
        let reserved: Option<(i64,)> = sqlx::query_as(
            "UPDATE contact_methods SET code_attempts = code_attempts + 1 \
             WHERE id = $1 AND user_id = $2 AND verified_at IS NULL AND code_hash IS NOT NULL \
             AND code_expires_at > $3 AND code_attempts < $4 RETURNING code_attempts",
        )
        .bind(method_id)
        .bind(user_id)
        .bind(now)
        .bind(CODE_ATTEMPTS)
        .fetch_optional(&self.db.pool)
        .await?;
        let Some((attempts,)) = reserved else {
            return Err(Error::Conflict(
                "the code has lapsed or was guessed wrong too often; send a new one".into(),
            ));
        };
        let verified: Option<MethodRow> = sqlx::query_as(&format!(
            "UPDATE contact_methods SET verified_at = $1, code_hash = NULL, code_expires_at = NULL \
             WHERE id = $2 AND user_id = $3 AND verified_at IS NULL AND code_hash = $4 \
             AND code_expires_at > $1 RETURNING {COLUMNS}"
        ))
        .bind(now)
        .bind(method_id)
        .bind(user_id)
        .bind(code_hash(method_id, &code))
        .fetch_optional(&self.db.pool)
        .await?;
        if let Some(row) = verified {
            return Ok(row.into());
        }
        let left = (CODE_ATTEMPTS - attempts).max(0);
        Err(Error::Invalid(if left == 0 {
            "code: wrong, and that was the last try; send a new code".into()
        } else {
            format!("code: wrong; {left} tries left")
        }))
    }

    /// The user's method `method_id` with its code, when it is an address waiting for one.
    async fn awaiting_code(&self, actor: &Actor, user_id: i64, method_id: i64) -> Result<Awaiting> {
        self.acting_for(actor, user_id).await?;
        let found: Option<Awaiting> = sqlx::query_as(&format!(
            "SELECT {COLUMNS}, code_hash, code_expires_at, code_attempts, code_sent_at \
             FROM contact_methods WHERE id = $1 AND user_id = $2"
        ))
        .bind(method_id)
        .bind(user_id)
        .fetch_optional(&self.db.pool)
        .await?;
        let found = found.ok_or(Error::NotFound)?;
        if !found.row.kind.needs_code() || found.row.verified_at.is_some() {
            return Err(Error::Conflict(
                "this contact method is not waiting for a code".into(),
            ));
        }
        Ok(found)
    }

    /// Stores a new code's hash for the method, then sends the code by the method's own road,
    /// within the person's and the target's limits of code messages.
    async fn send_code(&self, user_id: i64, method_id: i64) -> Result<()> {
        let (kind, target): (String, String) =
            sqlx::query_as("SELECT kind, target FROM contact_methods WHERE id = $1")
                .bind(method_id)
                .fetch_one(&self.db.pool)
                .await?;
        let kind = ContactKind::try_from(kind)?;
        if kind == ContactKind::Email && self.mail.is_none() {
            return Err(Error::Conflict(
                "this server has no mail settings (KLAXON_SMTP_URL)".into(),
            ));
        }
        self.reserve(Attempt::CodeMailForUser, &user_id.to_string())
            .await?;
        // Counted by the target's hash (a webhook's URL can hold a credential), an address by
        // the mailbox it reaches however it is written.
        let counted = match kind {
            ContactKind::Email => mailbox_key(&target),
            _ => target.clone(),
        };
        self.reserve(Attempt::CodeMailToAddress, &hash_token(&counted))
            .await?;
        let code = format!("{:06}", rand::thread_rng().gen_range(0..1_000_000));
        let now = self.now();
        sqlx::query(
            "UPDATE contact_methods SET code_hash = $1, code_expires_at = $2, code_attempts = 0, \
             code_sent_at = $3 WHERE id = $4",
        )
        .bind(code_hash(method_id, &code))
        .bind(now + CODE_TTL)
        .bind(now)
        .bind(method_id)
        .execute(&self.db.pool)
        .await?;
        let minutes = CODE_TTL / 60;
        let profile = format!("{}/me", self.config.public_url);
        let ignore = "If you did not ask for it, ignore this message: nothing more is sent here unless the code is entered.";
        let Some(mail) = self.mail.as_ref().filter(|_| kind == ContactKind::Email) else {
            let note = Note {
                event: "verify",
                kind: None,
                title: "Your Klaxon verification code".into(),
                message: format!(
                    "Enter {code} in Klaxon within {minutes} minutes to receive pages here.\n\n{ignore}"
                ),
                url: Some(profile),
                ack_page: None,
                ack_post: None,
                code: Some(code),
            };
            return self
                .note_now(method_id, &note, &format!("verify-{method_id}-{now}"))
                .await;
        };
        let text = format!(
            "Your Klaxon verification code is {code}\n\n\
             Enter it in Klaxon within {minutes} minutes to receive pages at this address:\n\
             {profile}\n\n{ignore}\n"
        );
        let html = format!(
            "<p>Your Klaxon verification code is</p>\
             <p style=\"font-size:2em;letter-spacing:0.2em\"><b>{code}</b></p>\
             <p>Enter it in Klaxon within {minutes} minutes to receive pages at this address: \
             <a href=\"{link}\">{link}</a></p><p>{ignore}</p>",
            link = escape_html(&profile),
        );
        mail.send(Mail {
            to: target,
            subject: "Your Klaxon verification code".into(),
            text,
            html,
        })
        .await
        .map_err(|e| Error::PushFailed(e.reason))
    }

    /// Sends a note to a Matrix or webhook method now, not through the outbox: what failed is
    /// the error (502), a rate limit's wait included in the sentence.
    async fn note_now(&self, method_id: i64, note: &Note, delivery: &str) -> Result<()> {
        let (kind, target, secret, room, username): (
            String,
            String,
            Option<String>,
            Option<String>,
            String,
        ) = sqlx::query_as(
            "SELECT m.kind, m.target, m.signing_secret, m.room, u.username \
             FROM contact_methods m JOIN users u ON u.id = m.user_id WHERE m.id = $1",
        )
        .bind(method_id)
        .fetch_one(&self.db.pool)
        .await?;
        let road = PersonalRoad {
            method_id,
            username: &username,
            target: &target,
            signing_secret: secret.as_deref(),
            room: room.as_deref(),
        };
        let kind = ContactKind::try_from(kind)?;
        match self.note_by_road(kind, &road, note, delivery).await {
            Outcome::Sent => Ok(()),
            Outcome::Failed {
                sentence,
                retry_after: Some(wait),
            } => Err(Error::PushFailed(format!(
                "{sentence}; it asks to wait {wait} s"
            ))),
            Outcome::Failed { sentence, .. } => Err(Error::PushFailed(sentence)),
        }
    }
}
