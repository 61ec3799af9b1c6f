//! A person's contact methods (`domain::contact`): listed, added and removed by that person or an
//! administrator. An email address, a Matrix account and a webhook are verified by a code sent
//! by that road. The seed's push topic stays on the user row and is paged as before.

use crate::authz::require_self_or_admin;
use crate::paging::SendNowError;
use crate::roads::{Message, Owner, To};
use crate::secrets::{hash_token, new_token};
use crate::throttle::Attempt;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::contact::{
    normalize_code, ContactKind, ContactMethod, NewContactMethod, Road, CODE_ATTEMPTS, CODE_DIGITS,
    CODE_RESEND_AFTER, CODE_TTL, MAX_METHODS,
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

impl Core {
    /// A method as listed. A subscription's endpoint and a webhook's URL are capabilities: its
    /// road shows only their origin; a phone number is masked to anyone but its owner.
    fn listed(&self, r: MethodRow, actor: &Actor) -> ContactMethod {
        let target = match self.roads.get(r.kind.as_str()) {
            Some(road) if actor.user_id == r.user_id => road.shown(&r.target),
            Some(road) => road.shown_to_others(&r.target),
            None => r.target,
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
        Ok(rows.into_iter().map(|r| self.listed(r, actor)).collect())
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
            Road::Email { address } => (address.to_string(), None),
            Road::Matrix { user } => (user.to_string(), None),
            Road::Webhook { url } => (url.clone(), None),
            Road::Sms { number, .. } | Road::Voice { number, .. } => (number.to_string(), None),
        };
        let provider = self.chosen_provider(&new.road)?;
        let kind = new.road.kind();
        let road = self
            .roads
            .get(kind.as_str())
            .ok_or_else(|| Error::Invalid(format!("kind: {} is not a road", kind.as_str())))?;
        if let Some(why) = crate::roads::Roads::not_addable(road) {
            return Err(Error::Conflict(format!(
                "kind: {} is not offered: {why}",
                kind.as_str()
            )));
        }
        let target = road
            .check(self, Owner::Person, &target)
            .map_err(Error::Invalid)?;
        let needs_code = road.info().needs_code;
        let secret = road.info().signed.then(new_token);
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
            "INSERT INTO contact_methods (user_id, kind, name, target, p256dh, auth, verified_at, created_at, signing_secret, provider) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING {COLUMNS}"
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
        .bind(&provider)
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
            ..self.listed(row, actor)
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
        let target = self.counted_as(row.kind, &row.target);
        self.reserve_test(actor.user_id, &format!("{}:{target}", row.kind.as_str()))
            .await?;
        let to = self
            .method_to(method_id, format!("test-{method_id}-{}", self.now()))
            .await?;
        match self.send_now(row.kind.as_str(), &to, &Message::Test).await {
            Err(SendNowError::Gone(why)) => {
                // A subscription the browser dropped: forgotten as a page finding it gone would.
                let mut tx = self.db.begin().await?;
                crate::paging::forget_gone(&mut tx, method_id).await?;
                tx.commit().await?;
                return Err(Error::PushFailed(why));
            }
            sent => sent?,
        }
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
            return Ok(self.listed(row, actor));
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
        let needs_code = self
            .roads
            .get(found.row.kind.as_str())
            .is_some_and(|r| r.info().needs_code);
        if !needs_code || found.row.verified_at.is_some() {
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
        // Refused before a code is counted or stored, when this install cannot send it.
        self.roads.usable(kind.as_str()).map_err(Error::Conflict)?;
        self.reserve(Attempt::CodeMailForUser, &user_id.to_string())
            .await?;
        // Counted by the target's hash (a webhook's URL can hold a credential), an address by
        // the mailbox it reaches however it is written.
        let counted = self.counted_as(kind, &target);
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
        let to = self
            .method_to(method_id, format!("verify-{method_id}-{now}"))
            .await?;
        self.send_now(kind.as_str(), &to, &Message::Code(&code))
            .await
            .map_err(Error::from)
    }

    /// The provider a new phone method names, checked against this install's: `None` for the
    /// default (and for every other road).
    fn chosen_provider(&self, road: &Road) -> Result<Option<String>> {
        let (named, ringing) = match road {
            Road::Sms { provider, .. } => (provider, false),
            Road::Voice { provider, .. } => (provider, true),
            _ => return Ok(None),
        };
        match named.as_deref() {
            None => Ok(None),
            Some(name) if self.roads.phones.offers(name, ringing) => Ok(Some(name.to_string())),
            Some(name) => Err(Error::Invalid(format!(
                "provider: {name} is not a phone provider of this install that can {}",
                if ringing { "call" } else { "text" }
            ))),
        }
    }

    /// A target as rate limits count it (`Road::counted_as`).
    fn counted_as(&self, kind: ContactKind, target: &str) -> String {
        match self.roads.get(kind.as_str()) {
            Some(road) => road.counted_as(target),
            None => target.to_string(),
        }
    }

    /// Where a message to the method goes, read now.
    async fn method_to(&self, method_id: i64, delivery: String) -> Result<To> {
        let method: crate::paging::Method = sqlx::query_as(&format!(
            "SELECT {} FROM contact_methods m JOIN users u ON u.id = m.user_id WHERE m.id = $1",
            crate::paging::METHOD_COLUMNS
        ))
        .bind(method_id)
        .fetch_one(&self.db.pool)
        .await?;
        Ok(method.to(delivery))
    }
}
